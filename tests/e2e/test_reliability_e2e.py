"""No job lost, no failure misrouted, end to end through the real state machine on the
embedded stack: a job is DEAD_LETTERED only once its dead-letter message is on the queue,
exactly one message per dead-lettered run, whatever fails on the way — the dead-letter send
(scripted SQS errors), the reconciler (scripted Lambda errors, its failures reaching the
failure queue), or the status event itself (a job left RUNNING) — with the sweep as the
last backstop. The stack's schedules are off: each test fires the sweep itself, at a time
past the workflow timeout, instead of waiting for it."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.faults.scripted import PlatformError, ServiceError
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ParseInput
from richdoc.jobs import DeadLetterMark, JobStatus
from richdoc.records.backstops import STATUS_CHANGE
from tests.support.parse_inputs import docx_bytes
from tests.support.stack_runs import history, job_of, states_entered, upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

DEAD_LETTER_QUEUE = "DeadLetterQueue"
# The state machine's dead-letter send tries 1 + 5 times (its Retry).
STATE_MACHINE_SEND_ATTEMPTS = 6
# Lambda's asynchronous invocation: 1 + MaximumRetryAttempts (2).
RECONCILE_ATTEMPTS = 3
PAST_THE_WORKFLOW_TIMEOUT = timedelta(hours=3, minutes=15)
OPEN = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED)


def _status_change(event: Any) -> bool:
    return isinstance(event, dict) and event.get("detail-type") == STATUS_CHANGE


# ---- helpers ------------------------------------------------------------------------------


def execution_of(stack: Any, job_id: str) -> dict[str, Any] | None:
    job = stack.jobs.get(job_id)
    if job is None or job.execution_arn is None:
        return None
    sfn = stack.client("stepfunctions")
    try:
        described: dict[str, Any] = sfn.describe_execution(executionArn=job.execution_arn)
    except sfn.exceptions.ExecutionDoesNotExist:
        return None
    return described


def ended(stack: Any, job_id: str) -> bool:
    execution = execution_of(stack, job_id)
    return execution is not None and execution["status"] != "RUNNING"


def peek(stack: Any, queue_url: str) -> list[dict[str, Any]]:
    """Every message on a queue, left there (visible again at once)."""
    sqs = stack.client("sqs")
    found: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            VisibilityTimeout=30,
        ).get("Messages", [])
        if not batch:
            break
        found.extend(batch)
    for message in found:
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    return found


def dead_letters_by_run(stack: Any) -> Counter[tuple[str, int]]:
    """How many dead-letter messages each (job id, run) has."""
    counts: Counter[tuple[str, int]] = Counter()
    for message in peek(stack, stack.outputs["DeadLetterQueueUrl"]):
        attributes = message.get("MessageAttributes", {})
        if "richdoc.job_id" in attributes:
            key = (
                attributes["richdoc.job_id"]["StringValue"],
                int(attributes["richdoc.run"]["StringValue"]),
            )
            counts[key] += 1
    return counts


def letters_of(stack: Any, job_id: str) -> list[dict[str, Any]]:
    return [
        m
        for m in peek(stack, stack.outputs["DeadLetterQueueUrl"])
        if m.get("MessageAttributes", {}).get("richdoc.job_id", {}).get("StringValue") == job_id
    ]


def reconcile_failures(stack: Any) -> list[dict[str, Any]]:
    """The invocation records on the failure queue (Lambda's OnFailure destination)."""
    messages = peek(stack, stack.outputs["ReconcileFailureQueueUrl"])
    return [json.loads(m["Body"]) for m in messages]


def failed_reconcile_of(stack: Any, job_id: str) -> dict[str, Any] | None:
    for record in reconcile_failures(stack):
        payload = record["requestPayload"]
        if _status_change(payload) and payload["detail"]["name"].startswith(job_id):
            return record
    return None


def sweep(stack: Any) -> None:
    """One scheduled sweep, as if it ran after the workflow timeout (done on return)."""
    # The sweep, and the dispatcher's minutely backstop beside it.
    assert stack.fire_schedules(at=datetime.now(UTC) + PAST_THE_WORKFLOW_TIMEOUT) == 2


def drain(stack: Any, queue_url: str) -> None:
    """Delete every message (PurgeQueue is allowed once a minute)."""
    sqs = stack.client("sqs")
    while batch := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
        "Messages", []
    ):
        for message in batch:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def empty_failure_queue(stack: Any) -> Iterator[None]:
    drain(stack, stack.outputs["ReconcileFailureQueueUrl"])
    yield
    drain(stack, stack.outputs["ReconcileFailureQueueUrl"])


