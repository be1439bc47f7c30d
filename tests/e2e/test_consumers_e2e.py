"""What applications consume, end to end through the real state machine on the embedded
stack: a consumer subscribes a rule of its own to the stack's event bus and receives
exactly one completion event per terminal change of a job (a success, a dead letter, a
cancel, a deletion, a run the reconciler finished, a redriven run); each document's
manifest points at its current results; the outputs, chunks, manifests and events meet
their published schemas and read back through the reader; allow-listed metadata and tags
travel with them; `richdoc events tail` shows them and `events republish` sends one again
with the same id.

Waits are on observable conditions: a job's terminal record, the notifier having handled
every change written so far (``notifications_delivered``), a gate the test opens."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from richdoc_tools.cli import main
from richdoc_tools.local.faults.scripted import ServiceError
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ParseInput
from richdoc.jobs import JobStatus, job_id_for
from richdoc_client.chunks import Chunk
from richdoc_client.events import CompletionEvent, TerminalStatus
from richdoc_client.identity import document_id
from richdoc_client.reader import ResultsReader
from tests.support.consumer_docs import subscribe
from tests.support.gates import Gate
from tests.support.paths import SAMPLES
from tests.support.published_schemas import schema_errors
from tests.support.stack_runs import job_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 120
DEAD_LETTER_QUEUE = "DeadLetterQueue"
STATE_MACHINE_SEND_ATTEMPTS = 6  # the definition's dead-letter send: 1 + 5 retries


class Consumer:
    """An application's subscription: an SQS queue of its own, target of a rule of its
    own on the stack's bus, made with the consumer's calls and the queue policy
    docs/consumers.md prints (the strict stack delivers nothing without it)."""

    def __init__(self, stack: Any) -> None:
        self.stack = stack
        self.queue = subscribe(
            stack.client("sqs"),
            stack.client("events"),
            stack.outputs["EventBusName"],
            "consumer-e2e",
            '{"source": ["richdoc"]}',
        )
        self.received: list[CompletionEvent] = []

    def drain(self) -> list[CompletionEvent]:
        sqs = self.stack.client("sqs")
        while True:
            messages = sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10)
            if not messages.get("Messages"):
                return self.received
            for message in messages["Messages"]:
                body = json.loads(message["Body"])
                assert schema_errors("event", body["detail"]) == []
                self.received.append(CompletionEvent.model_validate(body))
                sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=message["ReceiptHandle"])

    def of(self, job_id: str) -> list[CompletionEvent]:
        return [e for e in self.drain() if e.detail.job_id == job_id]

    def settled(self) -> list[CompletionEvent]:
        """Every event of every change so far, once the notifier has caught up."""
        assert wait_until(self.stack.notifications_delivered, TIMEOUT_S)
        return self.drain()


@pytest.fixture
def consumer(stack: Any) -> Iterator[Consumer]:
    consumer = Consumer(stack)
    yield consumer
    events = stack.client("events")
    bus = stack.outputs["EventBusName"]
    events.remove_targets(Rule="consumer-e2e", EventBusName=bus, Ids=["queue"])
    events.delete_rule(Name="consumer-e2e", EventBusName=bus)
    stack.client("sqs").delete_queue(QueueUrl=consumer.queue)


def ended(stack: Any, job_id: str) -> Any:
    job = stack.wait_for_jobs([job_id], TIMEOUT_S)[job_id]
    assert job is not None and job.status.terminal, job
    return job


def only_event(consumer: Consumer, job_id: str) -> CompletionEvent:
    assert wait_until(lambda: bool(consumer.of(job_id)), TIMEOUT_S)
    consumer.settled()
    [event] = consumer.of(job_id)
    return event


def reader(stack: Any) -> ResultsReader:
    return ResultsReader.s3(stack.outputs["ArtifactBucketName"], client=stack.client("s3"))


def test_a_success_is_announced_once_with_its_manifest_outputs_and_chunks(
    stack: Any, consumer: Consumer
) -> None:
    s3 = stack.client("s3")
    key = "consumers/contract <v1>.docx"
    s3.put_object(
        Bucket=stack.outputs["IngestBucketName"],
        Key=key,
        Body=(SAMPLES / "contract.docx").read_bytes(),
        Metadata={"richdoc-tenant": "acme", "owner": "not passed"},
        Tagging="richdoc-team=legal&cost=42",
    )
    bucket = stack.outputs["IngestBucketName"]
    version = s3.head_object(Bucket=bucket, Key=key)["VersionId"]
    job = ended(stack, job_id_for(bucket, key, version))
    assert job.status is JobStatus.SUCCEEDED
    assert job.metadata == {"richdoc-team": "legal", "richdoc-tenant": "acme"}

    event = only_event(consumer, job.job_id)
    detail = event.detail
    assert (detail.status, detail.run, detail.source.key) == (TerminalStatus.SUCCEEDED, 1, key)
    assert detail.source.sha256 == job.source.sha256 is not None
    assert detail.document_id == document_id(bucket, key)
    assert detail.metadata == {"richdoc-team": "legal", "richdoc-tenant": "acme"}
    assert detail.counts is not None and detail.counts.chunks == job.counts.chunks

    read = reader(stack)
    manifest = read.manifest_of(bucket, key)
    assert manifest.result is not None and manifest.result.outputs == detail.outputs
    assert schema_errors("manifest", manifest.model_dump(mode="json", by_alias=True)) == []
    projection = read.projection(manifest)
    chunks = list(read.chunks(detail))
    assert len(chunks) == detail.counts.chunks
    assert chunks
    text = projection.canonical_text.encode()
    for chunk in chunks:
        assert schema_errors("chunk", chunk.model_dump(mode="json")) == []
        assert text[chunk.start : chunk.end].decode() == chunk.text
        assert chunk.document_id == detail.document_id
    assert isinstance(chunks[0], Chunk)


def test_a_dead_letter_a_cancel_and_a_deletion_are_each_announced_once(
    stack: Any, consumer: Consumer, patch_parse: Callable[..., None]
) -> None:
    broken = upload(stack, "consumers/broken.docx", b"not a zip archive")
    assert ended(stack, broken).status is JobStatus.DEAD_LETTERED
    [dead] = [only_event(consumer, broken)]
    assert dead.detail.failure is not None and dead.detail.failure.kind == "corrupt_input"
    assert "zip" not in dead.detail.to_json()  # the reason stays in the job record

    gate = Gate()
    patch_parse(gate.before(lambda event, real, **kw: real(event, **kw)))
    held = upload(stack, "consumers/held.md", b"# Held\n\nCancel me.\n")
    assert gate.reached()
    assert main(["jobs", "cancel", held, "--reason", "consumer test"]) == 0
    gate.open()
    assert only_event(consumer, held).detail.status is TerminalStatus.CANCELLED

    kept = upload(stack, "consumers/kept.md", b"# Kept\n\nThen deleted.\n")
    assert ended(stack, kept).status is JobStatus.SUCCEEDED
    # Once the event is heard, the manifest it follows is there.
    assert wait_until(lambda: bool(consumer.of(kept)), TIMEOUT_S)
    bucket = stack.outputs["IngestBucketName"]
    assert reader(stack).manifest_of(bucket, "consumers/kept.md").status == "SUCCEEDED"
    stack.client("s3").delete_object(Bucket=bucket, Key="consumers/kept.md")
    assert wait_until(lambda: job_of(stack, kept).status is JobStatus.DELETED, TIMEOUT_S)
    events = consumer.settled()
    of_kept = [e.detail for e in events if e.detail.job_id == kept]
    assert [(d.status, d.outputs is not None) for d in of_kept] == [
        (TerminalStatus.SUCCEEDED, True),
        (TerminalStatus.DELETED, False),
    ]
    with pytest.raises(LookupError):
        reader(stack).manifest_of(bucket, "consumers/kept.md")  # the document is gone
    changes = Counter((e.detail.job_id, e.detail.run, e.detail.status) for e in events)
    assert set(changes.values()) == {1}  # not one change announced twice


def test_a_run_the_reconciler_finishes_and_its_redrive_are_announced_once_each(
    stack: Any, consumer: Consumer, capsys: pytest.CaptureFixture[str]
) -> None:
    stack.script.fail_sends(DEAD_LETTER_QUEUE, *[ServiceError()] * STATE_MACHINE_SEND_ATTEMPTS)
    job_id = upload(stack, "consumers/reconciled.docx", b"not a zip archive either")
    job = ended(stack, job_id)
    assert job.status is JobStatus.DEAD_LETTERED and job.dead_letter is not None
    assert job.dead_letter.sent_by == "reconciler"
    assert only_event(consumer, job_id).detail.run == 1

    assert main(["jobs", "redrive", job_id]) == 0
    assert wait_until(
        lambda: (j := job_of(stack, job_id)).run == 2 and j.status.terminal, TIMEOUT_S
    )
    events = [e for e in consumer.settled() if e.detail.job_id == job_id]
    assert [(e.detail.run, e.detail.status) for e in events] == [
        (1, TerminalStatus.DEAD_LETTERED),
        (2, TerminalStatus.DEAD_LETTERED),
    ]
    assert len({e.detail.event_id for e in events}) == 2

    # The event log shows them; a republish sends run 2's again with the same id.
    capsys.readouterr()
    assert main(["events", "tail", "--since", "1h", "--json"]) == 0
    tailed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    logged = [e for e in tailed if e["detail"]["job_id"] == job_id]
    assert [e["detail"]["event_id"] for e in logged] == [e.detail.event_id for e in events]
    assert main(["events", "republish", job_id, "--json"]) == 0
    [again] = json.loads(capsys.readouterr().out)
    assert again["event"]["event_id"] == events[1].detail.event_id
    assert [e.detail.event_id for e in consumer.of(job_id)][-1] == events[1].detail.event_id


def test_events_republish_refuses_a_job_still_running(
    stack: Any, patch_parse: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    gate = Gate()

    def held(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        gate.wait_here()
        return real(event, **kw)

    patch_parse(held)
    job_id = upload(stack, "consumers/running.md", b"# Running\n")
    assert gate.reached()
    capsys.readouterr()
    assert main(["events", "republish", job_id, "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)
    assert (result["outcome"], result["event"]) == ("open", None)
    assert main(["events", "republish", "f" * 32]) == 1
    gate.open()
    ended(stack, job_id)
