"""Starter: ingest-queue batches -> jobs waiting in the backlog (richdoc.admission admits
them and starts their executions); removed source objects -> their jobs deleted, with
what was derived from them (richdoc.deletion).

Only records that failed (throttling, service errors, malformed messages) are reported as
batch item failures; SQS redelivers just those, and after maxReceiveCount moves them to
the dead-letter queue. AWS throttling and connection errors arrive as ``Transient`` and
are logged as such.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.admission.tenants import tenant_key_from_env
from richdoc.ingest import MalformedMessage, Starter, StartOutcome, body_preview
from richdoc.logcontext import log_invocation
from richdoc.metadata import prefix_from_env
from richdoc.metrics import NAMESPACE
from richdoc.taxonomy import Transient
from richdoc.tracing import handler_tracer
from richdoc.wiring import wiring

logger = Logger(service="starter")
tracer = handler_tracer()
metrics = Metrics(namespace=NAMESPACE)
processor = BatchProcessor(event_type=EventType.SQS)


def starter() -> Starter:
    return Starter(
        s3=wiring.s3,
        jobs=wiring.jobs,
        backlog=wiring.backlog,
        state_machine_arn=os.environ["STATE_MACHINE_ARN"],
        clarify_default=os.environ.get("CLARIFY_DEFAULT", "false").lower() == "true",
        deletion=wiring.deletion,
        metadata_prefix=prefix_from_env(),
        tenant_key=tenant_key_from_env(),
    )


# One data point per ingest record the starter failed on: StarterErrorsAlarm counts these.
# With partial batch responses a batch with failed records is a successful invocation, so
# the function's own Errors metric sees only batches where every record failed.
FAILED_RECORDS_METRIC = "IngestRecordsFailed"


@tracer.capture_method
def record_handler(record: SQSRecord) -> None:
    try:
        handle_record(record)
    except Exception:
        metrics.add_metric(name=FAILED_RECORDS_METRIC, unit=MetricUnit.Count, value=1)
        raise


def handle_record(record: SQSRecord) -> None:
    attributes = {name: attr.string_value or "" for name, attr in record.message_attributes.items()}
    try:
        results = starter().handle_message(record.body, attributes)
    except Transient as exc:
        # A throttled or unreachable service: SQS redelivers the message, nothing is lost.
        logger.warning(
            "transient failure; the message will be redelivered",
            extra={"message_id": record.message_id, "kind": str(exc.kind), "reason": exc.reason},
        )
        metrics.add_metric(name="IngestTransientFailures", unit=MetricUnit.Count, value=1)
        raise
    except MalformedMessage as exc:
        # Raised again: SQS redelivers it, then its redrive policy moves it to the DLQ.
        logger.warning(
            "malformed ingest message",
            extra={
                "reason": str(exc),
                "body": body_preview(record.body),
                "message_id": record.message_id,
                "receive_count": record.attributes.approximate_receive_count,
            },
        )
        raise
    for result in results:
        logger.info(
            "ingest message handled",
            extra={"job_id": result.job_id, "run": result.run, "outcome": str(result.outcome)},
        )
        if result.outcome is StartOutcome.QUEUED:
            metrics.add_metric(name="JobsQueued", unit=MetricUnit.Count, value=1)
        elif result.outcome is StartOutcome.DELETED:
            metrics.add_metric(name="JobsDeleted", unit=MetricUnit.Count, value=1)
        else:
            metrics.add_metric(name="DuplicateNotifications", unit=MetricUnit.Count, value=1)


@log_invocation(logger)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