def corrupt(name: str) -> bytes:
    return b"not a zip archive: " + name.encode()


# ---- the dead-letter send fails ------------------------------------------------------------


def test_a_dead_letter_send_that_fails_and_recovers_is_retried_by_the_state_machine(
    stack: Any,
) -> None:
    stack.script.fail_sends(DEAD_LETTER_QUEUE, *[ServiceError()] * 3)
    job_id = upload(stack, "reliability/retried-send.docx", corrupt("retried"))
    job = stack.wait_for_jobs([job_id], 120)[job_id]
    assert job is not None and job.status is JobStatus.DEAD_LETTERED
    assert stack.script.pending_sends(DEAD_LETTER_QUEUE) == 0
    # The job is terminal at MarkDeadLettered; the execution ends two states later.
    assert wait_until(lambda: ended(stack, job_id), 60)
    events = history(stack, job.execution_arn)
    sends = [
        e["type"]
        for e in events
        if e["type"] in ("TaskFailed", "TaskSucceeded")
        and (e.get("taskFailedEventDetails") or e.get("taskSucceededEventDetails") or {}).get(
            "resourceType"
        )
        == "sqs"
    ]
    assert sends == ["TaskFailed"] * 3 + ["TaskSucceeded"]
    assert states_entered(events)[-3:] == ["MarkDeadLettered", "FailureKind", "CorruptInput"]
    [letter] = letters_of(stack, job_id)
    assert job.dead_letter == DeadLetterMark(
        message_id=letter["MessageId"], sent_by="state-machine"
    )
    assert job.failure is not None and job.failure.kind == "corrupt_input"


def test_a_send_that_outlasts_the_state_machine_is_sent_once_by_the_reconciler(
    stack: Any,
) -> None:
    stack.script.fail_sends(DEAD_LETTER_QUEUE, *[ServiceError()] * STATE_MACHINE_SEND_ATTEMPTS)
    job_id = upload(stack, "reliability/reconciled-send.docx", corrupt("reconciled"))
    job = stack.wait_for_jobs([job_id], 120)[job_id]
    assert job is not None and job.status is JobStatus.DEAD_LETTERED
    execution = execution_of(stack, job_id)
    assert execution is not None
    assert (execution["status"], execution["error"]) == ("FAILED", "dead_letter_pending")
    assert "MarkDeadLettered" not in states_entered(history(stack, job.execution_arn))
    [letter] = letters_of(stack, job_id)
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="reconciler")
    # The failure is the run's own, not an internal one the reconciler made up.
    assert job.failure is not None and job.failure.kind == "corrupt_input"
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == "corrupt_input"


def test_a_send_that_keeps_failing_leaves_the_job_failed_until_the_sweep(
    stack: Any, empty_failure_queue: None
) -> None:
    stack.script.fail_sends(
        DEAD_LETTER_QUEUE, *[ServiceError()] * (STATE_MACHINE_SEND_ATTEMPTS + RECONCILE_ATTEMPTS)
    )
    job_id = upload(stack, "reliability/unsendable.docx", corrupt("unsendable"))
    # The reconciler tried three times, then Lambda recorded it on the failure queue.
    assert wait_until(lambda: failed_reconcile_of(stack, job_id) is not None, 120)
    record = failed_reconcile_of(stack, job_id)
    assert record is not None
    assert record["requestContext"]["condition"] == "RetriesExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == RECONCILE_ATTEMPTS
    assert "(InternalError)" in record["responsePayload"]["errorMessage"]  # the scripted one
    # Not terminal, and visible to an operator (served by the status index).
    job = job_of(stack, job_id)
    assert job.status is JobStatus.FAILED and job.dead_letter is None
    assert job_id in {j.job_id for j in stack.jobs.list_jobs(JobStatus.FAILED)}
    assert letters_of(stack, job_id) == []
    assert stack.script.pending_sends(DEAD_LETTER_QUEUE) == 0  # SQS is back

    sweep(stack)
    job = job_of(stack, job_id)
    assert job.status is JobStatus.DEAD_LETTERED
    [letter] = letters_of(stack, job_id)
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="sweep")
    assert job.failure is not None and job.failure.kind == "corrupt_input"


