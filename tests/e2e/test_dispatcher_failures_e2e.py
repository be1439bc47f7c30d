"""The dispatcher's stream mapping when the dispatcher keeps failing on a job change: the
batch is halved down to that change (``BisectBatchOnFunctionError``), retried
``MaximumRetryAttempts`` times, then Lambda's record of it goes to ``DispatchFailureQueue``
and the mapping moves on; the job it would have admitted waits QUEUED, durably, and the
dispatcher's minutely run admits it. Nothing is lost.

Waits are on observable conditions: a message on the failure queue, the job's terminal
record, every slot back."""

from __future__ import annotations

from typing import Any

import pytest
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.runtime.events import wait_until

from richdoc.jobs import JobStatus
from tests.support.admission import slots_back
from tests.support.queues import drained
from tests.support.stack_runs import job_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 300
POISONED = "dispatch/poisoned.md"


def failure_records(stack: Any) -> list[dict[str, Any]]:
    return drained(stack.client("sqs"), stack.outputs["DispatchFailureQueueUrl"])


def test_a_change_the_dispatcher_keeps_failing_on_is_recorded_and_its_job_admitted_later(
    stack: Any,
) -> None:
    crash = PlatformError("Runtime.ExitError", "Runtime exited with error: signal: killed")
    stack.script.add("DispatcherFunction", *[crash] * 1000, when=lambda e: POISONED in str(e))
    job_id = upload(stack, POISONED, b"# Poisoned\n\nThe dispatcher fails on its change.\n")
    records: list[dict[str, Any]] = []

    def recorded() -> bool:
        records.extend(failure_records(stack))
        return bool(records)

    assert wait_until(recorded, TIMEOUT_S)
    for record in records:
        assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
        batch = record["DDBStreamBatchInfo"]
        assert batch["streamArn"] == stack.jobs_stream_arn
        # Halved down to the change it failed on: one record.
        assert batch["startSequenceNumber"] == batch["endSequenceNumber"]
        assert batch["batchSize"] == 1
    assert job_of(stack, job_id).status is JobStatus.QUEUED  # waiting, durably

    stack.script.clear()  # the cause is fixed; the minutely run catches up
    stack.fire_schedules()
    job = stack.wait_for_jobs([job_id], TIMEOUT_S)[job_id]
    assert job is not None and job.status is JobStatus.SUCCEEDED, job
    assert wait_until(lambda: slots_back(stack), TIMEOUT_S)
    assert failure_records(stack) == []
