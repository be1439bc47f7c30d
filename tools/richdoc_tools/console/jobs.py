"""The task center: jobs page by page, filters, the active-job badge, the failures since
your last look, the backlog (each tenant's waiting jobs, the slots held, the measured
throughput and when it drains; a waiting job's place in its row), and the drop zone that
uploads to the ingest bucket.

The list comes from the status index (``JobStore.page``), newest change first; the page's
script polls its JSON twin while any job it shows (or any job at all) is still open. The
last look is a cookie: the time you last opened the failures; the badge counts the jobs
that failed after it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from flask import Blueprint, abort, after_this_request, redirect, request, url_for
from pydantic import BaseModel
from werkzeug.wrappers import Response

from richdoc.jobs import FAILED_STATUSES, JobFilter, JobStatus, timestamp
from richdoc.taxonomy import FailureKind
from richdoc_tools.console.forms import cursor, moment
from richdoc_tools.console.security import refused, wants_json
from richdoc_tools.console.settings import settings
from richdoc_tools.console.summaries import JobSummary
from richdoc_tools.console.twins import page, respond
from richdoc_tools.ops import uploads
from richdoc_tools.ops.backlog import BacklogOutlook, outlook, places

blueprint = Blueprint("jobs", __name__)

LAST_LOOK_COOKIE = "richdoc_console_last_look"


class Filters(BaseModel):
    """The listing's filters, as the form and the links spell them."""

    status: str = ""
    kind: str = ""
    feature: str = ""
    tier: str = ""
    since: str = ""
    until: str = ""

    def query(self) -> dict[str, Any]:
        """The filters that are set, as URL arguments (``url_for(..., **query)``)."""
        return {name: value for name, value in self.model_dump().items() if value}


class JobsPage(BaseModel):
    jobs: list[JobSummary]
    filters: Filters
    next_url: str | None  # the next page (None: this is the last)
    first_url: str | None  # the first page, when this is a later one
    active: int  # jobs not in a terminal status
    failures_since_last_look: int
    last_look: str | None
    failures_url: str
    statuses: list[str]
    kinds: list[str]
    live: bool  # the page keeps polling: something shown or counted is still open
    backlog: BacklogOutlook


class Uploaded(BaseModel):
    key: str
    job_id: str
    version_id: str | None
    url: str


class Uploads(BaseModel):
    uploads: list[Uploaded]
    clarify: bool


@blueprint.get("/")
def home() -> Response:
    return redirect(url_for("jobs.jobs_list"))


@page(blueprint, "/jobs", "jobs.html")
def jobs_list() -> JobsPage:
    config = settings()
    operator = config.operator
    filters = Filters.model_validate(
        {name: request.args.get(name, "").strip() for name in Filters.model_fields}
    )
    which = _job_filter(filters)
    after = cursor()
    listed = operator.jobs.page(which, limit=config.page_size, after=after)
    waiting = places(operator, listed.jobs, now=config.clock())
    summaries = [JobSummary.of(job, waiting.get(job.job_id)) for job in listed.jobs]

    last_look = _last_look()
    open_statuses = [s for s in JobStatus if not s.terminal]
    active = operator.jobs.count(open_statuses)
    failures = operator.jobs.count(FAILED_STATUSES, since=last_look)
    if which.statuses and set(which.statuses) <= set(FAILED_STATUSES) and after is None:
        _looked_now(config.clock())
    query = filters.query()
    return JobsPage(
        jobs=summaries,
        filters=filters,
        next_url=(
            url_for("jobs.jobs_list", **query, after=listed.next.token()) if listed.next else None
        ),
        first_url=url_for("jobs.jobs_list", **query) if after else None,
        active=active,
        failures_since_last_look=failures,
        last_look=last_look,
        failures_url=url_for("jobs.jobs_list", status=str(JobStatus.DEAD_LETTERED)),
        statuses=[str(s) for s in JobStatus],
        kinds=[str(k) for k in FailureKind],
        live=active > 0 or any(not s.terminal for s in summaries),
        backlog=outlook(operator, now=config.clock()),
    )


@blueprint.post("/uploads")
def upload() -> Response:
    """The drop zone: each file into the ingest bucket under its name as given."""
    operator = settings().operator
    files = [f for f in request.files.getlist("files") if f.filename]
    if not files:
        return refused(400, "no file was sent")
    clarify = request.form.get("clarify", "") in ("on", "true", "1")
    uploaded = []
    for file in files:
        key = file.filename or ""
        try:
            done = uploads.upload(operator, key, file.stream, clarify=clarify)
        except (BotoCoreError, ClientError) as exc:
            return refused(400, f"could not upload {key!r}: {exc}")
        uploaded.append(
            Uploaded(
                key=done.key,
                job_id=done.job_id,
                version_id=done.version_id,
                url=url_for("job.job_page", job_id=done.job_id),
            )
        )
    result = Uploads(uploads=uploaded, clarify=clarify)
    if wants_json():
        return respond(result, "jobs.html", as_json=True)
    return redirect(url_for("jobs.jobs_list"), code=303)


def _job_filter(filters: Filters) -> JobFilter:
    statuses: tuple[JobStatus, ...] = ()
    if filters.status:
        try:
            statuses = (JobStatus(filters.status),)
        except ValueError:
            abort(400, f"no such status: {filters.status!r}")
    tier = None
    if filters.tier:
        if not filters.tier.isdigit():
            abort(400, f"a tier is a number, not {filters.tier!r}")
        tier = int(filters.tier)
    return JobFilter(
        statuses=statuses,
        kind=filters.kind or None,
        feature=filters.feature or None,
        tier=tier,
        since=_moment(filters.since, "since"),
        until=_moment(filters.until, "until"),
    )


def _moment(text: str, name: str) -> str | None:
    """``moment`` as records store it."""
    found = moment(text, name)
    return timestamp(found) if found else None


def _last_look() -> str | None:
    raw = request.cookies.get(LAST_LOOK_COOKIE)
    if not raw:
        return None
    try:
        return timestamp(datetime.fromisoformat(raw))
    except ValueError:
        return None


def _looked_now(now: datetime) -> None:
    @after_this_request
    def remember(response: Response) -> Response:
        response.set_cookie(
            LAST_LOOK_COOKIE,
            timestamp(now),
            httponly=True,
            samesite="Strict",
            path="/",
            max_age=400 * 24 * 3600,
        )
        return response
