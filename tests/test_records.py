"""The records logic (richdoc.records) on emulated DynamoDB and SQS: every action the state
machine calls, and every branch of the reconciler EventBridge invokes."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger, Metrics
from pydantic import ValidationError

from richdoc.contracts import (
    CaughtError,
    DetectCounts,
    DetectOutput,
    EscalationRecorded,
    ExecutionInput,
    FailedAt,
    FailureRecorded,
    JobCounts,
    JobOptions,
    JobOutputs,
    ParseOutput,
    ProjectCounts,
    ProjectOutput,
    Reconciled,
    Recorded,
    RecordEscalation,
    RecordFailure,
    RecordStart,
    RecordSuccess,
    SourceObject,
    StepResults,
)
from richdoc.deadletter import failure_attributes
from richdoc.jobs import Job, JobStatus, JobStore, StaleRun
from richdoc.records import (
    STATUS_CHANGE,
    ExecutionStatusChangeEvent,
    Records,
    parse_request,
)
from richdoc.taxonomy import Failure, FailureKind

ROOT = Path(__file__).resolve().parents[1]
JOB = "job-1"
SOURCE = SourceObject(bucket="ingest", key="in/contract.docx", version_id="v1", size=10)
MESSAGE = json.dumps({"Records": [{"eventSource": "aws:s3"}]})
RESULTS = StepResults(
    parse=ParseOutput(
        docling_key="docling/ab/c.json",
        sha256="ab" * 32,
        size=10,
        pipeline="simple",
        pages=0,
        cached=False,
        partial=False,
        failed_pages=[],
        seconds=0.5,
    ),
    project=ProjectOutput(
        projection_key="jobs/job-1/run-001/projection.json",
        counts=ProjectCounts(nodes=5, edges=4, spans=3),
    ),
    detect=DetectOutput(
        detection_key="jobs/job-1/run-001/detection.json",
        counts=DetectCounts(ambiguities=1, ambiguities_suppressed=2),
    ),
)


@dataclass
class World:
    records: Records
    jobs: JobStore
    sqs: Any
    dead_letter_queue_url: str
    metrics: Metrics

    def job(self) -> Job:
        job = self.jobs.get(JOB)
        assert job is not None
        return job

    def dead_letters(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.dead_letter_queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        return messages


def _world(jobs: JobStore) -> World:
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
    metrics = Metrics(namespace="richdoc")
    metrics.clear_metrics()
    records = Records(
        jobs=jobs,
        sqs=sqs,
        dead_letter_queue_url=url,
        logger=Logger(service="records-test"),
        metrics=metrics,
    )
    return World(records, jobs, sqs, url, metrics)


@pytest.fixture
def world(job_store: JobStore) -> World:
    assert job_store.create(JOB, SOURCE, JobOptions(clarify=True))
    return _world(job_store)


def _running(world: World) -> None:
    world.records.start(RecordStart(job_id=JOB, run=1, action="start", execution_arn="arn:x"))


def _metric_names(world: World) -> set[str]:
    return set(world.metrics.metric_set)


# ---- the state machine's actions -----------------------------------------------------------------


def test_start_marks_the_run_running_with_its_execution(world: World) -> None:
    result = world.records.start(
        RecordStart(job_id=JOB, run=1, action="start", execution_arn="arn:execution:job-1-r1")
    )
    assert result == Recorded(recorded="start")
    job = world.job()
    assert (job.status, job.execution_arn) == (JobStatus.RUNNING, "arn:execution:job-1-r1")
    assert job.started_at is not None
    assert "JobsRunning" in _metric_names(world)


def test_start_of_a_run_that_is_not_current_is_a_stale_run(world: World) -> None:
    with pytest.raises(StaleRun):
        world.records.start(RecordStart(job_id=JOB, run=2, action="start", execution_arn="arn:x"))


def test_escalation_closes_the_attempt_the_platform_killed(world: World) -> None:
    _running(world)
    killed = world.jobs.open_attempt(JOB, 1, "parse", tier=1, memory_mb=3008)
    result = world.records.escalate(
        RecordEscalation(
            job_id=JOB,
            run=1,
            action="escalate",
            from_tier=1,
            error=CaughtError(Error="Sandbox.Timedout", Cause="Task timed out after 900 seconds"),
        )
    )
    assert result == EscalationRecorded(recorded="escalate", from_tier=1, error="Sandbox.Timedout")
    [attempt] = world.jobs.attempts(JOB, 1)
    assert (attempt.seq, attempt.tier, attempt.outcome) == (killed.seq, 1, "Sandbox.Timedout")
    assert attempt.reason == "Task timed out after 900 seconds"
    assert world.job().status is JobStatus.RUNNING  # the next tier goes on
    assert "TierEscalations" in _metric_names(world)


def test_success_records_outputs_counts_pipeline_and_the_source_hash(world: World) -> None:
    _running(world)
    result = world.records.succeed(
        RecordSuccess(job_id=JOB, run=1, action="succeed", results=RESULTS)
    )
    assert result == Recorded(recorded="succeed")
    job = world.job()
    assert job.status is JobStatus.SUCCEEDED
    assert job.outputs == JobOutputs(
        docling_key="docling/ab/c.json",
        projection_key="jobs/job-1/run-001/projection.json",
        detection_key="jobs/job-1/run-001/detection.json",
    ).model_dump(mode="json")
    assert job.counts == JobCounts(
        nodes=5, edges=4, spans=3, ambiguities=1, ambiguities_suppressed=2
    ).model_dump(mode="json")
    assert (job.pipeline, job.source.sha256) == ("simple", "ab" * 32)
    assert "JobsSucceeded" in _metric_names(world)


def test_failure_dead_letters_the_job_and_answers_the_dead_letter_attributes(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    _running(world)
    envelope = json.dumps(
        {"errorType": "UnsupportedFeature", "errorMessage": "[encrypted] PDF is encrypted"}
    )
    result = world.records.fail(
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
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure == {
        "kind": "unsupported_feature",
        "reason": "PDF is encrypted",
        "feature": "encrypted",
        "error": "UnsupportedFeature",
    }
    # The handler never ran (or could not close it): the catch path adds the attempt.
    [attempt] = world.jobs.attempts(JOB, 1)
    assert (attempt.stage, attempt.tier, attempt.outcome, attempt.recorded_by) == (
        "parse",
        1,
        "UnsupportedFeature",
        "state-machine",
    )
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "{" in line]
    [metric] = [m for m in emitted if "JobsDeadLettered" in m]
    assert metric["kind"] == "unsupported_feature"


def test_a_failure_answers_the_json_the_dead_letter_state_sends(world: World) -> None:
    _running(world)
    result = world.records.fail(
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
    error: str | None = "States.Runtime",
    cause: str | None = "the failure path failed",
) -> dict[str, Any]:
    """An EventBridge "Step Functions Execution Status Change" event, as AWS sends it."""
    arn = f"arn:aws:states:us-east-1:123456789012:execution:pipeline:{job_id}-r{run}"
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
    return world.records.reconcile(request)


def test_an_open_job_of_an_execution_that_ended_outside_the_definition_is_dead_lettered(
    world: World,
) -> None:
    _running(world)
    killed = world.jobs.open_attempt(JOB, 1, "parse", tier=2)
    assert _reconcile(world, status_change("TIMED_OUT", error=None, cause=None)) == Reconciled(
        reconciled=True
    )
    job = world.job()
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure == {
        "kind": "internal",
        "reason": "execution TIMED_OUT:",
        "error": "Execution.TIMED_OUT",
    }
    [attempt] = world.jobs.attempts(JOB, 1)
    assert (attempt.seq, attempt.outcome) == (killed.seq, "Execution.TIMED_OUT")
    [letter] = world.dead_letters()
    assert letter["Body"] == MESSAGE  # the original ingest message, ready for a redrive
    failure = Failure(FailureKind.INTERNAL, "execution TIMED_OUT:", error="Execution.TIMED_OUT")
    assert letter["MessageAttributes"] == {
        name: {"DataType": value["DataType"], "StringValue": value["StringValue"]}
        for name, value in failure_attributes(JOB, 1, failure).items()
    }


def test_the_reconciled_reason_carries_the_execution_error_and_cause(world: World) -> None:
    _running(world)
    assert _reconcile(world, status_change("FAILED")).reconciled
    assert world.job().failure == {
        "kind": "internal",
        "reason": "execution FAILED: States.Runtime the failure path failed",
        "error": "Execution.FAILED",
    }
    # No attempt was open and the job never reached a stage: one is added for the workflow.
    [attempt] = world.jobs.attempts(JOB, 1)
    assert (attempt.stage, attempt.outcome) == ("workflow", "Execution.FAILED")


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
    world.jobs.dead_letter(JOB, 1, Failure(FailureKind.TRANSIENT, "throttled"))
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
        world.records.succeed(RecordSuccess(job_id=JOB, run=1, action="succeed", results=RESULTS))
    else:
        world.jobs.dead_letter(JOB, 1, Failure(FailureKind.CORRUPT_INPUT, "not a PDF"))
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
            sha256=None,
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


# ---- requests ------------------------------------------------------------------------------------


def test_requests_are_parsed_by_action_or_as_the_status_change_event() -> None:
    start = {"job_id": JOB, "run": 1, "action": "start", "execution_arn": "arn:x"}
    assert parse_request(start) == RecordStart(
        job_id=JOB, run=1, action="start", execution_arn="arn:x"
    )
    event = parse_request(status_change("ABORTED"))
    assert isinstance(event, ExecutionStatusChangeEvent)
    assert (event.detail.status, event.detail.name) == ("ABORTED", f"{JOB}-r1")
    with pytest.raises(ValidationError):
        parse_request({"job_id": JOB, "run": 1, "action": "archive"})


# ---- the Lambda adapter --------------------------------------------------------------------------


@dataclass
class FakeContext:
    function_name: str = "richdoc-records"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:richdoc-records"
    aws_request_id: str = "request-1"


def _load_handler(monkeypatch: pytest.MonkeyPatch, table: str, dead_letters: str) -> Any:
    monkeypatch.setenv("JOBS_TABLE", table)
    monkeypatch.setenv("DEAD_LETTER_QUEUE_URL", dead_letters)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    spec = importlib.util.spec_from_file_location("records_app", ROOT / "functions/records/app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_the_handler_answers_each_request_as_json(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _load_handler(monkeypatch, world.jobs.table.name, world.dead_letter_queue_url)
    start = {"job_id": JOB, "run": 1, "action": "start", "execution_arn": "arn:x"}
    assert app.handler(start, FakeContext()) == {"recorded": "start"}
    fail = {
        "job_id": JOB,
        "run": 1,
        "action": "fail",
        "failed_at": {"stage": "detect"},
        "error": {"Error": "CorruptInput", "Cause": "projection.json is not JSON"},
    }
    answer = app.handler(fail, FakeContext())
    assert (answer["kind"], answer["reason"]) == ("corrupt_input", "projection.json is not JSON")
    assert answer["message_attributes"]["richdoc.kind"] == {
        "DataType": "String",
        "StringValue": "corrupt_input",
    }
    assert app.handler(status_change("FAILED"), FakeContext()) == {"reconciled": False}
