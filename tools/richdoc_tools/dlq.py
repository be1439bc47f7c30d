"""The dead-letter queue, as operators see it: listed from the job records, and redriven.

Listing never receives a message (``dead_lettered_runs``): SQS leaves a message received
three or more times out of the queue's ``ApproximateAgeOfOldestMessage``, the metric
``DeadLetterAgeAlarm`` watches, so a few listings that received would silence it until the
messages expire. Every run the state machine (or a backstop) dead-lettered is on its job
record (``dead_letter.message_id``, the failure, the original message), so the list is
read from the records (the by-status index) and the queue's attributes say how many
messages are there besides (``QueueDepth``). Only those, the messages SQS moved itself,
need a receive to be seen: ``peek``, which the command line runs only when asked
(``richdoc dlq list --peek``), with a warning.

Against AWS, redrive is ``StartMessageMoveTask`` with the ingest queue as destination
(messages the state machine sent have no SQS-recorded source queue). moto lacks that API,
so the embedded stack uses an equivalent receive/send/delete move (``move_messages``).
What the messages carry is defined by ``richdoc.deadletter``.

Three kinds of message wait there, and ``dlq list`` and ``dlq redrive`` tell them apart:
a dead-lettered run (sent by the state machine with ``richdoc.*`` attributes; redriving
starts the job's next run); an S3 notification SQS moved after the starter failed on
every delivery (kind ``undelivered``; redriving starts or resumes its job); and a
malformed message that is no S3 notification at all (kind ``malformed``; redrive moves it
too, as AWS's move task would, and it fails again and comes back).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from richdoc.contracts import SourceObject
from richdoc.deadletter import (
    ATTR_FEATURE,
    ATTR_JOB_ID,
    ATTR_KIND,
    ATTR_REASON,
    ATTR_RUN,
    attribute_values,
    failure_attributes,
)
from richdoc.ingest import MalformedMessage, body_preview, object_created_events
from richdoc.jobs import Job, job_id_for
from richdoc.taxonomy import Failure, FailureKind

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient

MALFORMED = "malformed"
UNDELIVERED = "undelivered"


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    attributes: dict[str, str] = field(default_factory=dict)
    # How often SQS says the message was received; None when it was read from its job
    # record instead (not received to be listed).
    receive_count: int | None = None

    @functools.cached_property
    def _contents(self) -> list[SourceObject] | MalformedMessage:
        try:
            return object_created_events(self.body)
        except MalformedMessage as exc:
            return exc

    @property
    def dead_lettered_run(self) -> bool:
        """Sent by the state machine for a failed run (it carries the richdoc attributes)."""
        return ATTR_JOB_ID in self.attributes

    @property
    def malformed(self) -> bool:
        return not self.dead_lettered_run and isinstance(self._contents, MalformedMessage)

    @property
    def _object(self) -> SourceObject | None:
        contents = self._contents
        return contents[0] if isinstance(contents, list) and contents else None

    @property
    def job_id(self) -> str | None:
        if self.dead_lettered_run:
            return self.attributes[ATTR_JOB_ID]
        obj = self._object
        if obj is None or not (obj.version_id or obj.etag):
            return None
        return job_id_for(obj.bucket, obj.key, obj.version_id or obj.etag or "")

    @property
    def run(self) -> int | None:
        run = self.attributes.get(ATTR_RUN)
        return int(run) if run else None

    @property
    def kind(self) -> str:
        """The failure kind of a dead-lettered run, else ``malformed`` or ``undelivered``."""
        if self.dead_lettered_run:
            return self.attributes.get(ATTR_KIND, "")
        return MALFORMED if self.malformed else UNDELIVERED

    @property
    def reason(self) -> str | None:
        if self.dead_lettered_run:
            return self.attributes.get(ATTR_REASON)
        contents = self._contents
        if isinstance(contents, MalformedMessage):
            return f"{contents}: {body_preview(self.body)}"
        obj = self._object
        if obj is None:
            return "an S3 notification without object-created records"
        return f"the starter failed on every delivery of s3://{obj.bucket}/{obj.key}"

    @property
    def feature(self) -> str | None:
        return self.attributes.get(ATTR_FEATURE)


def dead_lettered_runs(jobs: Iterable[Job], *, retention_s: int, now: datetime) -> DeadLetters:
    """The dead-letter messages of DEAD_LETTERED jobs, from their records: no receive.

    A run's message left the queue when SQS's retention (``retention_s``) ran out; those
    jobs are counted apart (``expired``)."""
    letters: list[DeadLetter] = []
    expired = 0
    for job in jobs:
        if job.dead_letter is None:
            continue
        if (
            job.ended_at
            and datetime.fromisoformat(job.ended_at) + timedelta(seconds=retention_s) < now
        ):
            expired += 1
            continue
        failure = job.failure or Failure(FailureKind.INTERNAL, "no failure recorded")
        attributes = attribute_values(failure_attributes(job.job_id, job.run, failure))
        letters.append(DeadLetter(job.dead_letter.message_id, job.message or "", attributes))
    return DeadLetters(letters=letters, expired=expired)


@dataclass(frozen=True)
class DeadLetters:
    """What ``richdoc dlq list`` shows without receiving: the dead-lettered runs from the
    records, how many messages the queue holds besides them, and how many dead-lettered
    jobs' messages SQS has already deleted."""

    letters: list[DeadLetter]
    expired: int = 0
    on_queue: int = 0  # ApproximateNumberOfMessages (+ NotVisible) of the queue

    @property
    def others(self) -> int:
        """Messages on the queue no job record names: notifications SQS moved there after
        the starter failed on them (undelivered or malformed), or a second copy of a run's
        message. Approximate, like the queue's own counts."""
        return max(0, self.on_queue - len(self.letters))


