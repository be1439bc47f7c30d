"""Reading the dead-letter queue: the dead-lettered runs waiting there, from the job
records (nothing received), and every message, received to be read and released at once
(a peek). What the three kinds of message are: the package's docstring.
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
from richdoc.jobs import Job, JobFilter, JobStatus, JobStore, job_id_for

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient
    from types_boto3_sqs.type_defs import MessageTypeDef

    from richdoc_tools.ops.operator import Operator

MALFORMED = "malformed"
UNDELIVERED = "undelivered"
# How long a scan keeps the messages it received hidden (it releases them when done).
SCAN_VISIBILITY_S = 30


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


@dataclass
class Received:
    """A message a scan received: what it says, and what acting on it takes (its receipt
    handle, the message as SQS sent it)."""

    letter: DeadLetter
    receipt: str
    raw: MessageTypeDef
    settled: bool = False  # deleted, or already released


def scan(sqs: SQSClient, queue_url: str, *, limit: int = 1000) -> Generator[Received]:
    """Every message on the queue once (up to ``limit``): each stays hidden while the scan
    runs and becomes visible again at its end, unless the consumer deleted it. Receiving
    counts: each scanned message's receive count goes up by one."""
    seen: dict[str, Received] = {}
    try:
        while len(seen) < limit:
            batch = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                AttributeNames=["ApproximateReceiveCount"],
                VisibilityTimeout=SCAN_VISIBILITY_S,
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not batch:
                break
            fresh = [_received(m) for m in batch]
            for received in fresh:  # all of the batch is ours to release, yielded or not
                # A message received twice: only its newest receipt handle is valid.
                seen[received.letter.message_id] = received
            yield from fresh
    finally:
        for received in seen.values():
            if not received.settled:
                _release(sqs, queue_url, received.receipt)


def _received(message: MessageTypeDef) -> Received:
    return Received(
        DeadLetter(
            message_id=message["MessageId"],
            body=message["Body"],
            attributes=attribute_values(message.get("MessageAttributes", {})),
            receive_count=int(message.get("Attributes", {}).get("ApproximateReceiveCount", 0)),
        ),
        message["ReceiptHandle"],
        message,
    )


def _release(sqs: SQSClient, queue_url: str, receipt: str) -> None:
    sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=receipt, VisibilityTimeout=0)


def peek(sqs: SQSClient, queue_url: str, *, limit: int = 1000) -> list[DeadLetter]:
    """Read DLQ messages without consuming them (they become visible again at once)."""
    letters = {r.letter.message_id: r.letter for r in scan(sqs, queue_url, limit=limit)}
    return list(letters.values())


@dataclass(frozen=True)
class QueueDepth:
    """SQS's approximate counts: waiting (visible), in flight (received, hidden), delayed."""

    waiting: int
    in_flight: int
    delayed: int

    @property
    def total(self) -> int:
        return self.waiting + self.in_flight + self.delayed


def queue_depth(sqs: SQSClient, queue_url: str) -> QueueDepth:
    """How many messages the queue holds, without receiving any (the age alarm keeps
    seeing the oldest one's age)."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    )["Attributes"]
    return QueueDepth(
        waiting=int(attributes.get("ApproximateNumberOfMessages", 0)),
        in_flight=int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
        delayed=int(attributes.get("ApproximateNumberOfMessagesDelayed", 0)),
    )


def waiting_dead_letters(
    jobs: JobStore, *, kind: str | None = None, feature: str | None = None
) -> list[Job]:
    """The dead-lettered jobs whose message waits on the queue (not discarded), from the
    job records (the status index): no message is received to find them."""
    which = JobFilter(statuses=(JobStatus.DEAD_LETTERED,), kind=kind, feature=feature)
    found: list[Job] = []
    after = None
    while True:
        page = jobs.page(which, limit=100, after=after)
        found += [
            job
            for job in page.jobs
            if job.dead_letter is not None and job.dead_letter.discarded_at is None
        ]
        if page.next is None:
            return found
        after = page.next


def waiting_message_ids(
    jobs: JobStore, *, kind: str | None = None, feature: str | None = None
) -> list[str]:
    """The message ids of ``waiting_dead_letters``: what an action on every waiting dead
    letter (of a kind, of a feature) acts on."""
    return [
        job.dead_letter.message_id
        for job in waiting_dead_letters(jobs, kind=kind, feature=feature)
        if job.dead_letter is not None
    ]


@dataclass(frozen=True)
class ListedLetter:
    """One message as ``dlq list`` shows it: named by its job record (nothing received:
    no receive count; the body is the ingest message the run's dead letter carries), or
    received by a peek."""

    message_id: str
    job_id: str | None
    run: int | None
    kind: str
    feature: str | None
    reason: str | None
    receive_count: int | None
    body: str | None
    received: bool

    @classmethod
    def of_job(cls, job: Job, message_id: str) -> ListedLetter:
        failure = job.failure
        return cls(
            message_id=message_id,
            job_id=job.job_id,
            run=job.run,
            kind=str(failure.kind) if failure else "",
            feature=(failure.feature or None) if failure else None,
            reason=failure.reason if failure else None,
            receive_count=None,
            body=job.message,
            received=False,
        )

    @classmethod
    def of_received(cls, letter: DeadLetter) -> ListedLetter:
        return cls(
            message_id=letter.message_id,
            job_id=letter.job_id,
            run=letter.run,
            kind=letter.kind,
            feature=letter.feature,
            reason=letter.reason,
            receive_count=letter.receive_count,
            body=letter.body,
            received=True,
        )


@dataclass(frozen=True)
class DeadLetterListing:
    """The messages listed and, when they come from the job records, how many others the
    queue's counts say wait there that no record names (SQS moved them after the starter
    failed on every delivery, or they are malformed)."""

    letters: list[ListedLetter]
    others: int
    received: bool  # the letters were received (a peek), not read from the records


def list_dead_letters(jobs: JobStore, sqs: SQSClient, queue_url: str) -> DeadLetterListing:
    """The waiting dead letters from the job records, and the others counted from the
    queue's attributes: nothing is received, so the age alarm's view stays true."""
    depth = queue_depth(sqs, queue_url)
    letters = [
        ListedLetter.of_job(job, job.dead_letter.message_id)
        for job in waiting_dead_letters(jobs)
        if job.dead_letter is not None
    ]
    return DeadLetterListing(
        letters=letters, others=max(depth.total - len(letters), 0), received=False
    )


def peek_listing(sqs: SQSClient, queue_url: str) -> DeadLetterListing:
    """Every message, received to be read (each receive counts; see ``scan``)."""
    return DeadLetterListing(
        letters=[ListedLetter.of_received(letter) for letter in peek(sqs, queue_url)],
        others=0,
        received=True,
    )


def dead_letters(operator: Operator) -> list[DeadLetter]:
    """Every message on the stack's dead-letter queue, read without consuming it."""
    return peek(operator.sqs, operator.resources.dead_letter_queue_url)


def dead_letter_listing(operator: Operator, *, receive: bool = False) -> DeadLetterListing:
    """The waiting dead letters from the job records (nothing received), or with
    ``receive`` every message on the queue, received to be read."""
    url = operator.resources.dead_letter_queue_url
    if receive:
        return peek_listing(operator.sqs, url)
    return list_dead_letters(operator.jobs, operator.sqs, url)
