"""The job lifecycle in the records (richdoc.jobs, richdoc.records, richdoc.ingest) on
emulated DynamoDB, SQS and Step Functions: a cancel serialised with the run's own writes
(whichever commits first wins), the backstops closing a cancelled run without a dead
letter, the phase each transition writes, the finished shards counted once, the redrive
request, and the starter facing a cancelled job."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger, Metrics

from richdoc.admission.backlog import Backlog
from richdoc.contracts import JobOptions, PageSpan, StepName
from richdoc.ingest import Starter, StartOutcome
from richdoc.jobs import (
    CANCELLED_OUTCOME,
    Job,
    JobCancelled,
    JobPhase,
    JobStatus,
    JobStore,
    StaleRun,
    job_id_for,
)
from richdoc.records.actions import Actions
from richdoc.records.backstops import Backstops, ExecutionStatusChangeEvent
from richdoc.records.calls import CaughtError, FailedAt, Reconciled, RecordFailure, ScheduledSweep
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import COUNTS, OUTPUTS, SOURCE
from tests.support.s3_events import BUCKET, s3_notification

JOB = "job-1"
MESSAGE = s3_notification("contract.docx")
WORKFLOW_TIMEOUT = timedelta(hours=3)


def _job(store: JobStore, job_id: str = JOB) -> Job:
    job = store.get(job_id)
    assert job is not None
    return job


@pytest.fixture
def running(job_store: JobStore) -> JobStore:
    assert job_store.create(JOB, SOURCE, JobOptions(), message=MESSAGE)
    job_store.mark_running(JOB, 1, "arn:aws:states:us-east-1:123456789012:execution:p:job-1-r1")
    return job_store


# ---- cancel and the run's own writes: whichever commits first wins ---------------------------


def test_a_cancel_commits_who_when_and_why_in_one_write(running: JobStore) -> None:
    job = running.cancel(JOB, 1, by="arn:aws:iam::1:user/ops", reason="wrong file")
    assert (job.status, job.phase, job.run) == (JobStatus.CANCELLED, JobPhase.CANCELLED, 1)
    assert job.cancel is not None
    assert (job.cancel.by, job.cancel.reason, job.cancel.closed_at) == (
        "arn:aws:iam::1:user/ops",
        "wrong file",
        None,
    )
    assert job.ended_at == job.cancel.requested_at


@pytest.mark.parametrize(
    "write",
    [
        lambda s: s.mark_running(JOB, 1, "arn:x"),
        lambda s: s.attempts.open(JOB, 1, "parse", tier=1),
        lambda s: s.shard_done(JOB, 1, "1-50"),
        lambda s: s.mark_recording(JOB, 1),
        lambda s: s.succeed(JOB, 1, outputs=OUTPUTS, counts=COUNTS, pipeline="p"),
        lambda s: s.record_failure(JOB, 1, Failure(FailureKind.INTERNAL, "boom")),
    ],
    ids=["start", "attempt", "shard", "recording", "succeed", "fail"],
)
def test_a_cancelled_run_is_refused_every_later_write(running: JobStore, write: Any) -> None:
    running.cancel(JOB, 1, by="ops")
    before = running.table.get_item(Key={"pk": f"JOB#{JOB}", "sk": "JOB"})["Item"]
    with pytest.raises(JobCancelled):
        write(running)
    assert running.table.get_item(Key={"pk": f"JOB#{JOB}", "sk": "JOB"})["Item"] == before
    assert running.attempts.of_job(JOB) == []


def test_a_stale_run_is_refused_as_stale_not_as_cancelled(running: JobStore) -> None:
    running.cancel(JOB, 1, by="ops")
    with pytest.raises(StaleRun) as refused:
        running.mark_running(JOB, 2, "arn:x")
    assert not isinstance(refused.value, JobCancelled)


@pytest.mark.parametrize("finish", ["succeed", "fail", "dead_letter"])
def test_a_run_that_finished_first_refuses_the_cancel(running: JobStore, finish: str) -> None:
    if finish == "succeed":
        running.succeed(JOB, 1, outputs=OUTPUTS, counts=COUNTS, pipeline="p")
    else:
        running.record_failure(JOB, 1, Failure(FailureKind.CORRUPT_INPUT, "not a zip"))
        if finish == "dead_letter":
            running.mark_dead_lettered(JOB, 1, "m-1", sent_by="state-machine")
    with pytest.raises(StaleRun):
        running.cancel(JOB, 1, by="ops")
    assert _job(running).cancel is None


def test_a_queued_job_can_be_cancelled_before_its_execution_starts(job_store: JobStore) -> None:
    job_store.create(JOB, SOURCE, JobOptions(), message=MESSAGE)
    assert job_store.cancel(JOB, 1, by="ops").status is JobStatus.CANCELLED


def test_the_next_run_of_a_cancelled_job_starts_clean(running: JobStore) -> None:
    running.record_shards(JOB, 1, 3)
    running.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    running.shard_done(JOB, 1, PageSpan.parse("1-50"))
    running.cancel(JOB, 1, by="ops", reason="later")
    assert running.start_next_run(JOB, 1, execution_arn="arn:x:job-1-r2") == 2
    job = _job(running)
    assert (job.status, job.run, job.phase) == (JobStatus.QUEUED, 2, JobPhase.QUEUED)
    assert (job.cancel, job.shards, job.shards_done, job.ended_at) == (None, None, None, None)


# ---- the phase each transition writes -------------------------------------------------------


def test_each_transition_writes_the_phase_the_run_is_in(job_store: JobStore) -> None:
    phases = []

    def seen() -> None:
        phases.append(_job(job_store).phase)

    job_store.create(JOB, SOURCE, JobOptions(), message=MESSAGE)
    seen()
    job_store.mark_running(JOB, 1, "arn:x")
    seen()
    steps: list[tuple[StepName, PageSpan | None]] = [
        ("plan", None),
        ("parse", PageSpan.parse("1-50")),
        ("parse", None),
        ("merge", None),
        ("project", None),
        ("detect", None),
    ]
    for stage, pages in steps:
        job_store.attempts.open(JOB, 1, stage, tier=1 if stage == "parse" else None, pages=pages)
        seen()
    job_store.mark_recording(JOB, 1)
    seen()
    job_store.succeed(JOB, 1, outputs=OUTPUTS, counts=COUNTS, pipeline="p")
    seen()
    assert phases == [
        JobPhase.QUEUED,
        JobPhase.PLANNING,
        JobPhase.PLANNING,
        JobPhase.PARSING_SHARDS,
        JobPhase.PARSING,
        JobPhase.MERGING,
        JobPhase.PROJECTING,
        JobPhase.DETECTING,
        JobPhase.RECORDING,
        JobPhase.SUCCEEDED,
    ]


def test_a_failed_run_is_dead_lettering_then_dead_lettered(running: JobStore) -> None:
    running.record_failure(JOB, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert _job(running).phase is JobPhase.DEAD_LETTERING
    running.mark_dead_lettered(JOB, 1, "m-1", sent_by="state-machine")
    assert _job(running).phase is JobPhase.DEAD_LETTERED


def test_a_finished_shard_counts_once_however_often_it_finishes(running: JobStore) -> None:
    running.record_shards(JOB, 1, 3)
    running.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    for pages in ("1-50", "1-50", "51-100", "1-50"):  # a retry, a cached shard
        running.shard_done(JOB, 1, PageSpan.parse(pages))
    progress = _job(running).progress()
    assert (progress.shards, progress.shards_done, progress.pages_done) == (3, 2, 100)
    states = running.progress_of([JOB, "no-such-job"])
    assert states == {JOB: (JobStatus.RUNNING, progress)}


# ---- the redrive request --------------------------------------------------------------------


def test_a_redrive_request_is_made_once_per_run_until_it_is_stale(running: JobStore) -> None:
    running.cancel(JOB, 1, by="ops")
    first = running.request_redrive(JOB, 1, by="ops")
    assert first.redrive is not None and first.redrive.from_run == 1
    assert first.status is JobStatus.CANCELLED and first.updated_at == _job(running).updated_at
    with pytest.raises(StaleRun):
        running.request_redrive(JOB, 1, by="someone else")
    # A request older than the caller's freshness is taken as lost.
    later = datetime.now(UTC) + timedelta(seconds=1)
    again = running.request_redrive(JOB, 1, by="someone else", fresh_after=later)
    assert again.redrive is not None and again.redrive.by == "someone else"
    running.withdraw_redrive(JOB, 1, first.redrive.requested_at)  # not that one: kept
    assert _job(running).redrive == again.redrive
    running.withdraw_redrive(JOB, 1, again.redrive.requested_at)
    assert _job(running).redrive is None


def test_only_a_redrivable_run_can_be_requested(running: JobStore) -> None:
    with pytest.raises(StaleRun):
        running.request_redrive(JOB, 1, by="ops")  # RUNNING


# ---- the backstops close a cancelled run: no dead letter, attempts cancelled ----------------


@pytest.fixture
def backstops(running: JobStore) -> Backstops:
    sqs = boto3.client("sqs")
    return Backstops(
        jobs=running,
        sqs=sqs,
        sfn=boto3.client("stepfunctions"),
        dead_letter_queue_url=sqs.create_queue(QueueName="dead-letters")["QueueUrl"],
        logger=Logger(service="records-test"),
        workflow_timeout_s=int(WORKFLOW_TIMEOUT.total_seconds()),
    )


def _status_change(status: str, run: int = 1) -> ExecutionStatusChangeEvent:
    execution_input = {
        "job_id": JOB,
        "run": run,
        "source": SOURCE.model_dump(mode="json"),
        "options": {"clarify": False},
        "message": MESSAGE,
    }
    return ExecutionStatusChangeEvent.model_validate(
        {
            "version": "0",
            "id": "1",
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": "123456789012",
            "time": "2026-01-01T00:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": {
                "executionArn": f"arn:aws:states:us-east-1:123456789012:execution:p:{JOB}-r{run}",
                "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:p",
                "name": f"{JOB}-r{run}",
                "status": status,
                "input": json.dumps(execution_input),
                "error": "richdoc.Cancelled",
                "cause": "cancelled by ops",
            },
        }
    )


def _dead_letters(backstops: Backstops) -> list[Any]:
    messages: list[Any] = backstops.sqs.receive_message(
        QueueUrl=backstops.dead_letter_queue_url, MaxNumberOfMessages=10
    ).get("Messages", [])
    return messages


def test_the_reconciler_closes_a_cancelled_run_without_a_dead_letter(
    backstops: Backstops, capsys: pytest.CaptureFixture[str]
) -> None:
    store = backstops.jobs
    store.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    store.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("51-100"))
    store.cancel(JOB, 1, by="ops", reason="wrong file")
    answer = backstops.reconcile(_status_change("ABORTED"))
    assert answer == Reconciled(reconciled=False, cancelled=True)
    job = _job(store)
    assert job.status is JobStatus.CANCELLED and job.failure is None and job.dead_letter is None
    assert job.cancel is not None and job.cancel.closed_at is not None
    attempts = store.attempts.of_job(JOB, 1)
    assert {a.outcome for a in attempts} == {CANCELLED_OUTCOME}
    assert {a.reason for a in attempts} == {"cancelled by ops: wrong file"}
    assert _dead_letters(backstops) == []
    assert "JobsDeadLettered" not in capsys.readouterr().out  # no internal alarm
    # Once: a second event (or the sweep after it) finds it closed.
    assert backstops.reconcile(_status_change("ABORTED")) == Reconciled(reconciled=False)


def test_an_abort_nobody_asked_for_stays_internal(backstops: Backstops) -> None:
    assert backstops.reconcile(_status_change("ABORTED")) == Reconciled(reconciled=True)
    job = _job(backstops.jobs)
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None and job.failure.error == "Execution.ABORTED"
    assert len(_dead_letters(backstops)) == 1


def test_the_sweep_closes_a_cancelled_run_whose_status_event_was_lost(backstops: Backstops) -> None:
    store = backstops.jobs
    store.attempts.open(JOB, 1, "project")
    store.cancel(JOB, 1, by="ops")
    sweep = ScheduledSweep.model_validate(
        {
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "time": (datetime.now(UTC) + WORKFLOW_TIMEOUT + timedelta(minutes=1)).isoformat(),
        }
    )
    swept = backstops.sweep(sweep)
    assert (swept.stuck, swept.closed, swept.cancelled) == (0, 0, 1)
    [attempt] = store.attempts.of_job(JOB, 1)
    assert attempt.outcome == CANCELLED_OUTCOME
    assert _dead_letters(backstops) == []
    assert backstops.sweep(sweep).cancelled == 0  # closed once


def test_a_failure_recorded_for_a_cancelled_run_records_nothing(running: JobStore) -> None:
    actions = Actions(
        jobs=running, logger=Logger(service="records-test"), metrics=Metrics(namespace="richdoc")
    )
    running.cancel(JOB, 1, by="ops")
    with pytest.raises(JobCancelled):
        actions.fail(
            RecordFailure(
                job_id=JOB,
                run=1,
                action="fail",
                failed_at=FailedAt(stage="parse", tier=1),
                error=CaughtError(Error="CorruptInput", Cause="not a zip"),
            )
        )
    assert running.attempts.of_job(JOB) == []
    assert _job(running).status is JobStatus.CANCELLED


# ---- the starter and a cancelled job ---------------------------------------------------------


@pytest.fixture
def starter(job_store: JobStore) -> Starter:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    return Starter(
        s3=s3,
        jobs=job_store,
        backlog=Backlog(job_store.table, job_store.clock),
        state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:p",
        clarify_default=False,
    )


def test_the_starter_queues_nothing_for_a_cancelled_job_until_it_is_redriven(
    starter: Starter,
) -> None:
    from richdoc.deadletter import redrive_attributes

    job_id = job_id_for(BUCKET, "contract.docx", "v1")
    starter.jobs.create(job_id, SOURCE, JobOptions(), message=MESSAGE, tenant="/")
    assert starter.backlog.oldest("/", 10).job_ids == [job_id]
    cancelled = starter.jobs.cancel(job_id, 1, by="ops")
    assert (
        not cancelled.waiting and starter.backlog.oldest("/", 10).job_ids == []
    )  # it left at once
    [late] = starter.handle_message(MESSAGE)  # a redelivery of the notification
    assert late.outcome is StartOutcome.DUPLICATE_IGNORED
    assert starter.backlog.oldest("/", 10).job_ids == []
    attributes = {
        name: value["StringValue"] for name, value in redrive_attributes(job_id, 1).items()
    }
    [redriven] = starter.handle_message(MESSAGE, attributes)
    assert (redriven.run, redriven.outcome) == (2, StartOutcome.QUEUED)
    assert starter.backlog.oldest("/", 10).job_ids == [job_id]
    [again] = starter.handle_message(MESSAGE, attributes)  # the same redrive, twice
    assert again.outcome is StartOutcome.DUPLICATE_IGNORED
    assert _job(starter.jobs, job_id).run == 2
