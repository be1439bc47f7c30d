"""Chaos runs: documents (small, broken, sharded) through the real state machine on a
strict embedded stack with injected faults, checked against a fault-free run of the same
documents. The short chaos test (tests/e2e/test_chaos_e2e.py) and ``make chaos``
(scripts/chaos.py, the long run that writes docs/reliability.md) share it.

What a run must show, whatever was injected:

* every upload ends in a terminal job record (nothing lost);
* every SUCCEEDED job has its outputs, and they equal the fault-free run's byte for byte;
* every DEAD_LETTERED job has exactly one dead-letter message for its run;
* every job's terminal change reached a consumer's subscription to the event bus as a
  completion event (at least once: a repeat after an injected fault carries the same
  ``event_id``, and is counted);
* no job fails as ``internal`` where the fault-free run did not (a transient fault that
  surfaced as an internal failure).

A job may end differently from the fault-free run only by exhausting the retries of a
transient fault (``transient``); ``changed`` counts those.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import WITHIN_A_SECOND
from richdoc_tools.local.stack import EmbeddedStack

from bench.documents import write_documents
from richdoc.jobs import Job, JobStatus
from richdoc.taxonomy import FailureKind
from tests.support.parse_inputs import long_pdf

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import MessageTypeDef

# The sharded PDFs are split into shards of this many pages (template parameter).
SHARD_PAGES = 4
PAST_THE_WORKFLOW_TIMEOUT = timedelta(hours=3, minutes=15)
# The dispatcher's backstop and the sweep run every minute (template.yaml's schedules).
BACKSTOP_PERIOD_S = 60.0


@dataclass(frozen=True)
class Document:
    key: str
    body: bytes
    kind: str  # small, broken, unsupported, sharded


def corpus(
    count: int, *, seed: int = 0, sharded_every: int = 8, broken_every: int = 6
) -> list[Document]:
    """``count`` distinct documents: small DOCX, HTML and Markdown; every
    ``broken_every``-th a corrupt DOCX or an unsupported format; every ``sharded_every``-th
    a PDF of 6 to 10 pages (2 or 3 shards). The same for the same arguments."""
    documents = []
    with tempfile.TemporaryDirectory(prefix="richdoc-chaos-") as folder:
        directory = Path(folder)
        small = iter(write_documents(directory / "small", count, seed=seed))
        for index in range(count):
            if index % sharded_every == sharded_every - 1:
                path = long_pdf(
                    directory / f"long-{index}.pdf", pages=6 + index % 5, seed=seed * 7919 + index
                )
                documents.append(
                    Document(f"chaos/{index:04d}-long.pdf", path.read_bytes(), "sharded")
                )
            elif index % broken_every == broken_every - 1:
                if index % 2:
                    body = f"not a zip archive: {seed}-{index}".encode()
                    documents.append(Document(f"chaos/{index:04d}-broken.docx", body, "broken"))
                else:
                    body = f"AC1027 drawing {seed}-{index}".encode()
                    documents.append(
                        Document(f"chaos/{index:04d}-drawing.dwg", body, "unsupported")
                    )
            else:
                path = next(small)
                documents.append(
                    Document(f"chaos/{index:04d}-{path.name}", path.read_bytes(), "small")
                )
    return documents


@dataclass(frozen=True)
class Ended:
    """How one document's job ended, and what it left."""

    status: JobStatus | None  # None: no job record at all
    kind: FailureKind | None
    reason: str
    outputs: tuple[bytes, ...]  # docling, projection, detection (a SUCCEEDED job's)
    dead_letters: int  # messages for its run on the dead-letter queue
    events: int = 0  # completion events of its final terminal change a consumer received


@dataclass
class Outcome:
    ended: dict[str, Ended]  # by document key
    injected: dict[str, int] = field(default_factory=dict)
    retried_invocations: int = 0
    seconds: float = 0.0

    @property
    def terminal(self) -> int:
        return sum(1 for e in self.ended.values() if e.status is not None and e.status.terminal)

    @property
    def lost(self) -> int:
        return len(self.ended) - self.terminal


