"""A job as the console's lists and headers show it: its public record, and what a page
adds to it.

The record is the job as ``richdoc jobs show --json`` prints it (``Job.to_dict()``, the
one public shape: ``richdoc_tools.ops.job_document``, with its place in the backlog
while it waits); a twin's job object is that record with three keys more: ``terminal``,
``progress_text`` (the phase and the shard progress in words, as ``richdoc jobs show``
and ``watch`` print them; a waiting job's place and wait) and ``url`` (the job's page). A
job recorded before phases existed says what its status and stage imply.
"""

from __future__ import annotations

from flask import url_for
from pydantic import BaseModel, ConfigDict, model_serializer

from richdoc.jobs import Job, JobStatus
from richdoc_tools.ops.backlog import BacklogPlace, place_label
from richdoc_tools.ops.job_document import with_place

_STAGE_PHASES = {
    "plan": "planning",
    "merge": "merging",
    "project": "projecting",
    "detect": "detecting",
}


class JobSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    record: Job
    progress_text: str
    url: str
    place: BacklogPlace | None = None  # while it waits in the backlog

    @property
    def terminal(self) -> bool:
        return self.record.status.terminal

    @classmethod
    def of(cls, job: Job, place: BacklogPlace | None = None) -> JobSummary:
        text = progress_text(job)
        if place is not None:
            text = f"waiting: {place_label(place, job.tenant)}"
        return cls(
            record=job,
            progress_text=text,
            url=url_for("job.job_page", job_id=job.job_id),
            place=place,
        )

    @model_serializer
    def _public(self) -> dict[str, object]:
        return {
            **with_place(self.record.to_dict(), self.place),
            "terminal": self.terminal,
            "progress_text": self.progress_text,
            "url": self.url,
        }


def progress_text(job: Job) -> str:
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
