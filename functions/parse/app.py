"""The parse Lambda: one source object in, the S3 key of its DoclingDocument out.

A thin adapter over ``richdoc.parse.parse_event``. It raises the ``richdoc.taxonomy``
exceptions unchanged: their class names are the Lambda error names the state machine
routes on. Module-level state (the S3 client here, the warm docling worker inside
``richdoc.parse``) lives across warm invocations.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext
from richdoc.parse import parse_event

logger = Logger(service="parse")
metrics = Metrics(namespace="richdoc", service="parse")
tracer = Tracer(service="parse")


@cache
def s3_client() -> Any:
    return boto3.client("s3")


@logger.inject_lambda_context(correlation_id_path="job_id")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(run=event.get("run"), tier=event.get("tier"))
    result = parse_event(event, s3=s3_client(), memory_tier_mb=int(context.memory_limit_in_mb))
    metrics.add_metric(name="ParseCacheHit", unit=MetricUnit.Count, value=int(result["cached"]))
    with single_metric(
        name="ParseSeconds", unit=MetricUnit.Seconds, value=result["seconds"], namespace="richdoc"
    ) as metric:
        metric.add_dimension(name="tier", value=str(event.get("tier")))
    logger.info("parsed", extra=result)
    return result
