"""Reserved concurrency throttles on the embedded stack as it does on AWS, end to end, and
admission keeps a burst from ever meeting it.

Parse tier 1 reserves one concurrent execution here (so admission's derived capacity is
one slot), and the state machine's retry waits are scaled to nothing, so a throttled step
spends its whole throttle window (the definition's retrier for
``Lambda.TooManyRequestsException``) at once. Executions started directly, bypassing
admission, as the starter started every upload's before admission existed, meet the
throttle while a parse holds tier 1's one concurrent execution and are dead-lettered as
transient; the same burst dropped into the bucket waits in the backlog and succeeds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ExecutionInput, JobOptions, ParseInput, SourceObject
from richdoc.jobs import JobStatus
from richdoc.taxonomy import FailureKind
from tests.support.gates import Gate
from tests.support.parse_inputs import docx_bytes
from tests.support.stack_runs import history, upload
from tests.support.stack_settings import TEST_STACK

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

THROTTLE = "Lambda.TooManyRequestsException"


@pytest.fixture(scope="module")
def narrow_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    with EmbeddedStack(
        replace(TEST_STACK, parameters={"ParseTier1ReservedConcurrency": "1"}, log_path=log_path)
    ) as stack:
        yield stack


def _hold_first_parse(
    patch_parse: Callable[..., None], of_job: Callable[[str], bool]
) -> Iterator[Gate]:
    """The first parse of a job ``of_job`` accepts waits at the gate, holding tier 1's
    slot; every other parse goes through."""
    gate = Gate()

    def first_waits(event: ParseInput, real: Callable[..., Any], **kwargs: Any) -> Any:
        if gate.arrivals == 0 and of_job(event.job_id):
            gate.wait_here()
        return real(event, **kwargs)

    patch_parse(first_waits)
    yield gate
    gate.open()


@pytest.fixture
def held_parse(patch_parse: Callable[..., None]) -> Iterator[Gate]:
    yield from _hold_first_parse(patch_parse, lambda job_id: True)


@pytest.fixture
def held_direct_parse(patch_parse: Callable[..., None]) -> Iterator[Gate]:
    yield from _hold_first_parse(patch_parse, lambda job_id: job_id.startswith(DIRECT))


DIRECT = "direct-"


def _start_directly(stack: Any, key: str, body: bytes) -> str:
    """A job and its execution, started without admission (as the starter did before).

    The upload makes its own job too, through admission; the direct one starts once that
    job has ended, so the two never race for tier 1's slot."""
    upload = stack.upload(Path(key), key=key, body=body)
    own = stack.wait_for_jobs([upload.job_id], 120)[upload.job_id]
    assert own is not None and own.status.terminal, own
    source = SourceObject(bucket=upload.bucket, key=key, version_id=upload.version_id)
    job_id = f"{DIRECT}{upload.job_id}"
    message = json.dumps({"note": "started by hand"})
    assert stack.jobs.create(job_id, source, JobOptions(), message=message)  # no tenant
    execution_input = ExecutionInput(
        job_id=job_id, run=1, source=source, options=JobOptions(), message=message
    )
    stack.client("stepfunctions").start_execution(
        stateMachineArn=stack.outputs["StateMachineArn"],
        name=f"{job_id}-r1",
        input=json.dumps(execution_input.model_dump(mode="json")),
    )
    return job_id


def test_executions_started_beyond_the_throttle_window_are_dead_lettered_as_transient(
    narrow_stack: Any, held_direct_parse: Gate
) -> None:
    stack = narrow_stack
    first = _start_directly(stack, "burst/first.docx", docx_bytes(["holds tier 1"]))
    assert held_direct_parse.reached(120)
    burst = [
        _start_directly(stack, f"burst/{n}.docx", docx_bytes([f"burst {n}"])) for n in range(3)
    ]

    def ended(job_ids: list[str]) -> bool:
        statuses = stack.jobs.statuses(job_ids)
        return len(statuses) == len(job_ids) and all(s.terminal for s in statuses.values())

    assert wait_until(lambda: ended(burst), 120)
    held_direct_parse.open()
    jobs = stack.wait_for_jobs([first, *burst], 120)
    assert jobs[first] is not None and jobs[first].status is JobStatus.SUCCEEDED
    for job_id in burst:
        job = jobs[job_id]
        assert job is not None and job.status is JobStatus.DEAD_LETTERED, job
        assert job.failure is not None
        assert (job.failure.kind, job.failure.error) == (FailureKind.TRANSIENT, THROTTLE)
        machine = stack.outputs["StateMachineArn"]
        events = history(stack, machine.replace(":stateMachine:", ":execution:") + f":{job_id}-r1")
        throttled = [
            e["lambdaFunctionFailedEventDetails"]
            for e in events
            if e.get("lambdaFunctionFailedEventDetails", {}).get("error") == THROTTLE
        ]
        # The retrier's eight attempts, each refused before any handler ran.
        assert len(throttled) == 8
        assert "Status Code: 429; Error Code: TooManyRequestsException" in throttled[0]["cause"]
    assert stack.runtime.reserved.throttled["ParseTier1Function"] >= 8 * len(burst)


def test_the_same_burst_through_the_bucket_waits_for_its_slot_and_never_meets_a_throttle(
    narrow_stack: Any, held_parse: Gate
) -> None:
    stack = narrow_stack
    throttled = stack.runtime.reserved.throttled["ParseTier1Function"]
    first = upload(stack, "bucket/first.docx", docx_bytes(["holds tier 1"]))
    assert held_parse.reached(120)
    burst = [upload(stack, f"bucket/{n}.docx", docx_bytes([f"burst {n}"])) for n in range(3)]
    assert wait_until(lambda: len(stack.jobs.statuses(burst)) == len(burst), 60)
    waiting = stack.jobs.get_many(burst)
    assert all(job.waiting for job in waiting.values())  # QUEUED, no execution
    held_parse.open()
    jobs = stack.wait_for_jobs([first, *burst], 300)
    assert all(job is not None and job.status is JobStatus.SUCCEEDED for job in jobs.values())
    assert stack.runtime.reserved.throttled["ParseTier1Function"] == throttled
