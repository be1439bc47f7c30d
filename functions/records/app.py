"""Records: the job record transitions the state machine asks for (start, escalate,
shard_failed, succeed, fail, mark_dead_lettered, claim_slots), the reconciler EventBridge
invokes when an execution ends outside the definition's routes, and the scheduled sweep
of stuck jobs (and of admission's slot ledger).
The logic is ``richdoc.records``; this module hands it Powertools and the wiring."""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.admission.reconcile import SlotAudit
from richdoc.logcontext import log_invocation
from richdoc.metrics import NAMESPACE
from richdoc.records.actions import Actions
from richdoc.records.backstops import (
    DEFAULT_WORKFLOW_TIMEOUT_S,
    WORKFLOW_TIMEOUT_ENV,
    Backstops,
    ExecutionStatusChangeEvent,
)
from richdoc.records.calls import ScheduledSweep
from richdoc.records.requests import parse_request
from richdoc.records.sweep_walk import TimeBudget
from richdoc.tracing import handler_tracer
from richdoc.wiring import wiring

logger = Logger(service="records")
tracer = handler_tracer()
metrics = Metrics(namespace=NAMESPACE)


def backstops() -> Backstops:
    return Backstops(
        jobs=wiring.jobs,
        sqs=wiring.sqs,
        sfn=wiring.sfn,
        dead_letter_queue_url=os.environ["DEAD_LETTER_QUEUE_URL"],
        logger=logger,
        workflow_timeout_s=int(os.environ.get(WORKFLOW_TIMEOUT_ENV, DEFAULT_WORKFLOW_TIMEOUT_S)),
        deletion=wiring.deletion,
        audit=SlotAudit(ledger=wiring.ledger, backlog=wiring.backlog, jobs=wiring.jobs),
    )


@log_invocation(logger, correlation_id_path="job_id")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse_request(event)
    if isinstance(request, ScheduledSweep):
        # The sweep's walk stops in time to save where it stopped (the next sweep goes on).
        budget = TimeBudget.of_invocation(context.get_remaining_time_in_millis)
        return backstops().sweep(request, budget).model_dump(mode="json")
    if isinstance(request, ExecutionStatusChangeEvent):
        return backstops().reconcile(request).model_dump(mode="json")
    logger.thread_safe_append_keys(run=request.run, action=request.action)
    actions = Actions(jobs=wiring.jobs, logger=logger, metrics=metrics, ledger=wiring.ledger)
    return actions.answer(request).model_dump(mode="json")
