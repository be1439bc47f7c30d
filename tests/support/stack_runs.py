"""Driving the embedded stack the way the end-to-end tests and the benchmarks do: start
one for a test module, upload, wait for the job, read its execution, its history and its
dead letters."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.runtime.lambdas import FUNCTION_THREAD_PREFIX
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import PageSpan
from richdoc.jobs import Attempt, Job
from tests.support.admission import admission_state

if TYPE_CHECKING:
    import pytest


@contextmanager
def module_stack(
    tmp_path_factory: pytest.TempPathFactory, parameters: Mapping[str, str] | None = None
) -> Iterator[Any]:
    """An embedded stack as a test module's fixture starts one: retries without delay, its
    schedules fired only by ``fire_schedules``, its functions' log in a temporary file;
    ``parameters`` override the template's as a deploy does."""
    from richdoc_tools.local.stack import EmbeddedStack

    from tests.support.stack_settings import TEST_STACK

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    settings = replace(TEST_STACK, log_path=log_path, parameters=parameters or {})
    with EmbeddedStack(settings) as stack:
        yield stack


def upload(stack: Any, key: str, body: bytes) -> str:
    """Put ``body`` at ``key`` in the ingest bucket; the id of the job it makes."""
    job_id: str = stack.upload(Path(key), key=key, body=body).job_id
    return job_id


def job_of(stack: Any, job_id: str) -> Job:
    job = stack.jobs.get(job_id)
    assert job is not None, f"no job {job_id}"
    return job


def run_one(
    stack: Any, name: str, body: bytes, *, clarify: bool = False, timeout_s: float = 120
) -> Job:
    upload = stack.upload(
        Path(name),
        key=name,
        body=body,
        metadata={"richdoc-clarify": "true" if clarify else "false"},
    )
    job = stack.wait_for_jobs([upload.job_id], timeout_s)[upload.job_id]
    assert job is not None and job.status.terminal, admission_state(stack, upload.job_id)
    return job


def run_pdf(stack: Any, key: str, body: bytes, *, timeout_s: float = 300) -> Job:
    upload = stack.upload(Path(key), key=key, body=body, metadata={"richdoc-clarify": "true"})
    job = stack.wait_for_jobs([upload.job_id], timeout_s)[upload.job_id]
    assert job is not None and job.status.terminal, admission_state(stack, upload.job_id)
    return job


def execution(stack: Any, job: Job) -> dict[str, Any]:
    sfn = stack.client("stepfunctions")
    arn = (
        f"{stack.outputs['StateMachineArn'].replace(':stateMachine:', ':execution:')}:"
        f"{job.job_id}-r{job.run}"
    )
    assert wait_until(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", 30)
    described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
    return described


def history(stack: Any, execution_arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    paginator = stack.client("stepfunctions").get_paginator("get_execution_history")
    for page in paginator.paginate(executionArn=execution_arn):
        events.extend(page["events"])
    return events


def states_entered(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e
    ]


def largest_payload(events: list[dict[str, Any]]) -> int:
    """The largest state input or output in an execution's history, in bytes: what
    Step Functions holds against its 262,144-byte limit."""
    return max(
        len(details[field].encode())
        for event in events
        for details in event.values()
        if isinstance(details, dict)
        for field in ("input", "output", "parameters")
        if isinstance(details.get(field), str)
    )


def dead_letters_for(stack: Any, job_id: str) -> list[dict[str, Any]]:
    sqs = stack.client("sqs")
    found, receipts = [], []
    while True:
        batch = sqs.receive_message(
            QueueUrl=stack.outputs["DeadLetterQueueUrl"],
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            VisibilityTimeout=30,
        ).get("Messages", [])
        if not batch:
            break
        for m in batch:
            receipts.append(m["ReceiptHandle"])
            attrs = m.get("MessageAttributes", {})
            if attrs.get("richdoc.job_id", {}).get("StringValue") == job_id:
                found.append(m)
    for receipt in receipts:
        sqs.change_message_visibility(
            QueueUrl=stack.outputs["DeadLetterQueueUrl"], ReceiptHandle=receipt, VisibilityTimeout=0
        )
    return found


def outcomes(stack: Any, job: Job) -> list[tuple[str, int | None, str]]:
    return [(a.stage, a.tier, a.outcome) for a in stack.jobs.attempts.of_job(job.job_id, job.run)]


def shard_attempts(stack: Any, job: Job, run: int | None = None) -> dict[str, list[Attempt]]:
    """The run's parse attempts by shard, in page order."""
    found: dict[PageSpan, list[Attempt]] = {}
    for attempt in stack.jobs.attempts.of_job(job.job_id, run or job.run):
        if attempt.stage == "parse":
            assert attempt.pages is not None, "a sharded run parses no whole document"
            found.setdefault(attempt.pages, []).append(attempt)
    return {str(pages): found[pages] for pages in sorted(found, key=lambda p: p.start)}


def wait_for_handlers(stack: Any) -> None:
    """Handlers the state machine no longer waits for (shards still running when the Map
    failed, a task of a stopped execution) finish on their own threads: wait."""

    def idle() -> bool:
        return not any(t.name.startswith(FUNCTION_THREAD_PREFIX) for t in threading.enumerate())

    assert wait_until(idle, 120)
