"""Dispatcher: the jobs table's stream (a job starts waiting; a job holding slots ends its
run) and a schedule (every minute) -> slots released, waiting jobs admitted, their
executions started. The logic is ``richdoc.admission.dispatcher``; this module hands it
Powertools and the wiring.

Every step is idempotent (conditional ledger writes, executions named after the run), so
a failed invocation is simply retried: the stream's batch by its event source mapping,
the schedule's event by Lambda's asynchronous retries (and the next minute in any case).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.admission.dispatcher import Dispatcher
from richdoc.jobs import Job
from richdoc.logcontext import log_invocation
from richdoc.tracing import handler_tracer
from richdoc.wiring import wiring

logger = Logger(service="dispatcher")
tracer = handler_tracer()


def dispatcher() -> Dispatcher:
    return Dispatcher(
        jobs=wiring.jobs,
        ledger=wiring.ledger,
        backlog=wiring.backlog,
        sfn=wiring.sfn,
        state_machine_arn=os.environ["STATE_MACHINE_ARN"],
        logger=logger,
        now=lambda: datetime.now(UTC),
    )


@log_invocation(logger)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("detail-type") == "Scheduled Event":
        done = dispatcher().schedule()
    else:
        images = (
            Job.from_image(record.dynamodb.new_image if record.dynamodb else None)
            for record in DynamoDBStreamEvent(event).records
        )
        done = dispatcher().changes(job for job in images if job is not None)
    if done.released or done.admitted or done.restarted:
        logger.info("dispatched", extra=done.model_dump())
    return done.model_dump()
