"""What ``richdoc dlq`` prints: the dead letters listed, and what a discard did."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import Col, print_json, print_table
from richdoc_tools.terminal import visible

if TYPE_CHECKING:
    from richdoc_tools.ops.dead_letter_queue.acting import Taken
    from richdoc_tools.ops.dead_letter_queue.reading import DeadLetterListing


DEAD_LETTER_COLUMNS = (
    "message id",
    Col("job id", whole=True),
    "run",
    "kind",
    "feature",
    Col("reason", limit=100),
)


def dead_letters(listing: DeadLetterListing, *, as_json: bool) -> None:
    letters = listing.letters
    others = (
        f"{listing.others} other message(s) wait on the dead-letter queue that no job "
        "record names (SQS moved them after the starter failed on every delivery, or "
        "they are malformed): richdoc dlq list --peek receives them to show them"
        if listing.others
        else None
    )
    if as_json:
        print_json(
            [
                {
                    "message_id": d.message_id,
                    "job_id": d.job_id,
                    "run": d.run,
                    "kind": d.kind,
                    "feature": d.feature,
                    "reason": d.reason,
                    "receive_count": d.receive_count,
                    "body": d.body,
                    "received": d.received,
                }
                for d in letters
            ]
        )
        if others:
            print(f"richdoc dlq list: {others}", file=sys.stderr)
        return
    rows = [[d.message_id, d.job_id, d.run, d.kind, d.feature, d.reason] for d in letters]
    print_table(DEAD_LETTER_COLUMNS, rows, Console())
    if listing.received:
        print(f"{len(letters)} message(s) on the dead-letter queue")
    else:
        print(f"{len(letters)} dead-lettered run(s) waiting on the dead-letter queue")
    if others:
        print(others)


def discarded(chosen: Sequence[str], reason: str, taken: Taken | None, *, as_json: bool) -> None:
    """``richdoc dlq discard``: what was chosen and, unless it was a dry run (``taken``
    None), what became of each message."""
    if as_json:
        print_json(
            {
                "reason": reason,
                "dry_run": taken is None,
                "chosen": list(chosen),
                "discarded": taken.done if taken else [],
                "declined": taken.declined if taken else [],
                "missing": taken.missing if taken else [],
            }
        )
        return
    if taken is None:
        print(f"dry run: {len(chosen)} message(s) would be discarded, nothing is deleted")
        for message_id in chosen:
            print(f"  {visible(message_id)}")
        return
    for outcome, ids in (
        ("discarded", taken.done),
        ("declined: its job has moved on (a newer run)", taken.declined),
        ("missing: not on the queue (gone already?)", taken.missing),
    ):
        for message_id in ids:
            print(visible(f"{message_id}  {outcome}"))
    print(
        f"{len(chosen)} message(s): {len(taken.done)} discarded, {len(taken.declined)} "
        f"declined, {len(taken.missing)} missing"
    )
