"""A job's partition names the job: ``job_id_of`` undoes ``partition_key``; a run's
execution ARN is its state machine's, named for the run."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.jobs.keys import execution_arn, job_id_of, partition_key


@given(st.text(min_size=1))
def test_the_job_of_a_job_s_partition_is_that_job(job_id: str) -> None:
    assert job_id_of(partition_key(job_id)) == job_id


def test_a_partition_that_is_no_job_s_is_refused() -> None:
    with pytest.raises(ValueError, match="not a job's partition"):
        job_id_of("TENANT#acme")


def test_a_runs_execution_arn_is_its_state_machines_with_the_runs_execution_name() -> None:
    machine = "arn:aws-cn:states:cn-north-1:123456789012:stateMachine:richdoc-pipeline"
    assert execution_arn(machine, "0123abcd", 2) == (
        "arn:aws-cn:states:cn-north-1:123456789012:execution:richdoc-pipeline:0123abcd-r2"
    )


def test_an_execution_arn_is_refused_an_arn_that_is_no_state_machines() -> None:
    with pytest.raises(ValueError, match="not a state machine's ARN"):
        execution_arn("arn:aws:states:us-east-1:123456789012:activity:parse", "0123abcd", 1)
