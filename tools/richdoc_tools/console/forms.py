"""What a request to the console says, read the same way by every page: a date or time,
the position a page starts at, a reason, a dry run, the job an address names.

A leaf beside ``settings``: each reader answers 400 (or 404 for no such job) with a
message that says what was wrong, so a page never reads a form field on its own.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import abort, request

from richdoc.jobs import Job, Position
from richdoc_tools.console.settings import settings
from richdoc_tools.ops.jobs import AmbiguousJobId, find_job

# What a reason typed into a form keeps (the job record keeps as much).
MAX_REASON = 1000


def moment(text: str, name: str) -> datetime | None:
    """A date or time from a form (400 when it is none); without a zone it is UTC."""
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        abort(400, f"{name}: not a date or time (ISO 8601, e.g. 2026-01-31T09:00): {text!r}")
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def cursor() -> Position | None:
    """Where the page starts: after the position in ``?after=`` (400 for a bad one)."""
    token = request.args.get("after")
    if not token:
        return None
    try:
        return Position.from_token(token)
    except ValueError as exc:
        abort(400, str(exc))


def form_reason() -> str:
    """The form's ``reason``, trimmed and cut to ``MAX_REASON`` ("" when none was given)."""
    return request.form.get("reason", "").strip()[:MAX_REASON]


def wants_dry_run() -> bool:
    """An action counts first: it acts only when the form says ``dry_run=0``."""
    return request.form.get("dry_run", "1") != "0"


def job_or_abort(job_id: str) -> Job:
    """The job of an id or unique id prefix; 404 or 400 (ambiguous) otherwise."""
    try:
        job = find_job(settings().operator, job_id)
    except AmbiguousJobId as exc:
        abort(400, f"{exc}: give more characters of the job id")
    if job is None:
        abort(404, f"no job {job_id!r}")
    return job
