"""The fleet's pages: failure groups (failed jobs by a normalised signature, a redrive per
group) and the tier ladder (pages and size against the tier that finally succeeded, how
often each tier escalates, peak memory against the ceilings).

They draw what ``richdoc jobs failures`` and ``richdoc jobs tiers`` compute
(``failures.fleet_failures``, ``tiers.fleet_tiers``); redriving a group is ``richdoc jobs
redrive --status S --signature SIG`` for each status in the group: a dry run counts first,
and the confirmed redrive sends at the command's default rate.
"""

from __future__ import annotations

from datetime import datetime

from flask import Blueprint, abort, request
from pydantic import BaseModel
from werkzeug.wrappers import Response

from richdoc.jobs import FAILED_STATUSES, Job
from richdoc_tools.console.forms import moment, wants_dry_run
from richdoc_tools.console.settings import settings
from richdoc_tools.console.twins import page, respond
from richdoc_tools.ops.failures import FailureGroup, fleet_failures
from richdoc_tools.ops.redrive import (
    DEFAULT_RATE_PER_S,
    JobRedriveResult,
    Pacer,
    RedriveFilter,
    redrive_selected,
    select,
)
from richdoc_tools.ops.tiers import TierReport, fleet_tiers

blueprint = Blueprint("fleet", __name__)

BAR_WIDTH = 240  # the widest bar of the tier chart, in SVG units


class GroupRedrive(BaseModel):
    """What redriving one group did, or would do (a dry run)."""

    signature: str
    dry_run: bool
    matched: int
    sent: int
    results: list[JobRedriveResult]


class FailuresPage(BaseModel):
    since: str
    groups: list[FailureGroup]
    redrive: GroupRedrive | None = None


class Bar(BaseModel):
    tier: int
    succeeded: int
    width: float  # of BAR_WIDTH: the tier's share of the biggest count
    escalation_width: float  # the tier's escalation rate, of BAR_WIDTH


class TiersPage(BaseModel):
    since: str
    report: TierReport
    bars: list[Bar]
    bar_width: int = BAR_WIDTH


@page(blueprint, "/failures", "failures.html")
def failures() -> FailuresPage:
    return _failures()


@blueprint.post("/failures/redrive")
def redrive_group() -> Response:
    """Redrive the failed jobs of one signature (``dry_run=0`` to send)."""
    signature = request.form.get("signature", "").strip()
    if not signature:
        abort(400, "which group? give its signature")
    dry_run = wants_dry_run()
    since = _since(request.form.get("since", "").strip())  # the group as the page listed it
    operator = settings().operator
    jobs: list[Job] = []
    for status in FAILED_STATUSES:
        jobs += select(operator, RedriveFilter(status=status, signature=signature, since=since))
    report = redrive_selected(
        operator, jobs, pacer=Pacer(rate_per_s=DEFAULT_RATE_PER_S), dry_run=dry_run
    )
    shown = _failures()
    shown.redrive = GroupRedrive(
        signature=signature,
        dry_run=dry_run,
        matched=report.matched,
        sent=sum(r.outcome == "sent" for r in report.results),
        results=report.results,
    )
    return respond(shown, "failures.html")


@page(blueprint, "/tiers", "tiers.html")
def tiers() -> TiersPage:
    since = request.args.get("since", "").strip()
    report = fleet_tiers(settings().operator, since=_since(since))
    most = max((row.succeeded for row in report.tiers), default=0) or 1
    return TiersPage(
        since=since,
        report=report,
        bars=[
            Bar(
                tier=row.tier,
                succeeded=row.succeeded,
                width=round(BAR_WIDTH * row.succeeded / most, 1),
                escalation_width=round(BAR_WIDTH * (row.escalation_rate or 0.0), 1),
            )
            for row in report.tiers
        ],
    )


def _failures() -> FailuresPage:
    since = request.values.get("since", "").strip()
    return FailuresPage(
        since=since, groups=fleet_failures(settings().operator, since=_since(since))
    )


def _since(text: str) -> datetime | None:
    return moment(text, "since")
