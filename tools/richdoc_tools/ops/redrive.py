"""Starting the next run of jobs (``richdoc jobs redrive``, and the console).

A job that ended DEAD_LETTERED, FAILED (its dead-letter message on its way) or CANCELLED
gets run N+1 from its stored ingest message (the job record's ``message``: exactly what
arrived), sent to the ingest queue with the redrive attributes of run N
(``richdoc.deadletter.redrive_attributes``). The starter then starts run N+1 exactly once
however often such a message arrives (its run fence), as it does for a dead-letter
message redriven from the queue.

Before sending, the request is recorded on the job (``JobStore.request_redrive``: only
while run N is the job's run, in a redrivable status, with no fresh request of it), so a
second redrive while the first is on its way is reported as skipped rather than sent
again; a job already running again is no longer in a redrivable status and is skipped
too. A request older than ``REQUEST_FRESH_S`` is taken as lost (the message never left)
and may be made again: a late duplicate costs nothing (the starter's fence).

A redrive by filter (``select``: a status, and optionally kind, feature, signature and a
time) counts first, then sends at a bounded rate (``Pacer``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict

from richdoc.deadletter import redrive_attributes
from richdoc.jobs import Job, JobStatus, StaleRun
from richdoc.taxonomy import FailureKind
from richdoc_tools.ops.failures import matches_signature
from richdoc_tools.ops.jobs import find_jobs

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

# How long a recorded request keeps a second one from being sent (the starter takes a
# message within seconds; a backed-up ingest queue may take minutes).
REQUEST_FRESH_S = 900
DEFAULT_RATE_PER_S = 10.0


class RedriveOutcome(StrEnum):
    SENT = "sent"  # the message is on the ingest queue: the starter starts run N+1
    WOULD_SEND = "would_send"  # --dry-run
    SKIPPED = "skipped"  # running again already, or a redrive of the run is on its way
    REFUSED = "refused"  # not redrivable: it succeeded, or has no stored message
    NOT_FOUND = "not_found"
    FAILED = "failed"  # the message could not be sent (the request was taken back)


class JobRedriveResult(BaseModel):
    """What became of one job (``richdoc jobs redrive --json``: ``results``)."""

    model_config = ConfigDict(frozen=True)

    requested: str  # the id or prefix as given, or the job id (by filter)
    job_id: str | None
    outcome: RedriveOutcome
    status: JobStatus | None  # as found
    run: int | None  # the run the next one follows
    detail: str


class RedriveFilter(BaseModel):
    """Which jobs ``richdoc jobs redrive --status S ...`` redrives."""

    model_config = ConfigDict(frozen=True)

    status: JobStatus
    kind: FailureKind | None = None
    feature: str | None = None
    since: datetime | None = None  # updated at or after
    signature: str | None = None  # a failure signature (``richdoc jobs failures``) or prefix


class RedriveReport(BaseModel):
    """``richdoc jobs redrive --json``."""

    model_config = ConfigDict(frozen=True)

    matched: int
    dry_run: bool
    rate_per_s: float | None  # by filter; None by id
    results: list[JobRedriveResult]


@dataclass
class Pacer:
    """At most ``rate_per_s`` sends a second: the n-th waits until ``n / rate`` seconds
    after the first (the clock and the sleep are the caller's, for tests)."""

    rate_per_s: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _started: float | None = field(default=None, init=False)
    _sent: int = field(default=0, init=False)

    def wait(self) -> None:
        now = self.clock()
        if self._started is None:
            self._started = now
        due = self._started + self._sent / self.rate_per_s
        if due > now:
            self.sleep(due - now)
        self._sent += 1


def select(operator: Operator, wanted: RedriveFilter) -> list[Job]:
    """The jobs in ``wanted.status`` that match the rest of the filter, oldest first (the
    status index; the kind, feature and signature are read from each job)."""
    jobs = operator.jobs.list_jobs(wanted.status, since=wanted.since)

    def keep(job: Job) -> bool:
        failure = job.failure
        if wanted.kind is not None and (failure is None or failure.kind != wanted.kind):
            return False
        if wanted.feature is not None and (failure is None or failure.feature != wanted.feature):
            return False
        return wanted.signature is None or matches_signature(job, wanted.signature)

    return sorted(filter(keep, jobs), key=lambda j: (j.updated_at or "", j.job_id))


def redrive_ids(
    operator: Operator, job_ids: Sequence[str], *, by: str | None = None, dry_run: bool = False
) -> RedriveReport:
    """The next run of each job (ids or unique prefixes, all resolved first)."""
    found = find_jobs(operator, job_ids)
    who = by or operator.caller()
    results = [
        _redrive(operator, requested, job.job_id, by=who, dry_run=dry_run)
        if job is not None
        else JobRedriveResult(
            requested=requested,
            job_id=None,
            outcome=RedriveOutcome.NOT_FOUND,
            status=None,
            run=None,
            detail="no such job",
        )
        for requested, job in found.items()
    ]
    return RedriveReport(matched=len(found), dry_run=dry_run, rate_per_s=None, results=results)


def redrive_selected(
    operator: Operator,
    jobs: Sequence[Job],
    *,
    pacer: Pacer,
    by: str | None = None,
    dry_run: bool = False,
    on_result: Callable[[JobRedriveResult], None] | None = None,
) -> RedriveReport:
    """The next run of each of ``jobs`` (``select``'s), at the pacer's rate."""
    who = by or operator.caller()
    results = []
    for job in jobs:
        if not dry_run:
            pacer.wait()
        result = _redrive(operator, job.job_id, job.job_id, by=who, dry_run=dry_run)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return RedriveReport(
        matched=len(jobs), dry_run=dry_run, rate_per_s=pacer.rate_per_s, results=results
    )


def _redrive(
    operator: Operator, requested: str, job_id: str, *, by: str, dry_run: bool
) -> JobRedriveResult:
    store = operator.jobs
    job = store.get(job_id)  # as it is now: the index and the caller's list may lag

    def result(outcome: RedriveOutcome, detail: str, found: Job | None = job) -> JobRedriveResult:
        return JobRedriveResult(
            requested=requested,
            job_id=job_id,
            outcome=outcome,
            status=found.status if found else None,
            run=found.run if found else None,
            detail=detail,
        )

    if job is None:
        return result(RedriveOutcome.NOT_FOUND, "no such job")
    refusal = not_redrivable(job)
    if refusal is not None:
        return result(*refusal)
    fresh_after = datetime.now(UTC) - timedelta(seconds=REQUEST_FRESH_S)
    pending = _pending(job, fresh_after)
    if pending is not None:
        return result(RedriveOutcome.SKIPPED, pending)
    if dry_run:
        return result(RedriveOutcome.WOULD_SEND, f"would start run {job.run + 1}")
    try:
        requested_job = store.request_redrive(job.job_id, job.run, by=by, fresh_after=fresh_after)
    except StaleRun:  # someone else's redrive, or the run moved on: say which
        current = store.get(job_id)
        assert current is not None
        refusal = not_redrivable(current)
        if refusal is not None:
            return result(*refusal, found=current)
        return result(
            RedriveOutcome.SKIPPED,
            _pending(current, fresh_after) or "a redrive of the run is on its way",
            found=current,
        )
    assert job.message is not None and requested_job.redrive is not None
    try:
        operator.sqs.send_message(
            QueueUrl=operator.resources.ingest_queue_url,
            MessageBody=job.message,
            MessageAttributes=redrive_attributes(job.job_id, job.run),
        )
    except (BotoCoreError, ClientError) as exc:
        store.withdraw_redrive(job.job_id, job.run, requested_job.redrive.requested_at)
        return result(RedriveOutcome.FAILED, f"could not send the message: {exc}")
    return result(RedriveOutcome.SENT, f"run {job.run + 1} requested")


def not_redrivable(job: Job) -> tuple[RedriveOutcome, str] | None:
    """Why the job cannot run again now (skipped or refused), or None when it can."""
    if job.status in (JobStatus.QUEUED, JobStatus.RUNNING):
        return RedriveOutcome.SKIPPED, f"running already (run {job.run}, {job.status})"
    if not job.status.redrivable:
        return RedriveOutcome.REFUSED, f"the job is {job.status}: nothing to run again"
    if job.message is None:
        return (
            RedriveOutcome.REFUSED,
            "no stored ingest message (a job recorded before they were kept): "
            "redrive its dead-letter message with richdoc dlq redrive",
        )
    return None


def _pending(job: Job, fresh_after: datetime) -> str | None:
    """The redrive of the job's run already on its way, if any (a fresh request)."""
    request = job.redrive
    if request is None or request.from_run != job.run:
        return None
    if datetime.fromisoformat(request.requested_at) < fresh_after:
        return None
    return f"a redrive of run {job.run} was requested at {request.requested_at} by {request.by}"
