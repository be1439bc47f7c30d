"""The records logic (richdoc.records) on emulated DynamoDB, SQS and Step Functions: every
action the state machine calls, every branch of the reconciler EventBridge invokes, and
the sweep of stuck jobs."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger, Metrics
from botocore.exceptions import ClientError
from pydantic import ValidationError

from richdoc.contracts import (
    DetectCounts,
    DetectOutput,
    ExecutionInput,
    JobCounts,
    JobOptions,
    JobOutputs,
    PageSpan,
    ParseOutput,
    ProjectCounts,
    ProjectOutput,
    SourceObject,
    StepResults,
)
from richdoc.deadletter import failure_attributes
from richdoc.jobs import DeadLetterMark, Job, JobStatus, JobStore, StaleRun, timestamp
from richdoc.records.actions import Actions
from richdoc.records.backstops import (
    STATUS_CHANGE,
    Backstops,
    ExecutionStatusChangeEvent,
    SweepIncomplete,
)
from richdoc.records.calls import (
    CaughtError,
    EscalationRecorded,
    FailedAt,
    FailureRecorded,
    Reconciled,
    RecordDeadLettered,
    Recorded,
    RecordEscalation,
    RecordFailure,
    RecordShardFailure,
    RecordStart,
    RecordSuccess,
    ScheduledSweep,
    Swept,
)
from richdoc.records.requests import parse_request
from richdoc.records.sweep_walk import WALK
from richdoc.taxonomy import Failure, FailureKind
from tests.support.lambda_context import FakeLambdaContext

ROOT = Path(__file__).resolve().parents[2]
JOB = "job-1"
SOURCE = SourceObject(bucket="ingest", key="in/contract.docx", version_id="v1", size=10)
MESSAGE = json.dumps({"Records": [{"eventSource": "aws:s3"}]})
RESULTS = StepResults(
    parse=ParseOutput(
        docling_key="docling/ab/c.json",
        sha256="ab" * 32,
        size=10,
        pipeline="simple",
        page_count=0,
        cached=False,
        partial=False,
        failed_pages=[],
        seconds=0.5,
    ),
    project=ProjectOutput(
        projection_key="jobs/job-1/run-001/projection.json",
        chunks_key="jobs/job-1/run-001/chunks.jsonl",
        markdown_key="jobs/job-1/run-001/document.md",
        tables_prefix="jobs/job-1/run-001/tables/",
        counts=ProjectCounts(nodes=5, edges=4, spans=3, chunks=2, tables=1),
    ),
    detect=DetectOutput(
        detection_key="jobs/job-1/run-001/detection.json",
        counts=DetectCounts(ambiguities=1, ambiguities_suppressed=2),
        rules="contracts-v2",
    ),
)


WORKFLOW_TIMEOUT = timedelta(hours=3)
CREATED = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class World:
    actions: Actions
    backstops: Backstops
    jobs: JobStore
    sqs: Any
    sfn: Any
    state_machine_arn: str
    dead_letter_queue_url: str
    metrics: Metrics

    def job(self) -> Job:
        job = self.jobs.get(JOB)
        assert job is not None
        return job

    def execution_arn(self, job_id: str = JOB, run: int = 1) -> str:
        prefix = self.state_machine_arn.replace(":stateMachine:", ":execution:")
        return f"{prefix}:{job_id}-r{run}"

    def dead_letters(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.dead_letter_queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        return messages


def _world(jobs: JobStore, *, definition: dict[str, Any] | None = None) -> World:
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
    sfn = boto3.client("stepfunctions")
    role = boto3.client("iam").create_role(RoleName="pipeline", AssumeRolePolicyDocument="{}")
    definition = definition or {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}
    machine = sfn.create_state_machine(
        name="pipeline", definition=json.dumps(definition), roleArn=role["Role"]["Arn"]
    )["stateMachineArn"]
    metrics = Metrics(namespace="richdoc")
    metrics.clear_metrics()
    logger = Logger(service="records-test")
    actions = Actions(jobs=jobs, logger=logger, metrics=metrics)
    backstops = Backstops(
        jobs=jobs,
        sqs=sqs,
        sfn=sfn,
        dead_letter_queue_url=url,
        logger=logger,
        workflow_timeout_s=int(WORKFLOW_TIMEOUT.total_seconds()),
    )
    return World(actions, backstops, jobs, sqs, sfn, machine, url, metrics)


@pytest.fixture
def world(job_store: JobStore) -> World:
    assert job_store.create(JOB, SOURCE, JobOptions(clarify=True), message=MESSAGE)
    return _world(job_store)


@pytest.fixture
def executing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step Functions runs definitions (moto's ASL interpreter) instead of leaving every
    execution RUNNING until stopped."""
    from moto.core.config import default_user_config

    monkeypatch.setitem(default_user_config, "stepfunctions", {"execute_state_machine": True})


