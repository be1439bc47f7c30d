"""A job's partition names the job: ``job_id_of`` undoes ``partition_key``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.jobs.keys import job_id_of, partition_key


@given(st.text(min_size=1))
def test_the_job_of_a_job_s_partition_is_that_job(job_id: str) -> None:
    assert job_id_of(partition_key(job_id)) == job_id


def test_a_partition_that_is_no_job_s_is_refused() -> None:
    with pytest.raises(ValueError, match="not a job's partition"):
        job_id_of("TENANT#acme")
