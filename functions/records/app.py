"""Records: the job record transitions the state machine asks for (start, escalate,
shard_failed, succeed, fail, mark_dead_lettered), the reconciler EventBridge invokes when
an execution ends outside the definition's routes, and the scheduled sweep of stuck jobs.
The logic is ``richdoc.records``; this module wires Powertools and the AWS clients to it."""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.artifacts import ArtifactStore
from richdoc.contracts import ScheduledSweep
from richdoc.deletion import Deletion
from richdoc.jobs import JobStore
from richdoc.jobs.references import DigestReferences
from richdoc.logcontext import log_invocation
from richdoc.records.actions import Actions
from richdoc.records.backstops import (
    DEFAULT_WORKFLOW_TIMEOUT_S,
    WORKFLOW_TIMEOUT_ENV,
    Backstops,
    ExecutionStatusChangeEvent,
)
from richdoc.records.dispatch import answer, parse_request
from richdoc.tracing import handler_tracer

logger = Logger(service="records")
tracer = handler_tracer()
metrics = Metrics(namespace="richdoc")
jobs = JobStore.from_env(boto3.resource("dynamodb"))
actions = Actions(jobs=jobs, logger=logger, metrics=metrics)
backstops = Backstops(
    jobs=jobs,
    sqs=boto3.client("sqs"),
    sfn=boto3.client("stepfunctions"),
    dead_letter_queue_url=os.environ["DEAD_LETTER_QUEUE_URL"],
    logger=logger,
    workflow_timeout_s=int(os.environ.get(WORKFLOW_TIMEOUT_ENV, DEFAULT_WORKFLOW_TIMEOUT_S)),
    deletion=Deletion(
        jobs=jobs,
        references=DigestReferences.from_env(jobs.table),
        artifacts=ArtifactStore.from_env(boto3.client("s3")),
    ),
)


@log_invocation(logger, correlation_id_path="job_id")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse_request(event)
    if not isinstance(request, ExecutionStatusChangeEvent | ScheduledSweep):
        logger.thread_safe_append_keys(run=request.run, action=request.action)
    return answer(request, actions=actions, backstops=backstops).model_dump(mode="json")
