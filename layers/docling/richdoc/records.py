"""Job records for the state machine (start, tier escalation, success, failure) and the
reconciler of executions that ended outside the definition's routes.

The state machine calls the records function with one ``richdoc.contracts.RecordsAction``;
each action is a run-fenced transition of the job item (``richdoc.jobs``). ``fail`` also
returns the classified failure and the SQS message attributes the dead-letter state
attaches (``FailureRecorded``).

The same function reconciles executions that ended outside the definition's routes (the
workflow-level timeout, StopExecution, a failure path that itself failed): EventBridge
delivers their "Step Functions Execution Status Change" event, and a job still open for
that run is dead-lettered as an internal failure with its original message, so every
upload ends in a terminal state.

``functions/records/app.py`` is the Lambda adapter: it parses the event
(``parse_request``) and hands it to ``Records.handle``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from richdoc.contracts import (
    RECORDS_ACTION,
    EscalationRecorded,
    ExecutionInput,
    FailureRecorded,
    JobCounts,
    JobOutputs,
    MessageAttribute,
    Reconciled,
    Recorded,
    RecordEscalation,
    RecordFailure,
    RecordStart,
    RecordSuccess,
)
from richdoc.deadletter import failure_attributes
from richdoc.jobs import JobStore, StaleRun
from richdoc.taxonomy import Failure, FailureKind

NAMESPACE = "richdoc"
STATUS_CHANGE = "Step Functions Execution Status Change"


# ---- the EventBridge event (Powertools has no Step Functions model) --------------------------


class ExecutionStatusChange(BaseModel):
    """The ``detail`` of a "Step Functions Execution Status Change" event."""

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    execution_arn: str = Field(alias="executionArn")
    state_machine_arn: str = Field(alias="stateMachineArn")
    name: str
    status: Literal["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]
    start_date: int | None = Field(default=None, alias="startDate")
    stop_date: int | None = Field(default=None, alias="stopDate")
    input: str | None = None  # the execution input, JSON (absent when it was too large)
    output: str | None = None
    error: str | None = None
    cause: str | None = None

    def execution_input(self) -> ExecutionInput | None:
        """The input the starter gave the execution; None when it is not one of ours."""
        if not self.input:
            return None
        try:
            return ExecutionInput.model_validate_json(self.input)
        except ValidationError:
            return None


class ExecutionStatusChangeEvent(EventBridgeModel):
    detail_type: Literal["Step Functions Execution Status Change"] = Field(alias="detail-type")
    detail: ExecutionStatusChange


RecordsRequest = (
    RecordStart | RecordEscalation | RecordSuccess | RecordFailure | ExecutionStatusChangeEvent
)
RecordsResult = Recorded | EscalationRecorded | FailureRecorded | Reconciled


def parse_request(event: Mapping[str, Any]) -> RecordsRequest:
    """A state machine action, or the status-change event EventBridge delivers."""
    if event.get("detail-type") == STATUS_CHANGE:
        return ExecutionStatusChangeEvent.model_validate(event)
    return RECORDS_ACTION.validate_python(event)


# ---- the records logic ------------------------------------------------------------------------


class MessageSender(Protocol):
    """The part of the boto3 SQS client the reconciler uses."""

    def send_message(
        self,
        *,
        QueueUrl: str,
        MessageBody: str,
        MessageAttributes: Mapping[str, Mapping[str, str]],
    ) -> object: ...


class Records:
    def __init__(
        self,
        *,
        jobs: JobStore,
        sqs: MessageSender,
        dead_letter_queue_url: str,
        logger: Logger,
        metrics: Metrics,
    ) -> None:
        self.jobs = jobs
        self.sqs = sqs
        self.dead_letter_queue_url = dead_letter_queue_url
        self.logger = logger
        self.metrics = metrics

    def handle(self, request: RecordsRequest) -> RecordsResult:
        match request:
            case RecordStart():
                return self.start(request)
            case RecordEscalation():
                return self.escalate(request)
            case RecordSuccess():
                return self.succeed(request)
            case RecordFailure():
                return self.fail(request)
            case ExecutionStatusChangeEvent():
                return self.reconcile(request)

    def start(self, action: RecordStart) -> Recorded:
        self.jobs.mark_running(action.job_id, action.run, action.execution_arn)
        self.metrics.add_metric(name="JobsRunning", unit=MetricUnit.Count, value=1)
        return Recorded(recorded="start")

    def escalate(self, action: RecordEscalation) -> EscalationRecorded:
        failure = action.error.failure()
        self.jobs.record_platform_failure(
            action.job_id, action.run, "parse", action.from_tier, failure
        )
        self.metrics.add_metric(name="TierEscalations", unit=MetricUnit.Count, value=1)
        self.logger.warning(
            "parse tier escalation", extra={"from_tier": action.from_tier, "error": failure.error}
        )
        return EscalationRecorded(
            recorded="escalate", from_tier=action.from_tier, error=failure.error
        )

    def succeed(self, action: RecordSuccess) -> Recorded:
        results = action.results
        self.jobs.succeed(
            action.job_id,
            action.run,
            outputs=JobOutputs.of(results),
            counts=JobCounts.of(results),
            pipeline=results.parse.pipeline,
            sha256=results.parse.sha256,
        )
        self.metrics.add_metric(name="JobsSucceeded", unit=MetricUnit.Count, value=1)
        return Recorded(recorded="succeed")

    def fail(self, action: RecordFailure) -> FailureRecorded:
        failure = action.error.failure()
        where = action.failed_at
        self.jobs.record_platform_failure(
            action.job_id, action.run, where.stage, where.tier, failure
        )
        self.jobs.dead_letter(action.job_id, action.run, failure)
        self._count_dead_lettered(failure)
        self.logger.error("job dead-lettered", extra={"failure": failure.to_json_line()})
        attributes = failure_attributes(action.job_id, action.run, failure)
        return FailureRecorded(
            kind=failure.kind,
            reason=failure.reason,
            feature=failure.feature,
            error=failure.error,
            message_attributes={
                name: MessageAttribute.model_validate(value) for name, value in attributes.items()
            },
        )

    def reconcile(self, event: ExecutionStatusChangeEvent) -> Reconciled:
        """Dead-letter the job of an execution that ended without the definition recording
        it; nothing for executions that are not ours, of an older run, or already closed."""
        detail = event.detail
        execution = detail.execution_input()
        job = self.jobs.get(execution.job_id) if execution else None
        if execution is None or job is None or job.run != execution.run or job.status.terminal:
            return Reconciled(reconciled=False)
        failure = Failure(
            kind=FailureKind.INTERNAL,
            reason=" ".join(
                part for part in (f"execution {detail.status}:", detail.error, detail.cause) if part
            ),
            error=f"Execution.{detail.status}",
        )
        try:
            self.jobs.record_platform_failure(
                execution.job_id, execution.run, job.stage or "workflow", job.tier, failure
            )
            self.jobs.dead_letter(execution.job_id, execution.run, failure)
        except StaleRun:  # a newer run took the job over meanwhile
            return Reconciled(reconciled=False)
        self.sqs.send_message(
            QueueUrl=self.dead_letter_queue_url,
            MessageBody=execution.message,
            MessageAttributes=failure_attributes(execution.job_id, execution.run, failure),
        )
        self._count_dead_lettered(failure)
        self.logger.error(
            "execution ended outside the definition; job dead-lettered",
            extra={"job_id": execution.job_id, "run": execution.run, "status": detail.status},
        )
        return Reconciled(reconciled=True)

    @staticmethod
    def _count_dead_lettered(failure: Failure) -> None:
        with single_metric(
            name="JobsDeadLettered", unit=MetricUnit.Count, value=1, namespace=NAMESPACE
        ) as metric:
            metric.add_dimension(name="kind", value=str(failure.kind))
