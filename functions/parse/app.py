"""Parse image handlers: the parse step, and the plan that decides how a document is parsed.

``handler`` (the three parse tiers) is a thin adapter over
``richdoc.parse.step.parse_request`` (contract: ``richdoc.contracts.PARSE``): one source
object, or one page-range shard of it, in; the S3 key of its DoclingDocument out. It
raises the ``richdoc.taxonomy`` exceptions unchanged: their class names are the Lambda
error names the state machine routes on (resource limits escalate to the next memory
tier).

``plan`` (the plan function: the same image, ``ImageConfig.Command`` ``app.plan``, since
the page count needs the worker's pdfium) adapts ``richdoc.parse.plan_step.plan_request``
(contract: ``richdoc.contracts.PLAN``); the stage handler records its decision on the job
(``richdoc.stage.record_decision``: how many shards the parse runs as, and the digest of
the bytes it inspected).

What warm invocations reuse: the clients and stores (``richdoc.wiring``) and the warm
docling worker inside ``richdoc.parse.step``.
"""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.parse.plan_step
import richdoc.parse.step
from richdoc.contracts import PARSE, PLAN, ParseInput, ParseOutput, PlanInput, PlanOutput
from richdoc.parse.escalation import no_bigger_tier
from richdoc.stage import metrics, stage_handler
from richdoc.wiring import wiring


@stage_handler(PARSE)
def handler(event: ParseInput, context: LambdaContext) -> ParseOutput:
    memory_mb = int(context.memory_limit_in_mb)
    if event.tier > 1:  # an escalation: never parse again at the memory that ran out
        earlier = wiring.jobs.attempts.of_job(event.job_id, event.run)
        refusal = no_bigger_tier(event.tier, memory_mb, event.attempt_pages(), earlier)
        if refusal is not None:
            raise refusal
    output = richdoc.parse.step.parse_request(
        event,
        store=wiring.artifacts_of(event.job_id),
        memory_tier_mb=memory_mb,
        remaining_s=lambda: context.get_remaining_time_in_millis() / 1000,
    )
    metrics.add_metric(name="ParseCacheHit", unit=MetricUnit.Count, value=int(output.cached))
    return output


@stage_handler(PLAN)
def plan(event: PlanInput, context: LambdaContext) -> PlanOutput:
    output = richdoc.parse.plan_step.plan_request(
        event,
        store=wiring.artifacts,
        memory_tier_mb=int(context.memory_limit_in_mb),
        remaining_s=lambda: context.get_remaining_time_in_millis() / 1000,
    )
    metrics.add_metric(name="DocumentShards", unit=MetricUnit.Count, value=output.shard_count)
    return output
