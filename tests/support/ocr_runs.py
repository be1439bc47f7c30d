"""Running scans through the embedded stack for the OCR end-to-end tests: the documents'
text, waiting for jobs, reading their outputs and their document's manifest, and a
consumer's subscription to the completion events."""

from __future__ import annotations

import json
from typing import Any

from richdoc.jobs import Job
from richdoc_client.events import CompletionEvent
from richdoc_client.identity import document_id
from richdoc_client.manifest import Manifest, manifest_key
from richdoc_client.projection import Projection
from tests.support.consumer_docs import subscribe
from tests.support.published_schemas import schema_errors

NATIVE_LINE = "The first page keeps its text layer."
SCANNED_LINES = ("The second page is a scan.", "Only OCR reads this sentence.")
TIMEOUT_S = 600  # OCR costs seconds a page, and several documents share two cores


def ended(stack: Any, job_ids: list[str]) -> dict[str, Job]:
    jobs = stack.wait_for_jobs(job_ids, TIMEOUT_S)
    for job_id, job in jobs.items():
        assert job is not None and job.status.terminal, (job_id, job)
    return jobs


def read(stack: Any, key: str) -> bytes:
    s3 = stack.client("s3")
    body: bytes = s3.get_object(Bucket=stack.outputs["ArtifactBucketName"], Key=key)["Body"].read()
    return body


def projection_of(stack: Any, job: Job) -> Projection:
    assert job.outputs is not None
    return Projection.model_validate_json(read(stack, job.outputs.projection_key))


def manifest_of(stack: Any, job: Job) -> Manifest:
    """The manifest of the job's document, as stored (and checked against its schema)."""
    raw = read(stack, manifest_key(document_id(job.source.bucket, job.source.key)))
    assert schema_errors("manifest", json.loads(raw)) == []
    return Manifest.model_validate_json(raw)


class Subscription:
    """A consumer's queue, target of a rule on the stack's bus (docs/consumers.md)."""

    def __init__(self, stack: Any, name: str) -> None:
        self.stack, self.name = stack, name
        # Under the queue policy docs/consumers.md prints: EventBridge delivers to a
        # queue only where its policy lets the rule send.
        self.queue = subscribe(
            stack.client("sqs"),
            stack.client("events"),
            stack.outputs["EventBusName"],
            name,
            '{"source": ["richdoc"]}',
        )

    def of(self, job_id: str) -> list[CompletionEvent]:
        from richdoc_tools.local.runtime.loops import wait_until

        assert wait_until(self.stack.notifications_delivered, 60)
        sqs, received = self.stack.client("sqs"), []
        while messages := sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10).get(
            "Messages"
        ):
            for message in messages:
                body = json.loads(message["Body"])
                assert schema_errors("event", body["detail"]) == []
                received.append(CompletionEvent.model_validate(body))
                sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=message["ReceiptHandle"])
        return [event for event in received if event.detail.job_id == job_id]

    def close(self) -> None:
        events, bus = self.stack.client("events"), self.stack.outputs["EventBusName"]
        events.remove_targets(Rule=self.name, EventBusName=bus, Ids=["queue"])
        events.delete_rule(Name=self.name, EventBusName=bus)
        self.stack.client("sqs").delete_queue(QueueUrl=self.queue)


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, punctuation dropped: what OCR is judged by."""
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()