def _running(world: World) -> None:
    world.actions.start(RecordStart(job_id=JOB, run=1, action="start", execution_arn="arn:x"))


def _metric_names(world: World) -> set[str]:
    return set(world.metrics.metric_set)


def _emitted(capsys: pytest.CaptureFixture[str], name: str) -> list[dict[str, Any]]:
    """The EMF lines printed for one metric (single metrics are flushed at once)."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "{" in line]
    return [m for m in lines if name in m]


def _fail(world: World, kind_error: str = "CorruptInput", job_id: str = JOB) -> FailureRecorded:
    return world.actions.fail(
        RecordFailure(
            job_id=job_id,
            run=1,
            action="fail",
            failed_at=FailedAt(stage="parse", tier=1),
            error=CaughtError(Error=kind_error, Cause="not a zip archive"),
        )
    )


def _dead_lettered(world: World, failure: Failure) -> None:
    world.jobs.record_failure(JOB, 1, failure)
    world.jobs.mark_dead_lettered(JOB, 1, "message-1", sent_by="state-machine")


# ---- the state machine's actions -----------------------------------------------------------------


def test_start_marks_the_run_running_with_its_execution(world: World) -> None:
    result = world.actions.start(
        RecordStart(job_id=JOB, run=1, action="start", execution_arn="arn:execution:job-1-r1")
    )
    assert result == Recorded(recorded="start")
    job = world.job()
    assert (job.status, job.execution_arn) == (JobStatus.RUNNING, "arn:execution:job-1-r1")
    assert job.started_at is not None
    assert "JobsRunning" in _metric_names(world)


def test_start_of_a_run_that_is_not_current_is_a_stale_run(world: World) -> None:
    with pytest.raises(StaleRun):
        world.actions.start(RecordStart(job_id=JOB, run=2, action="start", execution_arn="arn:x"))


def test_escalation_closes_the_attempt_the_platform_killed(world: World) -> None:
    _running(world)
    killed = world.jobs.attempts.open(JOB, 1, "parse", tier=1, memory_mb=3008)
    result = world.actions.escalate(
        RecordEscalation(
            job_id=JOB,
            run=1,
            action="escalate",
            from_tier=1,
            error=CaughtError(Error="Sandbox.Timedout", Cause="Task timed out after 900 seconds"),
        )
    )
    assert result == EscalationRecorded(recorded="escalate", from_tier=1, error="Sandbox.Timedout")
    [attempt] = world.jobs.attempts.of_job(JOB, 1)
    assert (attempt.seq, attempt.tier, attempt.outcome) == (killed.seq, 1, "Sandbox.Timedout")
    assert attempt.reason == "Task timed out after 900 seconds"
    assert world.job().status is JobStatus.RUNNING  # the next tier goes on
    assert "TierEscalations" in _metric_names(world)


# ---- page-range shards: side by side, each attempt closed by its own catch path -----------------


def _shard_attempts(world: World) -> dict[str | None, list[tuple[int | None, str]]]:
    found: dict[str | None, list[tuple[int | None, str]]] = {}
    for attempt in world.jobs.attempts.of_job(JOB, 1):
        pages = str(attempt.pages) if attempt.pages else None
        found.setdefault(pages, []).append((attempt.tier, attempt.outcome))
    return found


def test_a_shards_escalation_closes_that_shards_attempt_only(world: World) -> None:
    _running(world)
    for pages in ("1-50", "51-100", "101-150"):
        world.jobs.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse(pages))
    world.actions.escalate(
        RecordEscalation(
            job_id=JOB,
            run=1,
            action="escalate",
            from_tier=1,
            pages=PageSpan(start=51, end=100),
            error=CaughtError(Error="Runtime.OutOfMemory", Cause="signal: killed"),
        )
    )
    assert _shard_attempts(world) == {
        "1-50": [(1, "running")],
        "51-100": [(1, "Runtime.OutOfMemory")],
        "101-150": [(1, "running")],
    }


def test_attempts_are_numbered_per_shard(world: World) -> None:
    _running(world)
    first = world.jobs.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    other = world.jobs.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("51-100"))
    world.jobs.attempts.close(first, "ResourceLimit")
    again = world.jobs.attempts.open(JOB, 1, "parse", tier=2, pages=PageSpan.parse("1-50"))
    assert (first.attempt, other.attempt, again.attempt) == (1, 1, 2)


def test_a_failed_shard_is_recorded_with_its_pages_and_the_job_failure_once(
    world: World,
) -> None:
    _running(world)
    world.jobs.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    error = CaughtError(Error="Lambda.ServiceException", Cause="service unavailable")
    recorded = world.actions.shard_failed(
        RecordShardFailure(
            job_id=JOB,
            run=1,
            action="shard_failed",
            failed_at=FailedAt(stage="parse", tier=1),
            pages=PageSpan(start=51, end=100),
            error=error,
        )
    )
    assert recorded == Recorded(recorded="shard_failed")
    assert world.job().status is JobStatus.RUNNING  # the Map's Catch decides the run's fate
    world.actions.fail(
        RecordFailure(
            job_id=JOB,
            run=1,
            action="fail",
            failed_at=FailedAt(stage="parse", attempt_recorded=True),
            error=error,
        )
    )
    assert world.job().status is JobStatus.FAILED
    # The platform never ran shard 51-100: one attempt added for it, none for the document,
    # and the other shard's attempt is not the failed one.
    assert _shard_attempts(world) == {
        "1-50": [(1, "running")],
        "51-100": [(1, "Lambda.ServiceException")],
    }


def test_a_reconciled_run_closes_every_shard_attempt_still_running(world: World) -> None:
    _running(world)
    for pages in ("1-50", "51-100"):
        world.jobs.attempts.open(JOB, 1, "parse", tier=1, pages=PageSpan.parse(pages))
    assert _reconcile(world, status_change("TIMED_OUT")).reconciled
    assert _shard_attempts(world) == {
        "1-50": [(1, "Execution.TIMED_OUT")],
        "51-100": [(1, "Execution.TIMED_OUT")],
    }


def test_the_plan_records_the_shard_count_and_a_redrive_forgets_it(world: World) -> None:
    _running(world)
    world.jobs.record_shards(JOB, 1, 40)
    assert world.job().shards == 40
    _dead_lettered(world, Failure(FailureKind.TRANSIENT, "throttled"))
    world.jobs.start_next_run(JOB, 1)
    assert world.job().shards is None  # the next run plans again


def test_success_records_outputs_counts_and_pipeline(world: World) -> None:
    _running(world)
    result = world.actions.succeed(
        RecordSuccess(job_id=JOB, run=1, action="succeed", results=RESULTS)
    )
    assert result == Recorded(recorded="succeed")
    job = world.job()
    assert job.status is JobStatus.SUCCEEDED
    assert job.outputs == JobOutputs(
        docling_key="docling/ab/c.json",
        projection_key="jobs/job-1/run-001/projection.json",
        detection_key="jobs/job-1/run-001/detection.json",
        chunks_key="jobs/job-1/run-001/chunks.jsonl",
        markdown_key="jobs/job-1/run-001/document.md",
        tables_prefix="jobs/job-1/run-001/tables/",
    )
    assert job.counts == JobCounts(
        nodes=5, edges=4, spans=3, ambiguities=1, ambiguities_suppressed=2, chunks=2, tables=1
    )
    assert job.pipeline == "simple"
    assert job.detection_rules == "contracts-v2"  # what reprocess --contract-changed compares
    assert "JobsSucceeded" in _metric_names(world)


def test_success_keeps_the_shard_count_the_plan_recorded(world: World) -> None:
    _running(world)
    world.jobs.record_shards(JOB, 1, 3)
    world.actions.succeed(RecordSuccess(job_id=JOB, run=1, action="succeed", results=RESULTS))
    assert world.job().shards == 3  # written once, by the plan


def test_failure_records_the_failed_run_and_answers_the_dead_letter_attributes(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    _running(world)
    envelope = json.dumps(
        {"errorType": "UnsupportedFeature", "errorMessage": "[encrypted] PDF is encrypted"}
    )
    result = world.actions.fail(
        RecordFailure(
            job_id=JOB,
            run=1,
            action="fail",
            failed_at=FailedAt(stage="parse", tier=1),
            error=CaughtError(Error="UnsupportedFeature", Cause=envelope),
        )
    )
    failure = Failure(
        FailureKind.UNSUPPORTED_FEATURE, "PDF is encrypted", "encrypted", "UnsupportedFeature"
    )
    assert result == FailureRecorded.model_validate(
        {
            "kind": "unsupported_feature",
            "reason": "PDF is encrypted",
            "feature": "encrypted",
            "error": "UnsupportedFeature",
            "message_attributes": failure_attributes(JOB, 1, failure),
        }
    )
    job = world.job()
    # Failed, visibly, but not terminal: the dead-letter message is not sent yet.
    assert job.status is JobStatus.FAILED and not job.status.terminal
    assert job.failure == Failure(
        FailureKind.UNSUPPORTED_FEATURE,
        "PDF is encrypted",
        feature="encrypted",
        error="UnsupportedFeature",
    )
    # The handler never ran (or could not close it): the catch path adds the attempt.
    [attempt] = world.jobs.attempts.of_job(JOB, 1)
    assert (attempt.stage, attempt.tier, attempt.outcome, attempt.recorded_by) == (
        "parse",
        1,
        "UnsupportedFeature",
        "state-machine",
    )
    assert "JobsFailed" in _metric_names(world)
    assert _emitted(capsys, "JobsDeadLettered") == []  # not until the mark


def test_the_mark_after_the_send_makes_the_job_dead_lettered_with_the_message(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    _running(world)
    _fail(world)
    mark = RecordDeadLettered(job_id=JOB, run=1, action="mark_dead_lettered", message_id="m-1")
    assert world.actions.mark_dead_lettered(mark) == Recorded(recorded="mark_dead_lettered")
    job = world.job()
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.dead_letter == DeadLetterMark(message_id="m-1", sent_by="state-machine")
    assert job.failure is not None and job.failure.kind == "corrupt_input"
    # A retried mark (its first answer lost) changes nothing and is not counted again.
    world.actions.mark_dead_lettered(mark)
    [metric] = _emitted(capsys, "JobsDeadLettered")
    assert (metric["kind"], metric["JobsDeadLettered"]) == ("corrupt_input", [1.0])
    assert set(metric) - {"_aws", "kind", "JobsDeadLettered"} == set()  # kind only


def test_a_mark_of_a_run_a_redrive_took_over_is_a_stale_run(world: World) -> None:
    _running(world)
    _fail(world)
    world.jobs.start_next_run(JOB, 1)
    with pytest.raises(StaleRun):
        world.actions.mark_dead_lettered(
            RecordDeadLettered(job_id=JOB, run=1, action="mark_dead_lettered", message_id="m-1")
        )


def test_a_failure_answers_the_json_the_dead_letter_state_sends(world: World) -> None:
    _running(world)
    result = world.actions.fail(
        RecordFailure(
            job_id=JOB,
            run=1,
            action="fail",
            failed_at=FailedAt(stage="project"),
            error=CaughtError(Error="KeyError", Cause="'nodes'"),
        )
    )
    failure = Failure(FailureKind.INTERNAL, "'nodes'", error="KeyError")
    assert result.model_dump(mode="json") == {
        "kind": "internal",
        "reason": "'nodes'",
        "feature": None,
        "error": "KeyError",
        "message_attributes": failure_attributes(JOB, 1, failure),
    }


# ---- the reconciler ------------------------------------------------------------------------------


def status_change(
    status: str,
    *,
    job_id: str = JOB,
    run: int = 1,
    execution_input: str | None = None,
    execution_arn: str | None = None,
    error: str | None = "States.Runtime",
    cause: str | None = "the failure path failed",
) -> dict[str, Any]:
    """An EventBridge "Step Functions Execution Status Change" event, as AWS sends it."""
    arn = execution_arn or (
        f"arn:aws:states:us-east-1:123456789012:execution:pipeline:{job_id}-r{run}"
    )
    if execution_input is None:
        execution_input = ExecutionInput(
            job_id=job_id, run=run, source=SOURCE, options=JobOptions(), message=MESSAGE
        ).model_dump_json()
    return {
        "version": "0",
        "id": "315c1398-40ff-a850-213b-158f73e60175",
        "detail-type": STATUS_CHANGE,
        "source": "aws.states",
        "account": "123456789012",
        "time": "2026-01-01T00:00:00Z",
        "region": "us-east-1",
        "resources": [arn],
        "detail": {
            "executionArn": arn,
            "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:pipeline",
            "name": f"{job_id}-r{run}",
            "status": status,
            "startDate": 1767225600000,
            "stopDate": 1767225660000,
            "input": execution_input,
            "inputDetails": {"included": True},
            "output": None,
            "error": error,
            "cause": cause,
        },
    }


def _reconcile(world: World, event: dict[str, Any]) -> Reconciled:
    request = parse_request(event)
    assert isinstance(request, ExecutionStatusChangeEvent)
    return world.backstops.reconcile(request)


def test_an_open_job_of_an_execution_that_ended_outside_the_definition_is_dead_lettered(
    world: World,
) -> None:
    _running(world)
    killed = world.jobs.attempts.open(JOB, 1, "parse", tier=2)
    assert _reconcile(world, status_change("TIMED_OUT", error=None, cause=None)) == Reconciled(
        reconciled=True
    )
    job = world.job()
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure == Failure(
        FailureKind.INTERNAL, "execution TIMED_OUT:", error="Execution.TIMED_OUT"
    )
    [attempt] = world.jobs.attempts.of_job(JOB, 1)
    assert (attempt.seq, attempt.outcome) == (killed.seq, "Execution.TIMED_OUT")
    [letter] = world.dead_letters()
    assert letter["Body"] == MESSAGE  # the original ingest message, ready for a redrive
    failure = Failure(FailureKind.INTERNAL, "execution TIMED_OUT:", error="Execution.TIMED_OUT")
    assert letter["MessageAttributes"] == {
        name: {"DataType": value["DataType"], "StringValue": value["StringValue"]}
        for name, value in failure_attributes(JOB, 1, failure).items()
    }
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="reconciler")


def test_the_reconciled_reason_carries_the_execution_error_and_cause(world: World) -> None:
    _running(world)
    assert _reconcile(world, status_change("FAILED")).reconciled
    assert world.job().failure == Failure(
        FailureKind.INTERNAL,
        "execution FAILED: States.Runtime the failure path failed",
        error="Execution.FAILED",
    )
    # No attempt was open and the job never reached a stage: one is added for the workflow.
    [attempt] = world.jobs.attempts.of_job(JOB, 1)
    assert (attempt.stage, attempt.outcome) == ("workflow", "Execution.FAILED")


def test_a_failed_run_whose_dead_letter_send_failed_is_sent_with_its_own_failure(
    world: World,
) -> None:
    # The definition recorded a corrupt input, then its send (or mark) failed and the
    # execution ended in DeadLetterPending: the failure stays what the run recorded.
    _running(world)
    _fail(world)
    event = status_change("FAILED", error="dead_letter_pending", cause="send failed")
    assert _reconcile(world, event).reconciled
    job = world.job()
    assert job.failure is not None
    assert (job.status, job.failure.kind) == (JobStatus.DEAD_LETTERED, "corrupt_input")
    [letter] = world.dead_letters()
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == "corrupt_input"
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="reconciler")
    assert [a.outcome for a in world.jobs.attempts.of_job(JOB, 1)] == ["CorruptInput"]


SEND_THEN_LOSE_THE_MARK = {
    "StartAt": "SendToDeadLetterQueue",
    "States": {
        "SendToDeadLetterQueue": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage",
            "Parameters": {"QueueUrl": "QUEUE_URL", "MessageBody.$": "$.message"},
            "ResultSelector": {"message_id.$": "$.MessageId"},
            "ResultPath": "$.dead_letter",
            "Next": "DeadLetterPending",
        },
        # Stands for MarkDeadLettered failing after its retries.
        "DeadLetterPending": {"Type": "Fail", "Error": "dead_letter_pending"},
    },
}


def test_a_send_that_succeeded_before_the_mark_failed_is_not_sent_again(
    job_store: JobStore, executing: None
) -> None:
    assert job_store.create(JOB, SOURCE, JobOptions(), message=MESSAGE)
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
    definition = json.loads(json.dumps(SEND_THEN_LOSE_THE_MARK).replace("QUEUE_URL", url))
    world = _world(job_store, definition=definition)
    _running(world)
    _fail(world)
    execution_input = ExecutionInput(
        job_id=JOB, run=1, source=SOURCE, options=JobOptions(), message=MESSAGE
    ).model_dump_json()
    arn = world.sfn.start_execution(
        stateMachineArn=world.state_machine_arn, name=f"{JOB}-r1", input=execution_input
    )["executionArn"]
    assert _ended(world.sfn, arn) == "FAILED"

    event = status_change("FAILED", execution_arn=arn, error="dead_letter_pending")
    assert _reconcile(world, event).reconciled
    [letter] = world.dead_letters()  # the execution's, and no second one
    job = world.job()
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.dead_letter == DeadLetterMark(
        message_id=letter["MessageId"], sent_by="state-machine"
    )


def _ended(sfn: Any, arn: str) -> str:
    """Wait for an interpreted execution to end (it runs on moto's thread)."""
    for _ in range(400):
        status: str = sfn.describe_execution(executionArn=arn)["status"]
        if status != "RUNNING":
            return status
        time.sleep(0.025)
    raise AssertionError(f"{arn} still running")


def test_a_reconcile_that_cannot_send_fails_and_leaves_the_job_failed(job_store: JobStore) -> None:
    assert job_store.create(JOB, SOURCE, JobOptions(), message=MESSAGE)
    world = _world(job_store)
    world.backstops.dead_letter_queue_url = world.dead_letter_queue_url + "-gone"
    _running(world)
    with pytest.raises(ClientError):  # Lambda retries the event, then the failure queue
        _reconcile(world, status_change("ABORTED"))
    job = world.job()
    assert job.failure is not None
    assert (job.status, job.failure.error) == (JobStatus.FAILED, "Execution.ABORTED")
    # The next attempt finds the job FAILED and sends with the failure already recorded.
    world.backstops.dead_letter_queue_url = world.dead_letter_queue_url
    assert _reconcile(world, status_change("ABORTED", cause="retried")).reconciled
    assert world.job().failure == job.failure
    assert len(world.dead_letters()) == 1


def test_an_execution_without_a_job_is_left_alone(world: World) -> None:
    assert _reconcile(world, status_change("ABORTED", job_id="no-such-job")) == Reconciled(
        reconciled=False
    )
    assert world.dead_letters() == []


def test_an_execution_that_is_not_ours_is_left_alone(world: World) -> None:
    event = status_change("FAILED", execution_input=json.dumps({"hello": "world"}))
    assert _reconcile(world, event) == Reconciled(reconciled=False)
    assert world.job().status is JobStatus.QUEUED
    assert world.dead_letters() == []


def test_an_execution_of_an_older_run_is_left_alone(world: World) -> None:
    _running(world)
    _dead_lettered(world, Failure(FailureKind.TRANSIENT, "throttled"))
    world.jobs.start_next_run(JOB, 1)
    world.jobs.mark_running(JOB, 2, "arn:x-r2")
    assert _reconcile(world, status_change("ABORTED", run=1)) == Reconciled(reconciled=False)
    job = world.job()
    assert (job.run, job.status) == (2, JobStatus.RUNNING)
    assert world.dead_letters() == []


@pytest.mark.parametrize("terminal", [JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED])
def test_a_job_the_definition_already_closed_is_left_alone(
    world: World, terminal: JobStatus
) -> None:
    _running(world)
    if terminal is JobStatus.SUCCEEDED:
        world.actions.succeed(RecordSuccess(job_id=JOB, run=1, action="succeed", results=RESULTS))
    else:
        _dead_lettered(world, Failure(FailureKind.CORRUPT_INPUT, "not a PDF"))
    before = world.job()
    assert _reconcile(world, status_change("FAILED")) == Reconciled(reconciled=False)
    assert world.job() == before
    assert world.dead_letters() == []


class ClosingJustAfterTheRead(JobStore):
    """A job store where the run's own RecordSuccess lands between the reconciler's read
    and its write (the race a real deployment can see)."""

    def get(self, job_id: str) -> Job | None:
        job = super().get(job_id)
        self.succeed(
            job_id,
            1,
            outputs=JobOutputs.of(RESULTS),
            counts=JobCounts.of(RESULTS),
            pipeline="simple",
        )
        return job


def test_a_job_closed_while_reconciling_is_left_to_its_run(job_store: JobStore) -> None:
    racing = ClosingJustAfterTheRead(job_store.table)
    assert racing.create(JOB, SOURCE, JobOptions())
    racing.mark_running(JOB, 1, "arn:x")
    world = _world(racing)
    assert _reconcile(world, status_change("FAILED")) == Reconciled(reconciled=False)
    job = job_store.get(JOB)
    assert job is not None and job.status is JobStatus.SUCCEEDED
    assert world.dead_letters() == []


# ---- the sweep -----------------------------------------------------------------------------------


def scheduled(at: datetime) -> dict[str, Any]:
    """The EventBridge "Scheduled Event" of the sweep's rule, as AWS sends it."""
    return {
        "version": "0",
        "id": "89d1a02d-5ec7-412e-82f5-13505f849b41",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "us-east-1",
        "resources": ["arn:aws:events:us-east-1:123456789012:rule/richdoc-sweep"],
        "detail": {},
    }


def walked(stuck: int, read: int) -> Swept:
    """A sweep's answer that found ``stuck`` jobs and closed them, its walk over the open
    jobs one index page a status (``read``: the jobs it received)."""
    return Swept(stuck=stuck, closed=stuck, index_pages=len(WALK), read=read)


def _sweep(world: World, at: datetime) -> Swept:
    request = parse_request(scheduled(at))
    assert isinstance(request, ScheduledSweep)
    return world.backstops.sweep(request)


@pytest.fixture
def clocked(jobs_table: Any) -> Iterator[tuple[World, Callable[[datetime], None]]]:
    """A world whose records are written at a set time (CREATED, then as moved)."""
    now = [CREATED]
    store = JobStore(jobs_table, clock=lambda: timestamp(now[0]))
    world = _world(store)

    def move_to(moment: datetime) -> None:
        now[0] = moment

    yield world, move_to


def _queue(world: World, *, started: bool) -> None:
    assert world.jobs.create(
        JOB, SOURCE, JobOptions(), message=MESSAGE, execution_arn=world.execution_arn()
    )
    if started:
        execution_input = ExecutionInput(
            job_id=JOB, run=1, source=SOURCE, options=JobOptions(), message=MESSAGE
        )
        world.sfn.start_execution(
            stateMachineArn=world.state_machine_arn,
            name=f"{JOB}-r1",
            input=execution_input.model_dump_json(),
        )


def test_the_sweep_closes_a_queued_job_whose_execution_never_started(
    clocked: tuple[World, Callable[[datetime], None]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, _ = clocked
    _queue(world, started=False)
    swept = _sweep(world, CREATED + WORKFLOW_TIMEOUT + timedelta(minutes=15))
    assert swept == walked(stuck=1, read=1)
    job = world.job()
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert (job.failure.kind, job.failure.error) == ("internal", "Execution.NOT_STARTED")
    [letter] = world.dead_letters()
    assert letter["Body"] == MESSAGE  # kept on the job by the starter
    assert job.dead_letter == DeadLetterMark(message_id=letter["MessageId"], sent_by="sweep")
    [stuck] = _emitted(capsys, "StuckJobs")
    assert stuck["StuckJobs"] == [1.0]


def test_the_sweep_leaves_jobs_younger_than_the_workflow_timeout(
    clocked: tuple[World, Callable[[datetime], None]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, _ = clocked
    _queue(world, started=False)
    assert _sweep(world, CREATED + WORKFLOW_TIMEOUT) == walked(stuck=0, read=0)
    assert world.job().status is JobStatus.QUEUED
    [stuck] = _emitted(capsys, "StuckJobs")  # emitted every sweep, zero too
    assert stuck["StuckJobs"] == [0.0]


def test_the_sweep_leaves_a_job_whose_execution_still_runs(
    clocked: tuple[World, Callable[[datetime], None]],
) -> None:
    world, _ = clocked
    _queue(world, started=True)  # (not interpreted: it runs until stopped)
    world.jobs.mark_running(JOB, 1, world.execution_arn())
    assert _sweep(world, CREATED + 2 * WORKFLOW_TIMEOUT) == walked(stuck=0, read=1)
    assert world.job().status is JobStatus.RUNNING
    assert world.dead_letters() == []


def test_the_sweep_closes_a_running_job_whose_execution_ended_unreported(
    clocked: tuple[World, Callable[[datetime], None]],
) -> None:
    world, move_to = clocked
    _queue(world, started=True)
    world.jobs.mark_running(JOB, 1, world.execution_arn())
    move_to(CREATED + timedelta(minutes=5))
    killed = world.jobs.attempts.open(JOB, 1, "parse", tier=1)
    world.sfn.stop_execution(executionArn=world.execution_arn())  # its status event is lost
    assert _sweep(world, CREATED + WORKFLOW_TIMEOUT + timedelta(hours=1)) == walked(1, read=1)
    job = world.job()
    assert job.failure is not None
    assert (job.status, job.failure.error) == (JobStatus.DEAD_LETTERED, "Execution.ABORTED")
    [attempt] = world.jobs.attempts.of_job(JOB, 1)
    assert (attempt.seq, attempt.outcome) == (killed.seq, "Execution.ABORTED")
    assert len(world.dead_letters()) == 1


def test_the_sweep_finishes_a_failed_job_with_its_recorded_failure(
    clocked: tuple[World, Callable[[datetime], None]],
) -> None:
    world, _ = clocked
    _queue(world, started=False)
    world.jobs.mark_running(JOB, 1, world.execution_arn())
    _fail(world)  # then the dead-letter send and the reconciler both failed
    assert _sweep(world, CREATED + WORKFLOW_TIMEOUT + timedelta(seconds=1)) == walked(1, read=1)
    job = world.job()
    assert job.failure is not None
    assert (job.status, job.failure.kind) == (JobStatus.DEAD_LETTERED, "corrupt_input")
    [letter] = world.dead_letters()
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == "corrupt_input"


def test_a_sweep_that_cannot_dead_letter_fails_and_leaves_the_job_failed(
    clocked: tuple[World, Callable[[datetime], None]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, _ = clocked
    _queue(world, started=False)
    world.backstops.dead_letter_queue_url += "-gone"
    with pytest.raises(SweepIncomplete, match=JOB):
        _sweep(world, CREATED + 2 * WORKFLOW_TIMEOUT)
    job = world.job()
    assert job.status is JobStatus.FAILED  # visible, and found again by the next sweep
    [stuck] = _emitted(capsys, "StuckJobs")
    assert stuck["StuckJobs"] == [1.0]


# ---- requests ------------------------------------------------------------------------------------


def test_requests_are_parsed_by_action_or_as_the_status_change_event() -> None:
    start = {"job_id": JOB, "run": 1, "action": "start", "execution_arn": "arn:x"}
    assert parse_request(start) == RecordStart(
        job_id=JOB, run=1, action="start", execution_arn="arn:x"
    )
    event = parse_request(status_change("ABORTED"))
    assert isinstance(event, ExecutionStatusChangeEvent)
    assert (event.detail.status, event.detail.name) == ("ABORTED", f"{JOB}-r1")
    sweep = parse_request(scheduled(CREATED))
    assert isinstance(sweep, ScheduledSweep) and sweep.time == CREATED
    mark = {"job_id": JOB, "run": 1, "action": "mark_dead_lettered", "message_id": "m-1"}
    assert parse_request(mark) == RecordDeadLettered.model_validate(mark)
    with pytest.raises(ValidationError):
        parse_request({"job_id": JOB, "run": 1, "action": "archive"})


# ---- the Lambda adapter --------------------------------------------------------------------------


def _load_handler(monkeypatch: pytest.MonkeyPatch, table: str, dead_letters: str) -> Any:
    monkeypatch.setenv("JOBS_TABLE", table)
    monkeypatch.setenv("DEAD_LETTER_QUEUE_URL", dead_letters)
    monkeypatch.setenv("ARTIFACT_BUCKET", "artifacts")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    spec = importlib.util.spec_from_file_location("records_app", ROOT / "functions/records/app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


RECORDS_CONTEXT = FakeLambdaContext(function_name="richdoc-records", memory_limit_in_mb=256)


def test_the_handler_answers_each_request_as_json(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _load_handler(monkeypatch, world.jobs.table.name, world.dead_letter_queue_url)
    start = {"job_id": JOB, "run": 1, "action": "start", "execution_arn": "arn:x"}
    assert app.handler(start, RECORDS_CONTEXT) == {"recorded": "start"}
    fail = {
        "job_id": JOB,
        "run": 1,
        "action": "fail",
        "failed_at": {"stage": "detect"},
        "error": {"Error": "CorruptInput", "Cause": "projection.json is not JSON"},
    }
    answer = app.handler(fail, RECORDS_CONTEXT)
    assert (answer["kind"], answer["reason"]) == ("corrupt_input", "projection.json is not JSON")
    assert answer["message_attributes"]["richdoc.kind"] == {
        "DataType": "String",
        "StringValue": "corrupt_input",
    }
    mark = {"job_id": JOB, "run": 1, "action": "mark_dead_lettered", "message_id": "m-1"}
    assert app.handler(mark, RECORDS_CONTEXT) == {"recorded": "mark_dead_lettered"}
    assert app.handler(status_change("FAILED"), RECORDS_CONTEXT) == {
        "reconciled": False,
        "cancelled": False,
    }
    assert app.handler(scheduled(CREATED), RECORDS_CONTEXT) == {
        "stuck": 0,
        "closed": 0,
        "cancelled": 0,
        "released": 0,
        "holders_closed": 0,
        "recounted": False,
        "index_pages": len(WALK),
        "read": 0,
        "walked": True,
    }
