"""What ``richdoc events`` prints: the completion events as they come (``tail``), and
what a republish did."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import Col, print_json, print_table
from richdoc_tools.terminal import visible

if TYPE_CHECKING:
    from richdoc_tools.ops.events import LoggedEvent, Republished


class EventTail:
    """``richdoc events tail``: each event as it comes, a line of its own (JSON, or the
    time, status, job, run, object key, failure and chunks), and a count at the end."""

    def __init__(self, *, as_json: bool) -> None:
        self.as_json = as_json
        self.shown = 0

    def add(self, logged: LoggedEvent) -> None:
        event = logged.event
        if event is None:
            print(
                "richdoc events tail: a line of the event log that is not a completion "
                f"event: {visible(logged.unreadable or '')}",
                file=sys.stderr,
                flush=True,
            )
            return
        self.shown += 1
        if self.as_json:
            print(json.dumps(event.model_dump(mode="json", by_alias=True), sort_keys=True))
            sys.stdout.flush()
            return
        detail = event.detail
        parts = [
            event.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            str(detail.status),
            f"job {detail.job_id[:12]} run {detail.run}",
            visible(detail.source.key),
        ]
        if detail.failure is not None:
            parts.append(str(detail.failure.kind))
            if detail.failure.feature:
                parts.append(visible(detail.failure.feature))
        if detail.counts is not None and detail.counts.chunks is not None:
            parts.append(f"{detail.counts.chunks} chunks")
        print("  ".join(parts), flush=True)

    def close(self) -> None:
        if not self.as_json:
            print(f"{self.shown} completion event(s)")


REPUBLISHED_COLUMNS = (Col("job id", whole=True), "outcome", "status", "run", "event id")


def republished(results: Sequence[Republished], *, as_json: bool) -> None:
    if as_json:
        print_json(
            [
                {
                    "job_id": r.job_id,
                    "outcome": r.outcome,
                    "event": r.detail.model_dump(mode="json", by_alias=True) if r.detail else None,
                }
                for r in results
            ]
        )
        return
    rows = [
        [
            r.job_id,
            r.outcome,
            r.detail.status if r.detail else None,
            r.detail.run if r.detail else None,
            r.detail.event_id if r.detail else None,
        ]
        for r in results
    ]
    print_table(REPUBLISHED_COLUMNS, rows, Console())
