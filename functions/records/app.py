"""Job records for the state machine: start, tier escalation, success, failure.

The state machine calls this one function with an ``action``; each action is a
run-fenced transition of the job item (see richdoc.jobs). ``fail`` also returns the
classified failure and the SQS message attributes the dead-letter state attaches.

The same function reconciles executions that ended outside the definition's routes (the
workflow-level timeout, StopExecution, a failure path that itself failed): EventBridge
delivers their status change, and a job still open for that run is dead-lettered as an
internal failure with its original message, so every upload ends in a terminal state.
"""

from __future__ import annotations

import json
import os
from typing import Annotated, Any, Literal

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from richdoc.deadletter import failure_attributes
from richdoc.jobs import JobStore, StaleRun
from richdoc.logcontext import log_invocation
from richdoc.taxonomy import Failure, FailureKind
from richdoc.tracing import handler_tracer

logger = Logger(service="records")
tracer = handler_tracer()
metrics = Metrics(namespace="richdoc")
jobs = JobStore.from_env(boto3.resource("dynamodb"))
sqs = boto3.client("sqs")
STATUS_CHANGE = "Step Functions Execution Status Change"


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")

    job_id: str
    run: int


class CaughtError(BaseModel):
    """What a Catch puts at ResultPath: the error name and its cause."""

    Error: str
    Cause: str | None = None


class Start(_Action):
    action: Literal["start"]
    execution_arn: str


class Escalate(_Action):
    action: Literal["escalate"]
    from_tier: int
    error: CaughtError


class StepOutputs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    parse: dict[str, Any]
    project: dict[str, Any]
    detect: dict[str, Any]


class Succeed(_Action):
    action: Literal["succeed"]
    results: StepOutputs


class FailedAt(BaseModel):
    stage: str
    tier: int | None = None


class Fail(_Action):
    action: Literal["fail"]
    failed_at: FailedAt
    error: CaughtError


RecordAction = Annotated[Start | Escalate | Succeed | Fail, Field(discriminator="action")]
_actions: TypeAdapter[Start | Escalate | Succeed | Fail] = TypeAdapter(RecordAction)


def _count_dead_lettered(failure: Failure) -> None:
    with single_metric(
        name="JobsDeadLettered", unit=MetricUnit.Count, value=1, namespace="richdoc"
    ) as metric:
        metric.add_dimension(name="kind", value=str(failure.kind))


def _start(a: Start) -> dict[str, Any]:
    jobs.mark_running(a.job_id, a.run, a.execution_arn)
    metrics.add_metric(name="JobsRunning", unit=MetricUnit.Count, value=1)
    return {"recorded": "start"}


def _escalate(a: Escalate) -> dict[str, Any]:
    failure = Failure.from_error(a.error.Error, a.error.Cause)
    jobs.record_platform_failure(a.job_id, a.run, "parse", a.from_tier, failure)
    metrics.add_metric(name="TierEscalations", unit=MetricUnit.Count, value=1)
    logger.warning(
        "parse tier escalation", extra={"from_tier": a.from_tier, "error": failure.error}
    )
    return {"recorded": "escalate", "from_tier": a.from_tier, "error": failure.error}


def _succeed(a: Succeed) -> dict[str, Any]:
    parse, project, detect = a.results.parse, a.results.project, a.results.detect
    jobs.succeed(
        a.job_id,
        a.run,
        outputs={
            "docling_key": parse["docling_key"],
            "projection_key": project["projection_key"],
            "detection_key": detect["detection_key"],
        },
        counts={**project["counts"], **detect["counts"]},
        pipeline=parse.get("pipeline"),
        sha256=parse.get("sha256"),
    )
    metrics.add_metric(name="JobsSucceeded", unit=MetricUnit.Count, value=1)
    return {"recorded": "succeed"}


def _fail(a: Fail) -> dict[str, Any]:
    failure = Failure.from_error(a.error.Error, a.error.Cause)
    jobs.record_platform_failure(a.job_id, a.run, a.failed_at.stage, a.failed_at.tier, failure)
    jobs.dead_letter(a.job_id, a.run, failure)
    _count_dead_lettered(failure)
    logger.error("job dead-lettered", extra={"failure": failure.to_json_line()})
    return {
        "kind": str(failure.kind),
        "reason": failure.reason,
        "feature": failure.feature,
        "error": failure.error,
        "message_attributes": failure_attributes(a.job_id, a.run, failure),
    }


def _reconcile(event: dict[str, Any]) -> dict[str, Any]:
    detail = event["detail"]
    execution_input = json.loads(detail.get("input") or "{}")
    job_id, run = execution_input.get("job_id"), execution_input.get("run")
    job = jobs.get(job_id) if job_id else None
    if job is None or job.run != run or job.status.terminal:
        return {"reconciled": False}
    failure = Failure(
        kind=FailureKind.INTERNAL,
        reason=" ".join(
            str(part)
            for part in (f"execution {detail['status']}:", detail.get("error"), detail.get("cause"))
            if part
        ),
        error=f"Execution.{detail['status']}",
    )
    try:
        jobs.record_platform_failure(job_id, run, job.stage or "workflow", job.tier, failure)
        jobs.dead_letter(job_id, run, failure)
    except StaleRun:
        return {"reconciled": False}
    sqs.send_message(
        QueueUrl=os.environ["DEAD_LETTER_QUEUE_URL"],
        MessageBody=execution_input.get("message", "{}"),
        MessageAttributes=failure_attributes(job_id, run, failure),
    )
    _count_dead_lettered(failure)
    logger.error(
        "execution ended outside the definition; job dead-lettered",
        extra={"job_id": job_id, "run": run, "status": detail["status"]},
    )
    return {"reconciled": True}


@log_invocation(logger, correlation_id_path="job_id")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("detail-type") == STATUS_CHANGE:
        return _reconcile(event)
    action = _actions.validate_python(event)
    logger.thread_safe_append_keys(run=action.run, action=action.action)
    if isinstance(action, Start):
        return _start(action)
    if isinstance(action, Escalate):
        return _escalate(action)
    if isinstance(action, Succeed):
        return _succeed(action)
    return _fail(action)
