"""The dead-letter queue as a workbench: the dead-lettered jobs whose message waits there
(from the job records: listing receives nothing, so the age alarm keeps its measure),
the queue's depth, and the actions: redrive chosen messages or a filter, discard with a
recorded reason; each shows its count first (a dry run) and acts once confirmed.

Messages SQS itself moved there (the starter failed on them: no job record names them)
are counted from the queue's depth; "peek" receives every message to show them all (it
counts as a receive, and says so).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import Blueprint, abort, request, url_for
from pydantic import BaseModel
from werkzeug.wrappers import Response

from richdoc.jobs import JobFilter, JobStatus
from richdoc.taxonomy import FailureKind
from richdoc_tools.console.forms import cursor, form_reason, wants_dry_run
from richdoc_tools.console.settings import settings
from richdoc_tools.console.summaries import JobSummary
from richdoc_tools.console.twins import page, respond
from richdoc_tools.ops.dead_letter_queue import acting
from richdoc_tools.ops.dead_letter_queue.acting import Taken, redrive_chosen
from richdoc_tools.ops.dead_letter_queue.reading import (
    DeadLetter,
    ListedLetter,
    peek,
    queue_depth,
    waiting_message_ids,
)

blueprint = Blueprint("deadletters", __name__)

MAX_BODY = 2000  # characters of a peeked message's body the page shows


class Depth(BaseModel):
    waiting: int
    in_flight: int
    delayed: int
    recorded: int  # dead-lettered jobs on this page whose message waits
    unrecorded: int  # messages no job record names (SQS moved them), at least


class Choice(BaseModel):
    """What an action acts on: chosen message ids, or every waiting dead letter of a
    filter (``everything``)."""

    message_ids: list[str] = []
    everything: bool = False
    kind: str = ""
    feature: str = ""


class Outcome(BaseModel):
    action: str  # redrive, discard
    dry_run: bool
    count: int  # the messages it would act on (dry run), or was asked to
    choice: Choice
    reason: str
    done: list[str] = []
    declined: list[str] = []
    missing: list[str] = []
    message: str


class DeadLettersPage(BaseModel):
    rows: list[JobSummary]  # dead-lettered jobs: each record's dead_letter names its message
    next_url: str | None
    depth: Depth
    kind: str
    feature: str
    kinds: list[str]
    peeked: list[ListedLetter] | None = None  # as `richdoc dlq list --peek` lists them
    outcome: Outcome | None = None


@page(blueprint, "/dead-letters", "deadletters.html")
def dead_letters() -> DeadLettersPage:
    return _page()


@blueprint.post("/dead-letters/peek")
def peek_all() -> Response:
    """Every message on the queue, received to be read (and released at once)."""
    config = settings()
    letters = peek(config.operator.sqs, config.operator.resources.dead_letter_queue_url)
    shown = _page()
    shown.peeked = [_peeked(letter) for letter in letters]
    return respond(shown, "deadletters.html")


@blueprint.post("/dead-letters/redrive")
def redrive() -> Response:
    return _act("redrive")


@blueprint.post("/dead-letters/discard")
def discard() -> Response:
    return _act("discard")


def _page() -> DeadLettersPage:
    config = settings()
    operator = config.operator
    kind = request.values.get("kind", "").strip()
    feature = request.values.get("feature", "").strip()
    after = cursor()
    listed = operator.jobs.page(
        JobFilter(statuses=(JobStatus.DEAD_LETTERED,), kind=kind or None, feature=feature or None),
        limit=config.page_size,
        after=after,
    )
    rows = [JobSummary.of(job) for job in listed.jobs if job.dead_letter is not None]
    depth = queue_depth(operator.sqs, operator.resources.dead_letter_queue_url)
    recorded = sum(
        row.record.dead_letter is not None and row.record.dead_letter.discarded_at is None
        for row in rows
    )
    query: dict[str, Any] = {
        name: value for name, value in (("kind", kind), ("feature", feature)) if value
    }
    return DeadLettersPage(
        rows=rows,
        next_url=(
            url_for("deadletters.dead_letters", **query, after=listed.next.token())
            if listed.next
            else None
        ),
        depth=Depth(
            waiting=depth.waiting,
            in_flight=depth.in_flight,
            delayed=depth.delayed,
            recorded=recorded,
            unrecorded=max(depth.total - recorded, 0) if not (kind or feature or after) else 0,
        ),
        kind=kind,
        feature=feature,
        kinds=[str(k) for k in FailureKind],
    )


def _choice() -> Choice:
    return Choice(
        message_ids=[m for m in request.form.getlist("message_id") if m],
        everything=request.form.get("everything") == "1",
        kind=request.form.get("kind", "").strip(),
        feature=request.form.get("feature", "").strip(),
    )


def _act(action: str) -> Response:
    config = settings()
    operator = config.operator
    choice = _choice()
    dry_run = wants_dry_run()
    reason = form_reason()
    if action == "discard" and not reason:
        abort(400, "say why the messages are discarded: the reason is kept on each job")
    if choice.everything:
        message_ids = waiting_message_ids(
            operator.jobs, kind=choice.kind or None, feature=choice.feature or None
        )
    else:
        message_ids = list(dict.fromkeys(choice.message_ids))
    if not message_ids:
        abort(400, "no message chosen: tick some, or act on a filter")
    outcome = Outcome(
        action=action,
        dry_run=dry_run,
        count=len(message_ids),
        choice=choice,
        reason=reason,
        message=f"{len(message_ids)} message(s) would be {_past(action)}: confirm to go on",
    )
    if not dry_run:
        taken = _run(action, message_ids, reason)
        outcome = outcome.model_copy(
            update={
                "done": taken.done,
                "declined": taken.declined,
                "missing": taken.missing,
                "message": _report(action, taken),
            }
        )
    shown = _page()
    shown.outcome = outcome
    return respond(shown, "deadletters.html")


def _run(action: str, message_ids: list[str], reason: str) -> Taken:
    """What ``richdoc dlq discard`` and the chosen messages' redrive do."""
    operator = settings().operator
    if action == "discard":
        return acting.discard(operator, message_ids, reason)
    resources = operator.resources
    return redrive_chosen(
        operator.sqs, resources.dead_letter_queue_url, resources.ingest_queue_url, message_ids
    )


def _past(action: str) -> str:
    return "redriven" if action == "redrive" else "discarded"


def _report(action: str, taken: Taken) -> str:
    parts = [f"{len(taken.done)} message(s) {_past(action)}"]
    if taken.declined:
        parts.append(f"{len(taken.declined)} left: their jobs have moved on")
    if taken.missing:
        parts.append(f"{len(taken.missing)} not found on the queue (gone already?)")
    return "; ".join(parts)


def _peeked(letter: DeadLetter) -> ListedLetter:
    """A received message as ``richdoc dlq list --peek --json`` shows it, its body cut
    for the page."""
    return dataclasses.replace(ListedLetter.of_received(letter), body=letter.body[:MAX_BODY])
