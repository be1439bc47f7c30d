"""Attempt records: one item per Lambda attempt, numbered per stage and shard within a run.

Handlers open an attempt before working and close it with ``ok`` or their exception's
name. Opening is two requests. The first is one conditional update of the job item,
behind the run fence (a stale run stops there, before anything is recorded): it sets the
job's stage and tier and takes the next numbers of two counters, the job's
``attempt_seq`` (which orders its attempt items) and the count of the stage's attempts
(per shard: ``pages``) in the run, kept in the job's ``attempt_counts`` map under
``keys.attempt_series``. DynamoDB applies an update to one item atomically, so shards
opening side by side never share a number. The second is the put of the attempt item.

The map must exist for an ADD into it: the job is created with it and a redrive resets
it. A job created before the map existed gets it on its first attempt, counted from the
attempts it already has.

An attempt the platform killed stays ``running``; the catch path closes it with the
platform's error name, or adds one when the platform never ran the handler. The close
is conditional on ``running``, so a zombie handler's late write cannot reopen it.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Required, TypedDict, Unpack

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError
from pydantic import BaseModel

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.contracts import PageSpan, StepName
from richdoc.jobs.keys import attempt_key, attempt_series, attempts_prefix, job_key, partition_key
from richdoc.jobs.model import (
    MAX_REASON_CHARS,
    OK_OUTCOME,
    RUNNING_OUTCOME,
    TTL_ATTRIBUTE,
    Attempt,
    AttemptStage,
    Item,
    JobStatus,
    RecordedBy,
    expires_at,
)
from richdoc.jobs.phase import phase_of_step
from richdoc.jobs.table import Update, conditional_check_failed, fenced_update, query_all
from richdoc.taxonomy import Failure, MemoryUse, PipelineError

if TYPE_CHECKING:
    from types_boto3_dynamodb.service_resource import Table

_log = logging.getLogger(__name__)

ATTEMPT_SEQ = "attempt_seq"
ATTEMPT_COUNTS = "attempt_counts"


class AttemptDetails(TypedDict, total=False):
    """What a handler's attempt record carries besides its job, run and stage."""

    tier: int | None
    pages: PageSpan | None  # a shard's page range
    memory_mb: int | None
    request_id: str | None


class _AttemptFields(AttemptDetails, total=False):
    outcome: Required[str]
    started_at: Required[str]
    ended_at: str | None
    duration_ms: int | None
    reason: str | None
    recorded_by: RecordedBy


class _Numbers(BaseModel):
    """The counters as the numbering update returns them."""

    attempt_seq: int
    attempt_counts: dict[str, int]


def record_memory(attempt: Attempt, memory: MemoryUse) -> None:
    """Put a parse child's memory on its attempt (whole megabytes: items hold no floats)."""
    attempt.mem_ceiling_mb = memory.ceiling_mb
    peak = memory.peak_rss_mb
    attempt.peak_rss_mb = round(peak) if peak is not None else None


