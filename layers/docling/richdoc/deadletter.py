"""Dead-letter messages: what a failed run leaves on the DLQ, and how operators redrive it.

The state machine's catch path sends the ORIGINAL ingest message body to the DLQ with
``richdoc.*`` message attributes (job id, run, kind, reason, feature, error). Redriving
moves it back to the ingest queue, where the starter recognises the attributes and starts
the next run of the same job. Messages SQS itself moved to the DLQ (the starter failed
``maxReceiveCount`` times) carry no attributes and simply start or resume their job.

Against AWS, redrive is ``StartMessageMoveTask`` with the ingest queue as destination
(messages the state machine sent have no SQS-recorded source queue). moto lacks that API,
so the embedded stack uses an equivalent receive/send/delete move (``move_messages``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from richdoc.taxonomy import Failure

ATTR_JOB_ID = "richdoc.job_id"
ATTR_RUN = "richdoc.run"
ATTR_KIND = "richdoc.kind"
ATTR_REASON = "richdoc.reason"
ATTR_FEATURE = "richdoc.feature"
ATTR_ERROR = "richdoc.error"
# SQS attribute values are at most 256 KB with the body; keep reasons short.
MAX_ATTRIBUTE_CHARS = 1000


def failure_attributes(job_id: str, run: int, failure: Failure) -> dict[str, dict[str, str]]:
    """SQS ``MessageAttributes`` for a dead-lettered run (empty values are not allowed)."""
    values = {
        ATTR_JOB_ID: job_id,
        ATTR_RUN: str(run),
        ATTR_KIND: str(failure.kind),
        ATTR_REASON: failure.reason[:MAX_ATTRIBUTE_CHARS],
        ATTR_FEATURE: failure.feature,
        ATTR_ERROR: failure.error,
    }
    return {
        name: {"DataType": "Number" if name == ATTR_RUN else "String", "StringValue": value}
        for name, value in values.items()
        if value
    }


def _string_values(attributes: Mapping[str, Any]) -> dict[str, str]:
    """Accept both SQS API shape (StringValue) and Lambda event shape (stringValue)."""
    values = {}
    for name, attr in attributes.items():
        if isinstance(attr, str):
            values[name] = attr
        elif isinstance(attr, Mapping):
            value = attr.get("StringValue", attr.get("stringValue"))
            if value is not None:
                values[name] = str(value)
    return values


@dataclass(frozen=True)
class RedriveMarker:
    """Which dead-lettered run a redriven message belongs to."""

    job_id: str
    run: int

    @classmethod
    def from_attributes(cls, attributes: Mapping[str, Any]) -> RedriveMarker | None:
        values = _string_values(attributes)
        if ATTR_JOB_ID not in values or ATTR_RUN not in values:
            return None
        try:
            return cls(job_id=values[ATTR_JOB_ID], run=int(values[ATTR_RUN]))
        except ValueError:
            return None


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
                    attributes=_string_values(m.get("MessageAttributes", {})),
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
