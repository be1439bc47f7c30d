"""Parse step: one source object in, the S3 key of its DoclingDocument out.

A thin adapter over ``richdoc.parse.step.parse_event``. It raises the ``richdoc.taxonomy``
exceptions unchanged: their class names are the Lambda error names the state machine
routes on (resource limits escalate to the next memory tier). Module-level state (boto3
clients here, the warm docling worker inside ``richdoc.parse.step``) lives across warm
invocations.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.parse.step
from richdoc.stage import StageEvent, clients, metrics, stage_handler


class ParseStageEvent(StageEvent):
    tier: int
    accept_partial: bool = False
    source: dict[str, Any]


@stage_handler("parse", ParseStageEvent)
def handler(event: ParseStageEvent, context: LambdaContext) -> dict[str, Any]:
    result = richdoc.parse.step.parse_event(
        event.model_dump(), s3=clients.s3, memory_tier_mb=int(context.memory_limit_in_mb)
    )
    metrics.add_metric(name="ParseCacheHit", unit=MetricUnit.Count, value=int(result["cached"]))
    return result
