"""What every step handler shares: the typed contract, Powertools, the attempt record.

A step handler (plan, parse, merge, project, detect) is a plain function from its input
model to its output model (``richdoc.contracts``: ``PLAN``, ``PARSE``, ``MERGE``,
``PROJECT``, ``DETECT``); the
``stage_handler`` decorator validates the state input once, returns the output as JSON,
adds the Logger (job id as correlation id, run/tier/execution as keys, per
invocation: see ``richdoc.logcontext``), EMF metrics and
X-Ray tracing, and records the invocation as an attempt item that is closed with ``ok``
or the error name (a shard's attempt carries its page range, a parse answered from the
artifact cache says ``cached``, a parse child's memory ceiling and peak resident set are
on its attempt). What a step's output decides for the job is recorded within its attempt
(``record_decision``: the output's ``decision``), so no handler body writes the job
record; a finished step then tells the job's progress (``step_done``). The decorator
knows no step by name or type: each contract says what its step writes and whether it is
the run's last, each output what it decides. Attempts
the platform kills stay ``running`` until the state machine's catch path closes them. A
step that finds, once its work is done, that its job was deleted meanwhile deletes what it
wrote and fails with ``StaleRun`` (``richdoc.deletion``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from richdoc.contracts import InputT, OutputT, StageContract, StageInput, StageOutput
from richdoc.jobs import JobStore
from richdoc.jobs.attempts import record_memory
from richdoc.jobs.references import DigestReferences
from richdoc.logcontext import log_invocation
from richdoc.metrics import NAMESPACE, emit
from richdoc.tracing import handler_tracer
from richdoc.wiring import wiring

tracer = handler_tracer()
metrics = Metrics(namespace=NAMESPACE)

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def record_decision(
    jobs: JobStore, references: DigestReferences, event: StageInput, output: StageOutput
) -> None:
    """What a step's output decides for its job (``StageOutput.decision``), written as
    part of its attempt (a failed write fails the attempt): the shard count, the only
    write of it, and the digest of the bytes inspected, so that the shards' registrations
    on that digest find it on the job (``richdoc.jobs.references``)."""
    decision = output.decision()
    if decision is None:
        return
    jobs.record_shards(event.job_id, event.run, decision.shard_count)
    if decision.sha256:
        references.record_on_job(decision.sha256, event.job_id)


def step_done(jobs: JobStore, event: StageInput, contract: StageContract[Any, Any]) -> None:
    """What a finished step tells the job's progress: a shard's parse counts as finished
    (exactly once, however often it ran), and after the run's last step only recording
    is left. Behind the run fence: a cancelled run's step fails here (JobCancelled) and
    the run stops."""
    pages = event.attempt_pages()
    if pages:
        jobs.shard_done(event.job_id, event.run, pages)
    elif contract.last:
        jobs.mark_recording(event.job_id, event.run)


def stage_handler(
    contract: StageContract[InputT, OutputT],
) -> Callable[[Callable[[InputT, LambdaContext], OutputT]], Handler]:
    """Turn ``body(input, context) -> output`` into a recorded, observable Lambda handler
    that validates the state input into ``contract.input`` once and returns
    ``contract.output`` as JSON."""
    stage = contract.name
    logger = Logger(service=stage)
    writes = contract.writes

    def decorate(body: Callable[[InputT, LambdaContext], OutputT]) -> Handler:
        @log_invocation(logger, correlation_id_path="job_id")
        @tracer.capture_lambda_handler
        @metrics.log_metrics
        @functools.wraps(body)
        def handler(raw: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            event = contract.input.model_validate(raw)
            tier = event.attempt_tier()
            logger.thread_safe_append_keys(run=event.run, execution=event.execution, tier=tier)
            started = time.monotonic()
            with wiring.jobs.attempts.record(
                event.job_id,
                event.run,
                stage,
                tier=tier,
                pages=event.attempt_pages(),
                memory_mb=int(context.memory_limit_in_mb),
                request_id=context.aws_request_id,
            ) as attempt:
                output = body(event, context)
                record_decision(wiring.jobs, wiring.references, event, output)
                attempt.cached = output.attempt_cached()
                memory = output.attempt_memory()
                if memory is not None:
                    record_memory(attempt, memory)
                if writes is not None:
                    # Deleted while this ran? What it wrote goes now, and the run stops.
                    wiring.deletion.discard_if_deleted(event.job_id, writes)
            step_done(wiring.jobs, event, contract)
            result = output.model_dump(mode="json")
            # Parse durations by memory tier too.
            by_tier = {"tier": str(tier)} if tier is not None else {}
            seconds = time.monotonic() - started
            emit("StageSeconds", seconds, MetricUnit.Seconds, stage=stage, **by_tier)
            logger.info("stage finished", extra={"result": result})
            return result

        return handler

    return decorate
