"""Acting on the dead-letter queue: moving every message back to the ingest queue
(``redrive_all``), or chosen ones (``redrive_chosen``), and discarding chosen ones for
good (``discard``). What the three kinds of message are: the package's docstring.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from richdoc.jobs import StaleRun
from richdoc_tools.ops.dead_letter_queue.reading import DeadLetter, scan

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient
    from types_boto3_sqs.type_defs import MessageTypeDef

    from richdoc_tools.ops.operator import Operator


# ---- every message back to the ingest queue --------------------------------------------------


def redrive_all(operator: Operator) -> str:
    """Move every dead-lettered message back to the ingest queue: an SQS message move
    task from the dead-letter queue (the embedded stack runs them as SQS does). Messages
    the state machine sent have no SQS-recorded source queue, so the ingest queue is
    named as the destination. Answers the task's handle."""
    resources = operator.resources
    response = operator.sqs.start_message_move_task(
        SourceArn=resources.dead_letter_queue_arn, DestinationArn=resources.ingest_queue_arn
    )
    task: str = response["TaskHandle"]
    return task


def _forward(sqs: SQSClient, message: MessageTypeDef, destination_url: str) -> None:
    """Send a received message on, its body and attributes as they are."""
    kwargs: dict[str, Any] = {"QueueUrl": destination_url, "MessageBody": message["Body"]}
    if message.get("MessageAttributes"):
        kwargs["MessageAttributes"] = {
            name: {k: v for k, v in attr.items() if k in ("DataType", "StringValue")}
            for name, attr in message["MessageAttributes"].items()
        }
    sqs.send_message(**kwargs)


# ---- acting on chosen messages ---------------------------------------------------------------


@dataclass(frozen=True)
class Taken:
    """What an action on chosen messages did: by message id, those it acted on, those it
    left (the action declined), and those not found on the queue."""

    done: list[str]
    declined: list[str]
    missing: list[str]


def take(
    sqs: SQSClient,
    queue_url: str,
    message_ids: Collection[str],
    act: Callable[[DeadLetter, MessageTypeDef], bool],
) -> Taken:
    """Find the chosen messages on the queue and ``act`` on each (it returns False to
    leave one where it is); a message it acted on is deleted, every other one goes back.
    Only an action receives messages: listing reads the job records instead."""
    wanted = set(message_ids)
    done: list[str] = []
    declined: list[str] = []
    # Closed on the way out, so the messages not chosen go back at once, not whenever
    # the generator is collected.
    with contextlib.closing(scan(sqs, queue_url)) as scanned:
        for received in scanned:
            message_id = received.letter.message_id
            if message_id not in wanted or message_id in done:
                continue
            if not act(received.letter, received.raw):
                declined.append(message_id)
                continue
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=received.receipt)
            received.settled = True
            done.append(message_id)
            if len(done) + len(declined) == len(wanted):
                break
    missing = [m for m in message_ids if m not in done and m not in declined]
    return Taken(done=done, declined=declined, missing=missing)


def redrive_chosen(
    sqs: SQSClient, dlq_url: str, destination_url: str, message_ids: Collection[str]
) -> Taken:
    """Move the chosen messages back to the ingest queue (what ``redrive`` does with all
    of them): each dead-lettered run starts its job's next run."""

    def forward(letter: DeadLetter, message: MessageTypeDef) -> bool:
        _forward(sqs, message, destination_url)
        return True

    return take(sqs, dlq_url, message_ids, forward)


def discard(operator: Operator, message_ids: Collection[str], reason: str) -> Taken:
    """Delete the chosen messages for good (``richdoc dlq discard``, the console's
    Discard), each only once its job records why (``JobStore.record_discard``): no message
    disappears unexplained. A message whose job has moved on (a newer run, another
    message) is not this one's to discard and stays (declined); a message of no recorded
    run (SQS moved it: the starter never got to record one) has no job to keep the reason
    and goes."""
    if not reason.strip():
        raise ValueError("say why the messages are discarded: the reason is kept on each job")
    jobs = operator.jobs

    def record(letter: DeadLetter, message: MessageTypeDef) -> bool:
        if letter.job_id is None or letter.run is None:
            return True
        try:
            jobs.record_discard(letter.job_id, letter.run, letter.message_id, reason)
        except StaleRun:
            return False
        return True

    return take(operator.sqs, operator.resources.dead_letter_queue_url, message_ids, record)


@dataclass(frozen=True)
class RedriveOutlook:
    """What redriving these messages will do, by kind (see the module docstring)."""

    total: int
    next_runs: int
    undelivered: int
    malformed: int

    def lines(self) -> list[str]:
        return [
            f"{self.next_runs} dead-lettered run(s): each starts the next run of its job",
            f"{self.undelivered} S3 notification(s) the starter never handled: each starts "
            "or resumes its job",
            f"{self.malformed} malformed message(s), not S3 notifications: they start "
            "nothing, fail again and return to the dead-letter queue after the ingest "
            "queue's maxReceiveCount deliveries",
        ]


def redrive_outlook(letters: list[DeadLetter]) -> RedriveOutlook:
    return RedriveOutlook(
        total=len(letters),
        next_runs=sum(d.dead_lettered_run for d in letters),
        undelivered=sum(not d.dead_lettered_run and not d.malformed for d in letters),
        malformed=sum(d.malformed for d in letters),
    )
