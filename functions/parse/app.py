"""Parse step: one source object in, the S3 key of its DoclingDocument out.

A thin adapter over ``richdoc.parse.step.parse_request`` (contract: ``richdoc.contracts.PARSE``).
It raises the ``richdoc.taxonomy`` exceptions unchanged: their class names are the Lambda
error names the state machine routes on (resource limits escalate to the next memory
tier). Module-level state (boto3 clients here, the warm docling worker inside
``richdoc.parse.step``) lives across warm invocations.
"""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.parse.step
from richdoc.contracts import PARSE, ParseInput, ParseOutput
from richdoc.stage import clients, metrics, stage_handler


@stage_handler(PARSE)
def handler(event: ParseInput, context: LambdaContext) -> ParseOutput:
    output = richdoc.parse.step.parse_request(
        event, store=clients.artifacts, memory_tier_mb=int(context.memory_limit_in_mb)
    )
    metrics.add_metric(name="ParseCacheHit", unit=MetricUnit.Count, value=int(output.cached))
    return output
