"""The dead-letter queue, as operators see it: read without consuming, and redrive.

Against AWS, redrive is ``StartMessageMoveTask`` with the ingest queue as destination
(messages the state machine sent have no SQS-recorded source queue). moto lacks that API,
so the embedded stack uses an equivalent receive/send/delete move (``move_messages``).
What the messages carry is defined by ``richdoc.deadletter``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from richdoc.deadletter import (
    ATTR_FEATURE,
    ATTR_JOB_ID,
    ATTR_KIND,
    ATTR_REASON,
    ATTR_RUN,
    attribute_values,
)


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    attributes: dict[str, str] = field(default_factory=dict)
    receive_count: int = 0

    @property
    def job_id(self) -> str | None:
        return self.attributes.get(ATTR_JOB_ID)

    @property
    def run(self) -> int | None:
        run = self.attributes.get(ATTR_RUN)
        return int(run) if run else None

    @property
    def kind(self) -> str | None:
        return self.attributes.get(ATTR_KIND)

    @property
    def reason(self) -> str | None:
        return self.attributes.get(ATTR_REASON)

    @property
    def feature(self) -> str | None:
        return self.attributes.get(ATTR_FEATURE)


def peek(sqs: Any, queue_url: str, *, limit: int = 1000) -> list[DeadLetter]:
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


def start_move_task(sqs: Any, dlq_arn: str, destination_arn: str) -> str:
    """Redrive on AWS: an SQS message move task from the DLQ to the ingest queue."""
    response = sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=destination_arn)
    task: str = response["TaskHandle"]
    return task


def move_messages(sqs: Any, dlq_url: str, destination_url: str) -> int:
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
