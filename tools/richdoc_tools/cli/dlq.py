"""``richdoc dlq``: the dead-letter queue of a stack: list (from the job records, or
receiving with ``--peek``), redrive.

A command here is one function: ``@dlq.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; its tables are in ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.options import example, json_option, with_operator

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator


@click.group(short_help="the dead-letter queue of a stack")
def dlq() -> None:
    """The dead-letter queue of a stack."""


@dlq.command(
    "list",
    short_help="show the dead letters waiting, from the job records (nothing received)",
    epilog=example("richdoc dlq list --stack richdoc", "richdoc dlq list --peek --json"),
)
@click.option(
    "--peek",
    is_flag=True,
    help="receive every message to show them all, those no job record names too "
    "(each receive counts: see the warning it prints)",
)
@json_option()
@with_operator
def list_messages(operator: Operator, peek: bool, as_json: bool) -> int:
    """Show the dead-lettered runs waiting on the dead-letter queue, from the job records:
    nothing is received, so DeadLetterAgeAlarm keeps seeing the oldest message's age. The
    queue's counts give how many other messages wait there (SQS moved them after the
    starter failed on every delivery, or they are malformed); --peek receives every
    message to show them."""
    from richdoc_tools.cli import render

    if peek:
        print(
            "richdoc dlq list: warning: --peek receives every message on the "
            "dead-letter queue (and releases it at once): SQS leaves a message received "
            "more than three times out of ApproximateAgeOfOldestMessage, the metric "
            "DeadLetterAgeAlarm watches, so each peek ages the alarm's view",
            file=sys.stderr,
        )
    render.dead_letters(operator.dead_letter_listing(receive=peek), as_json=as_json)
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
    from richdoc_tools.ops.dead_letter_queue import redrive_outlook

    outlook = redrive_outlook(operator.dead_letters())
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