class AttemptRecords:
    """The attempt items of the jobs in ``table`` (``JobStore.attempts``)."""

    def __init__(
        self, table: Table, clock: Callable[[], str], *, retention_days: int | None
    ) -> None:
        self.table = table
        self.clock = clock
        # Days an item is kept after it is written (the jobs table's TTL); None keeps it.
        self.retention_days = retention_days

    def of_job(self, job_id: str, run: int | None = None) -> list[Attempt]:
        """A job's attempts (of one run, or of all), in the order they were opened."""
        items = query_all(
            self.table,
            KeyConditionExpression=Key("pk").eq(partition_key(job_id))
            & Key("sk").begins_with(attempts_prefix(run)),
            ConsistentRead=True,
        )
        return [Attempt.from_item(item) for item in items]

    def open(
        self, job_id: str, run: int, stage: StepName, **details: Unpack[AttemptDetails]
    ) -> Attempt:
        """Record that a Lambda attempt began (it stays 'running' if the platform kills it).
        The job takes the stage, tier and phase in the same write; StaleRun for a stale
        run (JobCancelled for a cancelled one)."""
        marks = (
            Update()
            .set("job_status", str(JobStatus.RUNNING))
            .set("updated_at", self.clock())
            .set("stage", stage)
            .set("tier", details.get("tier"))
            .set("phase", phase_of_step(stage, details.get("pages")))
        )
        return self._add(
            job_id,
            run,
            stage,
            marks,
            fenced=True,
            outcome=RUNNING_OUTCOME,
            started_at=self.clock(),
            **details,
        )

    def close(self, attempt: Attempt, outcome: str, reason: str | None = None) -> bool:
        """Close a running attempt (with ``attempt.cached`` and the memory when the handler
        set them). False if it was already closed (e.g. by a catch path)."""
        ended = self.clock()
        started = datetime.fromisoformat(attempt.started_at)
        duration_ms = int((datetime.fromisoformat(ended) - started).total_seconds() * 1000)
        update = (
            Update().set("outcome", outcome).set("ended_at", ended).set("duration_ms", duration_ms)
        )
        if reason:
            update.set("reason", reason[:MAX_REASON_CHARS])
        if attempt.cached is not None:
            update.set("cached", attempt.cached)
        if attempt.mem_ceiling_mb is not None:
            update.set("mem_ceiling_mb", attempt.mem_ceiling_mb)
        if attempt.peak_rss_mb is not None:
            update.set("peak_rss_mb", attempt.peak_rss_mb)
        try:
            with aws_errors("closing attempt"):
                retry_conflicts(
                    self.table.update_item,
                    Key=attempt_key(attempt.job_id, attempt.run, attempt.seq),
                    ConditionExpression=Attr("outcome").eq(RUNNING_OUTCOME),
                    **update.args(),
                )
        except ClientError as exc:
            if conditional_check_failed(exc):
                return False
            raise
        attempt.outcome, attempt.ended_at, attempt.duration_ms = outcome, ended, duration_ms
        attempt.reason = reason
        return True

    @contextlib.contextmanager
    def record(
        self, job_id: str, run: int, stage: StepName, **details: Unpack[AttemptDetails]
    ) -> Iterator[Attempt]:
        """Wrap one handler invocation: open, then close with 'ok' or the error name."""
        attempt = self.open(job_id, run, stage, **details)
        try:
            yield attempt
        except Exception as exc:
            if isinstance(exc, PipelineError) and exc.memory is not None:
                record_memory(attempt, exc.memory)
            try:
                self.close(attempt, type(exc).__name__, str(exc))
            except Exception as close_failure:
                # The handler's error decides the route (retry, escalate, dead-letter);
                # a failure to record it must not replace it. The attempt stays
                # 'running', like one the platform killed.
                _log.warning(
                    "could not close attempt %s of job %s: %s",
                    attempt.seq,
                    job_id,
                    close_failure,
                    exc_info=close_failure,
                )
                exc.add_note(
                    f"closing the attempt record failed too: "
                    f"{type(close_failure).__name__}: {close_failure}"
                )
            raise
        self.close(attempt, OK_OUTCOME)

    def record_platform_failure(
        self,
        job_id: str,
        run: int,
        stage: AttemptStage,
        tier: int | None,
        failure: Failure,
        *,
        pages: PageSpan | None = None,
    ) -> Attempt | None:
        """Catch path: account for an attempt the handler could not close itself.

        The platform killed it (timeout, OOM) or never ran it (service errors). An attempt
        still 'running' for the stage (and the shard of ``pages``: shards run side by side)
        is closed with the error name; if none is open and the last one does not already
        carry this error, one is added.
        """
        error = failure.error or str(failure.kind)
        stage_attempts = self._stage_attempts(job_id, run, stage, pages)
        for attempt in stage_attempts:
            if attempt.outcome == RUNNING_OUTCOME:
                self.close(attempt, error, failure.reason)
                return attempt
        if stage_attempts and stage_attempts[-1].outcome == error:
            return None
        now = self.clock()
        return self._add(
            job_id,
            run,
            stage,
            Update(),
            fenced=False,
            outcome=error,
            started_at=now,
            ended_at=now,
            duration_ms=0,
            tier=tier,
            pages=pages,
            reason=failure.reason[:MAX_REASON_CHARS],
            recorded_by="state-machine",
        )

    def close_running(
        self, job_id: str, run: int, outcome: str, reason: str | None
    ) -> list[Attempt]:
        """Close every attempt of the run still 'running' with ``outcome`` (the run's
        execution has ended, so nothing else will close them); returns them."""
        running = [a for a in self.of_job(job_id, run) if a.outcome == RUNNING_OUTCOME]
        return [a for a in running if self.close(a, outcome, reason)]

    # ---- numbering -------------------------------------------------------------------------

    def _stage_attempts(
        self, job_id: str, run: int, stage: AttemptStage, pages: PageSpan | None
    ) -> list[Attempt]:
        """The run's attempts of ``stage`` for the same shard (or the whole document)."""
        return [a for a in self.of_job(job_id, run) if a.stage == stage and a.pages == pages]

    def _add(
        self,
        job_id: str,
        run: int,
        stage: AttemptStage,
        update: Update,
        *,
        fenced: bool,
        **fields: Unpack[_AttemptFields],
    ) -> Attempt:
        """Number the attempt in ``update`` of the job item, then record it."""
        seq, number = self._number(job_id, run, stage, fields.get("pages"), update, fenced=fenced)
        attempt = Attempt(job_id=job_id, run=run, seq=seq, stage=stage, attempt=number, **fields)
        item = {**attempt_key(job_id, run, seq), **attempt.to_item()}
        # Kept as long as the job's outcome (the job item expires that long after it ends).
        expiry = expires_at(attempt.started_at, self.retention_days)
        if expiry is not None:
            item[TTL_ATTRIBUTE] = expiry
        with aws_errors("recording attempt"):
            retry_conflicts(self.table.put_item, Item=item)
        return attempt

    def _number(
        self,
        job_id: str,
        run: int,
        stage: AttemptStage,
        pages: PageSpan | None,
        update: Update,
        *,
        fenced: bool,
    ) -> tuple[int, int]:
        """``update`` of the job item, taking the attempt's numbers in the same write: its
        ``seq`` and its number within the stage (and shard) in the run. ``fenced``: only
        while run ``run`` is RUNNING (StaleRun otherwise); else the job must exist."""
        series = attempt_series(run, stage, pages)
        update.add(ATTEMPT_SEQ, 1).add((ATTEMPT_COUNTS, series), 1)
        try:
            written = self._write_numbers(job_id, run, update, fenced)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ValidationException":
                raise
            # No counter map yet (a job created before it existed): add it, then count.
            self._add_counters(job_id, run)
            written = self._write_numbers(job_id, run, update, fenced)
        numbers = _Numbers.model_validate(written)
        return numbers.attempt_seq, numbers.attempt_counts[series]

    def _write_numbers(self, job_id: str, run: int, update: Update, fenced: bool) -> Item:
        if fenced:
            return fenced_update(
                self.table,
                job_id,
                update,
                run=run,
                allowed=(JobStatus.RUNNING,),
                returns="UPDATED_NEW",
            )
        with aws_errors("numbering attempt"):
            return retry_conflicts(
                self.table.update_item,
                Key=job_key(job_id),
                ConditionExpression=Attr("pk").exists(),
                ReturnValues="UPDATED_NEW",
                **update.args(),
            )["Attributes"]

    def _add_counters(self, job_id: str, run: int) -> None:
        """The counter map of a job that has none, counting the run's attempts so far."""
        counts = Counter(attempt_series(run, a.stage, a.pages) for a in self.of_job(job_id, run))
        with aws_errors("numbering attempt"):
            retry_conflicts(
                self.table.update_item,
                Key=job_key(job_id),
                ConditionExpression=Attr("pk").exists(),
                **Update().set_if_absent(ATTEMPT_COUNTS, dict(counts)).args(),
            )
