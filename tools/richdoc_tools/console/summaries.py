"""A job as the console's lists and headers show it: status, phase, shard progress.

The phase and the progress are the job record's (``Job.progress``, as ``richdoc jobs
show`` and ``watch`` print them): counts only where they are exact, the page-range shards
of the current run whose parse finished, out of the shards the plan made. A job recorded
before phases existed says what its status and stage imply.
"""

from __future__ import annotations

from flask import url_for
from pydantic import BaseModel

from richdoc.jobs import Job, JobPhase, JobStatus

_STAGE_PHASES = {
    "plan": "planning",
    "merge": "merging",
    "project": "projecting",
    "detect": "detecting",
}


class ShardProgress(BaseModel):
    done: int
    total: int
    pages_done: int


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
    def of(cls, job: Job) -> JobSummary:
        progress = shard_progress(job)
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
            phase=phase(job),
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


def shard_progress(job: Job) -> ShardProgress | None:
    """Shards of the current run finished, out of the plan's; None unless it parses
    shards now."""
    progress = job.progress()
    if progress.phase is not JobPhase.PARSING_SHARDS or not progress.shards:
        return None
    return ShardProgress(
        done=progress.shards_done or 0, total=progress.shards, pages_done=progress.pages_done or 0
    )


def phase(job: Job) -> str:
    """What the job is doing, in words (the record's phase when it has one)."""
    if job.phase is not None:
        return job.progress().describe()
    if job.status is JobStatus.QUEUED:
        return "queued"
    if job.status is JobStatus.FAILED:
        return "dead-lettering"  # the failure is recorded; its message is being sent
    if job.status is not JobStatus.RUNNING:
        return str(job.status).lower().replace("_", "-")
    if job.stage == "parse":
        return f"parsing at tier {job.tier}" if job.tier else "parsing"
    return _STAGE_PHASES.get(job.stage or "", "starting")
