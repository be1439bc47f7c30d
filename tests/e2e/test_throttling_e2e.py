"""Reserved concurrency throttles on the embedded stack as it does on AWS, end to end.

Parse tier 1 reserves one concurrent execution here, and the state machine's retry waits
are scaled to nothing, so a throttled step spends its whole throttle window (the
definition's retrier for ``Lambda.TooManyRequestsException``) at once. A parse that holds
tier 1's only slot (it waits at a gate the test opens) makes every other document that
reaches tier 1 meanwhile a throttled one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from richdoc_tools.local.events import wait_until

from richdoc.contracts import ParseInput
from richdoc.jobs import JobStatus
from richdoc.taxonomy import FailureKind
from tests.support.gates import Gate
from tests.support.parse_inputs import docx_bytes
from tests.support.stack_runs import history, upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

THROTTLE = "Lambda.TooManyRequestsException"


@pytest.fixture(scope="module")
def narrow_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    with EmbeddedStack(
        parameters={"ParseTier1ReservedConcurrency": "1"},
        retry_delay_scale=0.0,
        retry_visibility_s=0,
        log_path=log_path,
        schedules=False,
    ) as stack:
        yield stack


@pytest.fixture
def held_parse(patch_parse: Callable[..., None]) -> Iterator[Gate]:
    """The first parse waits at the gate, holding tier 1's slot; the others go through."""
    gate = Gate()

    def first_waits(event: ParseInput, real: Callable[..., Any], **kwargs: Any) -> Any:
        if gate.arrivals == 0:
            gate.wait_here()
        return real(event, **kwargs)

    patch_parse(first_waits)
    yield gate
    gate.open()


def test_a_burst_beyond_the_throttle_window_is_dead_lettered_as_transient(
    narrow_stack: Any, held_parse: Gate
) -> None:
    stack = narrow_stack
    first = upload(stack, "burst/first.docx", docx_bytes(["holds tier 1"]))
    assert held_parse.reached(120)
    burst = [upload(stack, f"burst/{n}.docx", docx_bytes([f"burst {n}"])) for n in range(3)]

    def ended(job_ids: list[str]) -> bool:
        statuses = stack.jobs.statuses(job_ids)
        return len(statuses) == len(job_ids) and all(s.terminal for s in statuses.values())

    assert wait_until(lambda: ended(burst), 120)
    held_parse.open()
    jobs = stack.wait_for_jobs([first, *burst], 120)
    assert jobs[first] is not None and jobs[first].status is JobStatus.SUCCEEDED
    for job_id in burst:
        job = jobs[job_id]
        assert job is not None and job.status is JobStatus.DEAD_LETTERED, job
        assert job.failure is not None
        assert (job.failure.kind, job.failure.error) == (FailureKind.TRANSIENT, THROTTLE)
        events = history(stack, job.execution_arn)
        throttled = [
            e["lambdaFunctionFailedEventDetails"]
            for e in events
            if e.get("lambdaFunctionFailedEventDetails", {}).get("error") == THROTTLE
        ]
        # The retrier's eight attempts, each refused before any handler ran.
        assert len(throttled) == 8
        assert "Status Code: 429; Error Code: TooManyRequestsException" in throttled[0]["cause"]
    assert stack.runtime.reserved.throttled["ParseTier1Function"] >= 8 * len(burst)