# ---- the reconciler fails ------------------------------------------------------------------


def test_a_failing_reconciler_reaches_the_failure_queue_and_the_sweep_closes_the_job(
    stack: Any, tmp_path: Path, empty_failure_queue: None
) -> None:
    # RecordStart and then RecordFailure die on the platform: the execution fails with
    # the job still QUEUED, and every attempt of its reconcile fails too.
    stack.script.add(
        "RecordsFunction",
        PlatformError("Lambda.Unknown", "sandbox lost"),
        PlatformError("Lambda.Unknown", "sandbox lost"),
        when=lambda event: isinstance(event, dict) and event.get("action") in ("start", "fail"),
    )
    stack.script.add(
        "RecordsFunction",
        *[PlatformError("Lambda.ServiceException", "service unavailable")] * RECONCILE_ATTEMPTS,
        when=_status_change,
    )
    job_id = upload(stack, "reliability/orphan.md", b"# orphan\n")
    assert wait_until(lambda: failed_reconcile_of(stack, job_id) is not None, 120)
    record = failed_reconcile_of(stack, job_id)
    assert record is not None
    assert record["requestPayload"]["detail"]["status"] == "FAILED"
    assert record["responsePayload"]["errorType"] == "Lambda.ServiceException"
    assert job_of(stack, job_id).status is JobStatus.QUEUED  # nobody closed it

    sweep(stack)
    job = job_of(stack, job_id)
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert (job.failure.kind, job.failure.error) == ("internal", "Execution.FAILED")
    [letter] = letters_of(stack, job_id)
    assert json.loads(letter["Body"])["Records"][0]["s3"]["object"]["key"] == (
        "reliability%2Forphan.md"
    )
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="sweep")


# ---- the status event is lost ----------------------------------------------------------------


@pytest.fixture
def blocked_parse(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Parse waits until released (a document that never finishes converting)."""
    import richdoc.parse.step

    release = threading.Event()
    real = richdoc.parse.step.parse_request

    def blocked(event: ParseInput, **kwargs: Any) -> Any:
        release.wait(60)
        return real(event, **kwargs)

    monkeypatch.setattr(richdoc.parse.step, "parse_request", blocked)
    yield release
    release.set()


@pytest.fixture
def lost_status_events(stack: Any) -> Iterator[None]:
    """The reconciler's rule disabled: executions end with no status event delivered."""
    events = stack.client("events")
    [rule] = [
        r["Name"]
        for r in events.list_rules()["Rules"]
        if STATUS_CHANGE in r.get("EventPattern", "")
    ]
    events.disable_rule(Name=rule)
    yield
    events.enable_rule(Name=rule)


def test_the_sweep_leaves_a_job_whose_execution_still_runs(
    stack: Any, blocked_parse: threading.Event
) -> None:
    job_id = upload(stack, "reliability/slow.docx", docx_bytes(["slow"]))

    def parsing() -> bool:
        job = stack.jobs.get(job_id)
        return job is not None and (job.status, job.stage) == (JobStatus.RUNNING, "parse")

    assert wait_until(parsing, 60)
    sweep(stack)  # long past the timeout by the schedule's clock, but the execution runs
    assert job_of(stack, job_id).status is JobStatus.RUNNING
    blocked_parse.set()
    job = stack.wait_for_jobs([job_id], 120)[job_id]
    assert job is not None and job.status is JobStatus.SUCCEEDED, job.failure
    assert letters_of(stack, job_id) == []


def test_a_job_left_running_is_closed_by_the_sweep_once_its_execution_ended(
    stack: Any, lost_status_events: None
) -> None:
    # The failure path itself dies on the platform (no Catch takes Lambda.Unknown there),
    # so the execution ends FAILED with the job RUNNING; its status event is lost.
    stack.script.add(
        "RecordsFunction",
        PlatformError("Lambda.Unknown", "sandbox lost"),
        when=lambda event: isinstance(event, dict) and event.get("action") == "fail",
    )
    job_id = upload(stack, "reliability/stuck.docx", corrupt("stuck"))
    assert wait_until(lambda: ended(stack, job_id), 60)
    assert job_of(stack, job_id).status is JobStatus.RUNNING  # nobody closed it

    sweep(stack)
    job = job_of(stack, job_id)
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert (job.failure.kind, job.failure.error) == ("internal", "Execution.FAILED")
    assert [(a.stage, a.outcome) for a in stack.jobs.attempts.of_job(job_id, 1)] == [
        ("plan", "ok"),
        ("parse", "CorruptInput"),
        ("parse", "Execution.FAILED"),
    ]
    [letter] = letters_of(stack, job_id)
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="sweep")


