"""``richdoc dlq``: the dead-letter queue of a stack: list without consuming, redrive.

A command here is one function: ``@dlq.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; its tables are in ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.options import example, json_option, with_operator

if TYPE_CHECKING:
    from richdoc_tools.operator import Operator


@click.group(short_help="the dead-letter queue of a stack")
def dlq() -> None:
    """The dead-letter queue of a stack."""


@dlq.command(
    "list",
    short_help="show dead-lettered runs (from the job records; nothing is received)",
    epilog=example("richdoc dlq list --stack richdoc"),
)
@click.option(
    "--peek",
    is_flag=True,
    help="receive the messages to show every one, also those no job record names; "
    "each receive counts, and SQS leaves a message received 3 times out of the age "
    "DeadLetterAgeAlarm watches",
)
@json_option()
@with_operator
def list_messages(operator: Operator, peek: bool, as_json: bool) -> int:
    """Show the dead-lettered runs waiting on the queue, read from the job records (no
    message is received, so the queue's age alarm keeps counting them), and how many
    other messages the queue holds: notifications SQS moved there itself, which only
    --peek shows, by receiving them."""
    from richdoc_tools.cli import render

    if peek:
        print(render.PEEK_WARNING, file=sys.stderr)
        render.dead_letters(operator.peek_dead_letters(), as_json=as_json)
        return 0
    listed = operator.dead_letters()
    counted = "dead-lettered run(s) on the dead-letter queue (from the job records)"
    render.dead_letters(listed.letters, as_json=as_json, counted=counted)
    note = render.dead_letters_note(listed)
    if note:
        print(note, file=sys.stderr if as_json else sys.stdout)
    return 0


@dlq.command(
    short_help="move dead-lettered messages back to the ingest queue (next run)",
    epilog=example("richdoc dlq redrive --stack richdoc"),
)
@with_operator
def redrive(operator: Operator) -> int:
    """On AWS: an SQS StartMessageMoveTask from the dead-letter queue to the ingest queue.
    On the embedded stack (which lacks that API): the same move done message by
    message."""
    from richdoc_tools.dlq import redrive_outlook

    # Received once, just before every message leaves the queue: the age alarm has
    # nothing left to watch afterwards.
    outlook = redrive_outlook(operator.peek_dead_letters())
    result = operator.redrive()
    if result.mode == "message-move-task":
        print(
            f"started SQS message move task {result.task_handle}: every message on the "
            "dead-letter queue goes back to the ingest queue"
        )
        print(f"of the {outlook.total} message(s) seen on the queue:")
    else:
        print(f"moved {result.moved} message(s) back to the ingest queue")
        print(f"of the {outlook.total} message(s) seen before moving:")
    for line in outlook.lines():
        print(f"  {line}")
    return 0