@dataclass(frozen=True)
class QueueDepth:
    """The queue's attributes a listing needs (GetQueueAttributes: no receive)."""

    messages: int
    retention_s: int


def queue_depth(sqs: SQSClient, queue_url: str) -> QueueDepth:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "MessageRetentionPeriod",
        ],
    )["Attributes"]
    return QueueDepth(
        messages=int(attributes.get("ApproximateNumberOfMessages", 0))
        + int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
        retention_s=int(attributes.get("MessageRetentionPeriod", 345600)),
    )


def peek(sqs: SQSClient, queue_url: str, *, limit: int = 1000) -> list[DeadLetter]:
    """Read DLQ messages by receiving them, then make them visible again at once.

    Each receive counts: a message received three or more times no longer counts in the
    queue's ``ApproximateAgeOfOldestMessage`` (``DeadLetterAgeAlarm``). Redrive, which
    moves the messages off the queue right after, and ``richdoc dlq list --peek`` use it."""
    seen: dict[str, DeadLetter] = {}
    receipts: list[str] = []
    try:
        while len(seen) < limit:
            batch = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                AttributeNames=["ApproximateReceiveCount"],
                VisibilityTimeout=30,
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not batch:
                break
            for m in batch:
                receipts.append(m["ReceiptHandle"])
                seen[m["MessageId"]] = DeadLetter(
                    message_id=m["MessageId"],
                    body=m["Body"],
                    attributes=attribute_values(m.get("MessageAttributes", {})),
                    receive_count=int(m.get("Attributes", {}).get("ApproximateReceiveCount", 0)),
                )
    finally:
        for receipt in receipts:
            sqs.change_message_visibility(
                QueueUrl=queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
            )
    return list(seen.values())


def start_move_task(sqs: SQSClient, dlq_arn: str, destination_arn: str) -> str:
    """Redrive on AWS: an SQS message move task from the DLQ to the ingest queue."""
    response = sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=destination_arn)
    task: str = response["TaskHandle"]
    return task


def move_messages(sqs: SQSClient, dlq_url: str, destination_url: str) -> int:
    """The same move for the embedded stack: receive, send (body + attributes), delete."""
    moved = 0
    while True:
        batch = sqs.receive_message(
            QueueUrl=dlq_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            VisibilityTimeout=60,
            WaitTimeSeconds=0,
        ).get("Messages", [])
        if not batch:
            return moved
        for m in batch:
            kwargs: dict[str, Any] = {"QueueUrl": destination_url, "MessageBody": m["Body"]}
            if m.get("MessageAttributes"):
                kwargs["MessageAttributes"] = {
                    name: {k: v for k, v in attr.items() if k in ("DataType", "StringValue")}
                    for name, attr in m["MessageAttributes"].items()
                }
            sqs.send_message(**kwargs)
            sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=m["ReceiptHandle"])
            moved += 1


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
