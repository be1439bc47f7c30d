"""The dead-letter queue, as operators see it: read without consuming, and redrive.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from richdoc.contracts import SourceObject
from richdoc.deadletter import (
    ATTR_FEATURE,
    ATTR_JOB_ID,
    ATTR_KIND,
    ATTR_REASON,
    ATTR_RUN,
    attribute_values,
)
from richdoc.ingest import MalformedMessage, body_preview, object_created_events
from richdoc.jobs import job_id_for

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient

MALFORMED = "malformed"
UNDELIVERED = "undelivered"


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    attributes: dict[str, str] = field(default_factory=dict)
    receive_count: int = 0

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


def peek(sqs: SQSClient, queue_url: str, *, limit: int = 1000) -> list[DeadLetter]:
    """Read DLQ messages without consuming them (they become visible again at once)."""
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
