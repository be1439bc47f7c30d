"""``richdoc events``: a stack's completion events: tail them, publish them again.

A command here is one function: ``@events.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; its output is in ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import EXIT_FAILED, resolving
from richdoc_tools.cli.options import Since, example, json_option, with_operator

if TYPE_CHECKING:
    from datetime import datetime

    from richdoc_tools.ops.operator import Operator


@click.group(short_help="the completion events of a stack")
def events() -> None:
    """The completion events a stack publishes on its event bus (one per terminal change of
    a job: SUCCEEDED, DEAD_LETTERED, CANCELLED, DELETED)."""


@events.command(
    short_help="show the completion events published since a time; --follow for new ones",
    epilog=example("richdoc events tail --since 2h", "richdoc events tail --follow --json"),
)
@click.option(
    "--since",
    type=Since(),
    default="1h",
    show_default=True,
    help="events published at or after this time (ISO 8601, or 90m, 24h, 7d ago)",
)
@click.option("--follow", "-f", is_flag=True, help="keep printing new events until Ctrl-C")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    help="with --follow, seconds between reads of the event log",
)
@json_option("print each event as one line of JSON (the event as a consumer receives it)")
@with_operator
def tail(operator: Operator, since: datetime, follow: bool, interval: float, as_json: bool) -> int:
    """Show the stack's completion events, oldest first, from its event log (every event
    on the bus is logged there): when, the status, the job and run, the object key, the
    failure's kind and feature, the chunks. Lines of the log that are not completion
    events are reported on stderr."""
    from richdoc_tools.cli.render import events as render
    from richdoc_tools.ops.events import tail as tail_events

    shown = render.EventTail(as_json=as_json)
    for logged in tail_events(operator, since=since, follow=follow, interval_s=interval):
        shown.add(logged)
    shown.close()
    return 0


@events.command(
    short_help="refresh the manifests and publish the completion events of jobs again",
    epilog=example(
        "richdoc events republish 4c7b41c722e6 9d0e1f2a3b4c", "richdoc events republish --failed"
    ),
)
@click.argument("job_ids", nargs=-1, metavar="[JOB_ID...]")
@click.option(
    "--failed",
    is_flag=True,
    help="the jobs of every change the notifier parked (NotifyFailureBucket), each "
    "message of NotifyFailureQueue deleted once its jobs are published",
)
@json_option()
@with_operator
def republish(operator: Operator, job_ids: tuple[str, ...], failed: bool, as_json: bool) -> int:
    """For each job whose run has ended: refresh its document's manifest and publish its
    completion event again, as the notifier does (the same event id, so consumers that
    had it drop it). The way back for changes the notifier could not deliver
    (NotifyFailuresAlarm): name the jobs, or take them from the parked records with
    --failed. A job still running has nothing to publish yet; no such job exits 1.
    JOB_ID may be any unique prefix."""
    from richdoc_tools.cli.errors import UsageError
    from richdoc_tools.cli.render import events as render
    from richdoc_tools.ops.events import republish as republish_events
    from richdoc_tools.ops.events import republish_failed

    if bool(job_ids) == failed:
        raise UsageError("name the jobs, or give --failed (not both)")
    results = resolving(
        lambda: republish_failed(operator) if failed else republish_events(operator, job_ids)
    )
    render.republished(results, as_json=as_json)
    if any(r.outcome == "not_found" for r in results):
        print("richdoc events republish: some jobs were not found", file=sys.stderr)
        return EXIT_FAILED
    return 0
