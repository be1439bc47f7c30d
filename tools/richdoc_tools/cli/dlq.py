"""``richdoc dlq``: the dead-letter queue of a stack: list without consuming, redrive.

A command here is one function: ``@dlq.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; its tables are in ``render``.
"""

from __future__ import annotations

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
    short_help="show dead-lettered messages without consuming them",
    epilog=example("richdoc dlq list --stack richdoc"),
)
@json_option()
@with_operator
def list_messages(operator: Operator, as_json: bool) -> int:
    """Show dead-lettered messages without consuming them."""
    from richdoc_tools.cli import render

    render.dead_letters(operator.dead_letters(), as_json=as_json)
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
