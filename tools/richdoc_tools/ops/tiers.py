"""The parse tier ladder as data (``richdoc jobs tiers``, and the console).

Each parse attempt records its memory tier, the isolated child's memory ceiling and its
peak resident set. Over the fleet (every job, or those updated since a time), this shows
for each tier the documents whose parse finally succeeded there (their pages and size),
how often a parse at that tier ended in a resource limit (and so escalated, or at the
biggest tier failed), and the peak memory its children reached against their ceilings:
what to look at before changing ``ParseTier<N>MemoryMB`` or ``ShardPages``.

``tier_report`` is a pure function of jobs and their attempts; ``fleet_tiers`` reads
them (the status index for the jobs, then one query per job for its run's attempts).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from richdoc.jobs import OK_OUTCOME, Attempt, Job, JobStatus
from richdoc.taxonomy import ERROR_NAMES_BY_KIND, FailureKind

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

RESOURCE_LIMIT_ERRORS = frozenset(ERROR_NAMES_BY_KIND[FailureKind.RESOURCE_LIMIT])
MIB = 1 << 20


class Spread(BaseModel):
    model_config = ConfigDict(frozen=True)

    min: float
    median: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread | None:
        if not values:
            return None
        return cls(min=min(values), median=statistics.median(values), max=max(values))


class TierRow(BaseModel):
    """One memory tier (``richdoc jobs tiers --json``: ``tiers``)."""

    model_config = ConfigDict(frozen=True)

    tier: int
    succeeded: int  # jobs whose parse finally succeeded at this tier (their biggest)
    pages: Spread | None  # of those jobs
    size_mb: Spread | None  # of those jobs' source objects
    attempts: int  # parse attempts at this tier (shards count one each)
    resource_limits: int  # of them, ended by a resource limit
    escalation_rate: float | None  # resource_limits / attempts
    peak_rss_mb: Spread | None  # of the attempts whose child ran (not cached)
    mem_ceiling_mb: list[int]  # the ceilings the attempts ran under


class TierReport(BaseModel):
    """``richdoc jobs tiers --json``."""

    model_config = ConfigDict(frozen=True)

    jobs: int  # jobs read
    succeeded: int  # of them, SUCCEEDED with a parse tier known
    tiers: list[TierRow]


def final_tier(job: Job, attempts: Iterable[Attempt]) -> int | None:
    """The tier the job's parse finally succeeded at: the biggest among its run's
    successful parse attempts (a sharded document: its most demanding shard)."""
    tiers = [
        a.tier
        for a in attempts
        if a.run == job.run and a.stage == "parse" and a.outcome == OK_OUTCOME and a.tier
    ]
    return max(tiers, default=None)


def tier_report(jobs: Iterable[tuple[Job, Sequence[Attempt]]]) -> TierReport:
    finished: dict[int, list[Job]] = {}
    parses: dict[int, list[Attempt]] = {}
    read = succeeded = 0
    for job, attempts in jobs:
        read += 1
        for attempt in attempts:
            if attempt.stage == "parse" and attempt.tier is not None:
                parses.setdefault(attempt.tier, []).append(attempt)
        tier = final_tier(job, attempts) if job.status is JobStatus.SUCCEEDED else None
        if tier is not None:
            succeeded += 1
            finished.setdefault(tier, []).append(job)
    rows = []
    for tier in sorted(set(finished) | set(parses)):
        done, tried = finished.get(tier, []), parses.get(tier, [])
        limited = sum(a.outcome in RESOURCE_LIMIT_ERRORS for a in tried)
        rows.append(
            TierRow(
                tier=tier,
                succeeded=len(done),
                pages=Spread.of([j.page_count for j in done if j.page_count is not None]),
                size_mb=Spread.of(
                    [round(j.source.size / MIB, 2) for j in done if j.source.size is not None]
                ),
                attempts=len(tried),
                resource_limits=limited,
                escalation_rate=round(limited / len(tried), 4) if tried else None,
                peak_rss_mb=Spread.of([a.peak_rss_mb for a in tried if a.peak_rss_mb is not None]),
                mem_ceiling_mb=sorted(
                    {a.mem_ceiling_mb for a in tried if a.mem_ceiling_mb is not None}
                ),
            )
        )
    return TierReport(jobs=read, succeeded=succeeded, tiers=rows)


def fleet_tiers(operator: Operator, *, since: datetime | None = None) -> TierReport:
    store = operator.jobs
    jobs = store.list_jobs(since=since)
    return tier_report((job, store.attempts.of_job(job.job_id, job.run)) for job in jobs)
