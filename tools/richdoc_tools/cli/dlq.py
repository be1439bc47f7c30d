"""``richdoc dlq``: the dead-letter queue of a stack: list (from the job records, or
receiving with ``--peek``), redrive, discard.

A command here is one function: ``@dlq.command(...)`` and ``@with_operator``, which adds
the stack options and passes the stack's ``Operator``; its tables are in ``render``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import EXIT_FAILED, EXIT_REFUSED, UsageError
from richdoc_tools.cli.options import FailureKindChoice, example, json_option, with_operator

if TYPE_CHECKING:
    from richdoc.taxonomy import FailureKind
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
    from richdoc_tools.cli.render import dlq as render
    from richdoc_tools.ops.dead_letter_queue.reading import dead_letter_listing

    if peek:
        print(
            "richdoc dlq list: warning: --peek receives every message on the "
            "dead-letter queue (and releases it at once): SQS leaves a message received "
            "more than three times out of ApproximateAgeOfOldestMessage, the metric "
            "DeadLetterAgeAlarm watches, so each peek ages the alarm's view",
            file=sys.stderr,
        )
    render.dead_letters(dead_letter_listing(operator, receive=peek), as_json=as_json)
    return 0


@dlq.command(
    short_help="move dead-lettered messages back to the ingest queue (next run)",
    epilog=example("richdoc dlq redrive --stack richdoc"),
)
@with_operator
def redrive(operator: Operator) -> int:
    """An SQS message move task from the dead-letter queue to the ingest queue (on AWS and
    on the embedded stack alike); SQS moves the messages on its own after it starts."""
    from richdoc_tools.ops.dead_letter_queue.acting import redrive_all, redrive_outlook
    from richdoc_tools.ops.dead_letter_queue.reading import dead_letters

    outlook = redrive_outlook(dead_letters(operator))
    task_handle = redrive_all(operator)
    print(
        f"started SQS message move task {task_handle}: every message on the "
        "dead-letter queue goes back to the ingest queue"
    )
    print(f"of the {outlook.total} message(s) seen on the queue:")
    for line in outlook.lines():
        print(f"  {line}")
    return 0


@dlq.command(
    short_help="delete chosen dead letters for good, the reason kept on each job",
    epilog=example(
        'richdoc dlq discard 5fa1e0c4-0d7e-4a3e-9b1b-2f4c9e8d7a61 --reason "a scan of a fax"',
        'richdoc dlq discard --all --kind corrupt_input --reason "re-uploaded" --dry-run',
    ),
)
@click.argument("message_ids", nargs=-1, metavar="[MESSAGE_ID...]")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="every dead-lettered run waiting on the queue (from the job records)",
)
@click.option("--kind", type=FailureKindChoice(), default=None, help="... of this failure kind")
@click.option("--feature", default=None, metavar="TAG", help="... with this feature tag")
@click.option("--reason", required=True, metavar="TEXT", help="why (kept on each job)")
@click.option("--dry-run", is_flag=True, help="count and list, delete nothing")
@json_option()
@with_operator
def discard(
    operator: Operator,
    message_ids: tuple[str, ...],
    everything: bool,
    kind: FailureKind | None,
    feature: str | None,
    reason: str,
    dry_run: bool,
    as_json: bool,
) -> int:
    """Delete dead-letter messages for good instead of redriving them: those named (their
    ids as `richdoc dlq list` prints them), or with --all every dead-lettered run waiting
    there (of --kind, of --feature). Each message goes only once its job records the
    reason, so none disappears unexplained; its job stays DEAD_LETTERED and says when and
    why. A message whose job has moved on (a newer run) stays: exit 3. A message not
    found on the queue: exit 1. What the console's Discard does."""
    from richdoc_tools.cli.render import dlq as render
    from richdoc_tools.ops.dead_letter_queue.acting import discard as discard_messages
    from richdoc_tools.ops.dead_letter_queue.reading import waiting_message_ids

    if everything == bool(message_ids):
        raise UsageError("name the messages, or --all (with --kind, --feature): not both")
    if (kind or feature) and not everything:
        raise UsageError("--kind and --feature choose among --all")
    reason = reason.strip()
    if not reason:
        raise UsageError("--reason: say why (it is kept on each job)")
    if everything:
        chosen = waiting_message_ids(operator.jobs, kind=kind, feature=feature)
    else:
        chosen = list(dict.fromkeys(message_ids))
    taken = None if dry_run else discard_messages(operator, chosen, reason)
    render.discarded(chosen, reason, taken, as_json=as_json)
    if taken is not None and taken.missing:
        return EXIT_FAILED
    return EXIT_REFUSED if taken is not None and taken.declined else 0
