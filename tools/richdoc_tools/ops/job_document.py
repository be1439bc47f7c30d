"""A job's public JSON: its record as the command line prints it, with its attempts.

This is the one public shape of a job. ``richdoc jobs show --json`` prints it, and
``job.json`` under ``richdoc run --out`` is it with the input's path (``input``). The
others derive from it: ``jobs list --json`` and each line of ``jobs watch --json`` are its
record without the attempts; each object of ``richdoc run --json`` is a summary of it
(``richdoc_tools.run.RunResult``); the console's JSON twins carry its record and its
attempts, each with the few keys a page adds (``console.summaries``). The record is
``Job.to_dict()``: every field, nulls shown, ``status`` for the stored ``job_status``,
``{}`` for outputs and counts not recorded yet, the phase as ``progress``, never the
stored ingest message or the store's counters. A job waiting in the backlog shows its
place there (``admission.position``, ``admission.waiting_s``), counted when it is shown.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_serializer

from richdoc.jobs import Attempt, Job
from richdoc_tools.ops.backlog import BacklogPlace


class JobDocument(BaseModel):
    """A job and its attempts (every run's, in the order they were recorded), and its
    place in the backlog while it waits (within ``admission``: position, waiting_s)."""

    model_config = ConfigDict(frozen=True)

    job: Job
    attempts: list[Attempt]
    place: BacklogPlace | None = None

    @model_serializer
    def _public(self) -> dict[str, object]:
        return {
            **with_place(self.job.to_dict(), self.place),
            "attempts": [a.to_dict() for a in self.attempts],
        }


def with_place(record: dict[str, object], place: BacklogPlace | None) -> dict[str, object]:
    """A job's record with its place in the backlog (``admission.position`` and
    ``admission.waiting_s``; null when it is not waiting)."""
    admission = dict(record.get("admission") or {})  # type: ignore[call-overload]
    admission.update(position=place.position if place else None)
    admission.update(waiting_s=place.waiting_s if place else None)
    return {**record, "admission": admission}
