"""A job as the console's lists and headers show it: status, phase, shard progress.

The phase says what the job is doing in words, from what the record holds (its status,
stage and tier), and the shard progress counts only what is exact: the page-range shards
of the current run whose last attempt succeeded, out of the shards the plan made.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import url_for
from pydantic import BaseModel

from richdoc.jobs import Attempt, Job, JobStatus
from richdoc_tools.operator import shard_parses

_STAGE_PHASES = {
    "plan": "planning",
    "merge": "merging",
    "project": "projecting",
    "detect": "detecting",
}


class ShardProgress(BaseModel):
    done: int
    total: int


class JobSummary(BaseModel):
    job_id: str
    key: str
    status: str
    terminal: bool
    run: int
    stage: str | None
    tier: int | None
    shards: int | None
    phase: str
    progress: ShardProgress | None
    failure_kind: str | None
    feature: str | None
    reason: str | None
    error: str | None
    clarify: bool
    created_at: str | None
    updated_at: str | None
    ended_at: str | None
    url: str

    @classmethod
    def of(cls, job: Job, attempts: Sequence[Attempt] | None = None) -> JobSummary:
        """The job; its shard progress too when its attempts are given."""
        progress = shard_progress(job, attempts) if attempts is not None else None
        failure = job.failure
        return cls(
            job_id=job.job_id,
            key=job.source.key,
            status=str(job.status),
            terminal=job.status.terminal,
            run=job.run,
            stage=job.stage,
            tier=job.tier,
            shards=job.shards,
            phase=phase(job, progress),
            progress=progress,
            failure_kind=str(failure.kind) if failure else None,
            feature=failure.feature if failure else None,
            reason=failure.reason if failure else None,
            error=failure.error if failure else None,
            clarify=job.options.clarify,
            created_at=job.created_at,
            updated_at=job.updated_at,
            ended_at=job.ended_at,
            url=url_for("job.job_page", job_id=job.job_id),
        )


def shard_progress(job: Job, attempts: Sequence[Attempt]) -> ShardProgress | None:
    """Shards of the current run done, out of the plan's; None for a whole parse."""
    if not job.shards or job.shards < 2:
        return None
    current = [s for s in shard_parses(list(attempts)) if s.run == job.run]
    return ShardProgress(done=sum(s.outcome == "ok" for s in current), total=job.shards)


def phase(job: Job, progress: ShardProgress | None = None) -> str:
    """What the job is doing, in words."""
    if job.status is JobStatus.QUEUED:
        return "queued"
    if job.status is JobStatus.FAILED:
        return "dead-lettering"  # the failure is recorded; its message is being sent
    if job.status is not JobStatus.RUNNING:
        return str(job.status).lower().replace("_", "-")
    if job.stage == "parse":
        if progress is not None:
            return f"parsing shards: {progress.done} of {progress.total} done"
        return f"parsing at tier {job.tier}" if job.tier else "parsing"
    return _STAGE_PHASES.get(job.stage or "", "starting")
