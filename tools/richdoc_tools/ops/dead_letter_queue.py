"""The dead-letter queue, as operators see it: read without consuming, redrive, discard.

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

The console works the queue message by message: the dead-lettered jobs come from the job
records, which carry each message's id (``waiting_dead_letters``), so listing receives
nothing and the age alarm keeps seeing the oldest message's age; only an action on chosen
messages (``redrive_chosen``, ``discard``) receives, to find them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Collection, Generator
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
from richdoc.jobs import Job, JobFilter, JobStatus, JobStore, StaleRun, job_id_for

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
class _Received:
    letter: DeadLetter
    receipt: str
    raw: MessageTypeDef
    settled: bool = False  # deleted, or already released


def _scan(sqs: SQSClient, queue_url: str, *, limit: int = 1000) -> Generator[_Received]:
    """Every message on the queue once (up to ``limit``): each stays hidden while the scan
    runs and becomes visible again at its end, unless the consumer deleted it. Receiving
    counts: each scanned message's receive count goes up by one."""
    seen: dict[str, _Received] = {}
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


def _received(message: MessageTypeDef) -> _Received:
    return _Received(
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
    letters = {r.letter.message_id: r.letter for r in _scan(sqs, queue_url, limit=limit)}
    return list(letters.values())


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
            _forward(sqs, m, destination_url)
            sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=m["ReceiptHandle"])
            moved += 1


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
    with contextlib.closing(_scan(sqs, queue_url)) as scan:
        for received in scan:
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
    """Every message, received to be read (each receive counts; see ``_scan``)."""
    return DeadLetterListing(
        letters=[ListedLetter.of_received(letter) for letter in peek(sqs, queue_url)],
        others=0,
        received=True,
    )


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
