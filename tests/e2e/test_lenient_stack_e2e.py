"""``strict=False`` (``--lenient``): the embedded stack with moto's leniency, for
debugging. A module of its own: it starts its own stack (moto mocks nest)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from richdoc_tools.local.stack import EmbeddedStack

from richdoc.jobs import JobStatus
from tests.support.stack_runs import run_one
from tests.support.stack_settings import TEST_STACK

pytestmark = [pytest.mark.e2e, pytest.mark.docling]

NOTE = b"# lenient\n\nOn 2024-03-01 the policy took effect.\n"


def test_a_lenient_stack_enforces_none_of_it(tmp_path: Path) -> None:
    with EmbeddedStack(
        replace(TEST_STACK, log_path=tmp_path / "functions.log", strict=False)
    ) as lenient:
        assert lenient.access is None  # no role assumed: every call is an operator's
        sqs = lenient.client("sqs")
        sqs.send_message(QueueUrl=lenient.outputs["DeadLetterQueueUrl"], MessageBody="a\x01b")
        s3 = lenient.client("s3")
        s3.put_object(Bucket=lenient.outputs["ArtifactBucketName"], Key="k" * 1025, Body=b"x")
        job = run_one(lenient, "lenient/note.md", NOTE)
        assert job.status is JobStatus.SUCCEEDED