def _dead_letters(stack: EmbeddedStack) -> Counter[tuple[str, int]]:
    """Every dead-letter message of a run, by (job id, run); left on the queue."""
    sqs = stack.client("sqs")
    url = stack.outputs["DeadLetterQueueUrl"]
    found: list[MessageTypeDef] = []
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], VisibilityTimeout=60
    ).get("Messages", []):
        found.extend(batch)
    counts: Counter[tuple[str, int]] = Counter()
    for message in found:
        attributes = message.get("MessageAttributes", {})
        if "richdoc.job_id" in attributes:
            job = attributes["richdoc.job_id"]["StringValue"]
            counts[(job, int(attributes["richdoc.run"]["StringValue"]))] += 1
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    return counts


CONSUMER = "consumer-chaos"


def _subscribe(stack: EmbeddedStack) -> str:
    """A consumer's queue, target of a rule of its own on the stack's event bus, under the
    queue policy docs/consumers.md prints."""
    from tests.support.consumer_docs import subscribe

    bus = stack.outputs["EventBusName"]
    return subscribe(
        stack.client("sqs"), stack.client("events"), bus, CONSUMER, '{"source": ["richdoc"]}'
    )


def _completion_events(stack: EmbeddedStack, url: str) -> Counter[tuple[str, int, str]]:
    """The events the consumer received, by (job id, run, status)."""
    sqs = stack.client("sqs")
    counts: Counter[tuple[str, int, str]] = Counter()
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in batch:
            detail = json.loads(message["Body"])["detail"]
            counts[(detail["job_id"], detail["run"], detail["status"])] += 1
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return counts


def _ended(
    stack: EmbeddedStack,
    job: Job | None,
    letters: Counter[tuple[str, int]],
    events: Counter[tuple[str, int, str]],
) -> Ended:
    if job is None:
        return Ended(status=None, kind=None, reason="", outputs=(), dead_letters=0)
    outputs: tuple[bytes, ...] = ()
    if job.status is JobStatus.SUCCEEDED and job.outputs is not None:
        keys = (job.outputs.docling_key, job.outputs.projection_key, job.outputs.detection_key)
        outputs = tuple(stack.artifact(key) for key in keys if key)
    return Ended(
        status=job.status,
        kind=job.failure.kind if job.failure else None,
        reason=job.failure.reason if job.failure else "",
        outputs=outputs,
        dead_letters=letters[(job.job_id, job.run)],
        events=events[(job.job_id, job.run, str(job.status))],
    )


def run(stack: EmbeddedStack, documents: list[Document], *, timeout_s: float = 3600) -> Outcome:
    """Upload every document, wait until every job is terminal, let the sweep close what
    the backstops left (it runs as if past the workflow timeout), and read what ended."""
    started = time.monotonic()
    consumer = _subscribe(stack)
    uploads = {
        doc.key: stack.upload(Path(doc.key), key=doc.key, body=doc.body) for doc in documents
    }
    ids = [upload.job_id for upload in uploads.values()]
    deadline = started + timeout_s
    while True:
        jobs = stack.wait_for_jobs(ids, min(BACKSTOP_PERIOD_S, deadline - time.monotonic()))
        if _all_ended(jobs) or time.monotonic() >= deadline:
            break
        # The stack's schedules are the run's to fire: each minute, as EventBridge fires
        # the dispatcher's backstop (what a lost or failed trigger left: an admitted job
        # whose StartExecution failed waits for it) and the sweep, on the same clock.
        stack.fire_schedules()
    if not _all_ended(jobs):
        # An execution whose status event was lost (an asynchronous invocation dropped):
        # the scheduled sweep closes it, as on AWS.
        stack.fire_schedules(at=datetime.now(UTC) + PAST_THE_WORKFLOW_TIMEOUT)
        jobs = stack.wait_for_jobs(ids, 60)
    letters = _dead_letters(stack)
    deadline = time.monotonic() + 120
    while not stack.notifications_delivered() and time.monotonic() < deadline:
        time.sleep(0.1)
    events = _completion_events(stack, consumer)
    return Outcome(
        ended={
            key: _ended(stack, jobs[upload.job_id], letters, events)
            for key, upload in uploads.items()
        },
        injected=stack.injector.summary(),
        retried_invocations=stack.injector.retried_invocations,
        seconds=time.monotonic() - started,
    )