# ---- the census ----------------------------------------------------------------------------


def test_a_burst_with_failing_sends_and_reconciles_ends_every_job_with_one_letter_per_run(
    stack: Any, empty_failure_queue: None
) -> None:
    stack.script.fail_sends(DEAD_LETTER_QUEUE, *[ServiceError()] * 20)
    stack.script.add(
        "RecordsFunction",
        *[PlatformError("Lambda.ServiceException", "service unavailable")] * 5,
        when=_status_change,
    )
    good: list[str] = []
    bad: list[str] = []
    for i in range(30):
        if i % 2:
            bad.append(upload(stack, f"census/broken-{i}.docx", corrupt(f"census {i}")))
        elif i % 4:
            good.append(upload(stack, f"census/note-{i}.md", f"# Note {i}\n\nbody\n".encode()))
        else:
            good.append(upload(stack, f"census/report-{i}.docx", docx_bytes([f"report {i}"])))
    jobs = good + bad

    def settled(job_id: str) -> bool:
        """Closed, or its execution ended and the reconcile of it was given up on."""
        job = stack.jobs.get(job_id)
        if job is None:
            return False
        if job.status.terminal:
            return True
        return ended(stack, job_id) and failed_reconcile_of(stack, job_id) is not None

    assert wait_until(lambda: all(settled(j) for j in jobs), 300, interval_s=0.5)

    # The sweep runs every SweepIntervalMinutes until nothing is open.
    for _ in range(10):
        if not [j for j in jobs if job_of(stack, j).status in OPEN]:
            break
        sweep(stack)

    records = {j: job_of(stack, j) for j in jobs}
    assert Counter(str(job.status) for job in records.values()) == Counter(
        {"SUCCEEDED": len(good), "DEAD_LETTERED": len(bad)}
    )
    for status in OPEN:  # nothing left for an operator to chase
        assert not set(jobs) & {j.job_id for j in stack.jobs.list_jobs(status)}
    letters = dead_letters_by_run(stack)
    senders: Counter[str] = Counter()
    for job_id in bad:
        job = records[job_id]
        assert job.failure is not None and job.failure.kind == "corrupt_input", job.failure
        assert letters[(job_id, 1)] == 1, (job_id, job.dead_letter)
        assert job.dead_letter is not None
        senders[job.dead_letter.sent_by] += 1
    for job_id in good:
        assert letters[(job_id, 1)] == 0
    # The faults were really exercised: every scripted send failure was consumed, and
    # the state machine did not send every message itself.
    assert stack.script.pending_sends(DEAD_LETTER_QUEUE) == 0
    assert set(senders) <= {"state-machine", "reconciler", "sweep"}
    assert senders["state-machine"] < len(bad), senders
