"""Notifier: the jobs table's stream -> each document's manifest refreshed and one
completion event per terminal change of a job, on the stack's event bus.

The logic is ``richdoc.notifier``. Records are handled in order, and only those that
failed are reported as batch item failures: Lambda retries from the first of them (the
event source mapping bisects a failing batch, retries it for as long as its age allows,
then writes what it could not deliver, whole, to the OnFailure bucket).
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
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.artifacts import ARTIFACT_BUCKET_ENV
from richdoc.jobs import Job
from richdoc.logcontext import log_invocation
from richdoc.manifests import ManifestKeeper
from richdoc.metrics import NAMESPACE
from richdoc.notifier import EVENT_BUS_ENV, Notifier
from richdoc.tracing import handler_tracer
from richdoc.wiring import wiring

logger = Logger(service="notifier")
tracer = handler_tracer()
metrics = Metrics(namespace=NAMESPACE)
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def notifier() -> Notifier:
    results_bucket = os.environ[ARTIFACT_BUCKET_ENV]
    return Notifier(
        events=wiring.events,
        bus_name=os.environ[EVENT_BUS_ENV],
        manifests=ManifestKeeper(s3=wiring.s3, jobs=wiring.jobs, results_bucket=results_bucket),
        results_bucket=results_bucket,
    )


@tracer.capture_method
def record_handler(record: DynamoDBRecord) -> None:
    change = record.dynamodb
    if change is None:
        return
    detail = notifier().job_changed(
        Job.from_image(change.old_image), Job.from_image(change.new_image)
    )
    if detail is not None:
        logger.info(
            "completion event published",
            extra={
                "job_id": detail.job_id,
                "run": detail.run,
                "status": str(detail.status),
                "event_id": detail.event_id,
            },
        )
        metrics.add_metric(name="CompletionEvents", unit=MetricUnit.Count, value=1)


@log_invocation(logger)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