def _all_ended(jobs: dict[str, Job | None]) -> bool:
    return all(job is not None and job.status.terminal for job in jobs.values())


def violations(reference: Outcome, faulty: Outcome) -> list[str]:
    """What the faulty run did that it must not (empty: nothing)."""
    found = []
    for key, ended in faulty.ended.items():
        expected = reference.ended[key]
        if ended.status is None or not ended.status.terminal:
            found.append(f"{key}: lost (status {ended.status})")
            continue
        if ended.status is JobStatus.SUCCEEDED and ended.outputs != expected.outputs:
            found.append(f"{key}: SUCCEEDED with outputs that differ from the fault-free run's")
        if ended.status is JobStatus.DEAD_LETTERED and ended.dead_letters != 1:
            found.append(f"{key}: DEAD_LETTERED with {ended.dead_letters} dead-letter messages")
        if ended.events == 0:
            found.append(f"{key}: {ended.status} without its completion event")
        if ended.status is not JobStatus.DEAD_LETTERED and ended.dead_letters:
            found.append(f"{key}: {ended.status} with {ended.dead_letters} dead-letter messages")
        if ended.kind is FailureKind.INTERNAL and expected.kind is not FailureKind.INTERNAL:
            found.append(f"{key}: internal where the fault-free run was not: {ended.reason}")
        if (ended.status, ended.kind) != (expected.status, expected.kind) and (
            ended.kind is not FailureKind.TRANSIENT
        ):
            found.append(
                f"{key}: {ended.status} {ended.kind} where the fault-free run was "
                f"{expected.status} {expected.kind}: {ended.reason}"
            )
    return found


def changed(reference: Outcome, faulty: Outcome) -> int:
    """Jobs that ended otherwise than without faults (transient retries exhausted)."""
    return sum(
        1
        for key, ended in faulty.ended.items()
        if (ended.status, ended.kind) != (reference.ended[key].status, reference.ended[key].kind)
    )


def stack(log: Path, *, faults: Any = None, retry_delay_scale: float = 0.0) -> EmbeddedStack:
    """A strict stack for chaos runs: schedules fired by the run, shards of SHARD_PAGES,
    indexes that lag their table as AWS's do (within a second; faults widen it)."""
    return EmbeddedStack(
        retry_delay_scale=retry_delay_scale,
        retry_visibility_s=0,
        log_path=log,
        schedules=False,
        parameters={"ShardPages": str(SHARD_PAGES)},
        injected_faults=faults,
        index_lag=WITHIN_A_SECOND,
    )


def summary(outcome: Outcome) -> dict[str, Any]:
    """The figures of a run, as JSON."""
    statuses = Counter(str(e.status) for e in outcome.ended.values())
    return {
        "documents": len(outcome.ended),
        "terminal": outcome.terminal,
        "lost": outcome.lost,
        "statuses": dict(sorted(statuses.items())),
        "injected": outcome.injected,
        "faults": sum(outcome.injected.values()),
        "retried_invocations": outcome.retried_invocations,
        "completion_events": sum(e.events for e in outcome.ended.values()),
        "events_lost": sum(1 for e in outcome.ended.values() if e.events == 0),
        "seconds": round(outcome.seconds, 1),
    }


def as_json(outcome: Outcome) -> str:
    return json.dumps(summary(outcome), indent=2, sort_keys=True)
