"""The notifier's logic: a job record's terminal change -> the run's outputs kept with
the document, the document's manifest refreshed, then one completion event on the
stack's event bus.

The jobs table's stream hands each write of an item over as its old and new images; job
items (``sk = JOB``) become ``Job`` models, every other item (attempts, digest
references) is passed over. A write that ends a run (``richdoc.completion.completed``)
first copies a success's outputs next to the document's manifest
(``richdoc.document_results``), then refreshes the manifest of the job's document
(``richdoc.manifests``), so that a consumer that reads the manifest on hearing the event
finds it current; a deletion's kept outputs, and a success's older runs of the same job,
are deleted once the manifest no longer names them; then it publishes the event with
PutEvents, saying how the change relates to the manifest. Any step failing raises: the
stream record is retried (every step is idempotent), so an event may be published twice
but never lost; consumers drop the second by its ``event_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from richdoc.awserrors import aws_errors
from richdoc.completion import completed, completion_detail
from richdoc.document_results import ResultCopies
from richdoc.jobs import Job, JobStatus
from richdoc.jobs.keys import JOB_SK
from richdoc.manifests import ManifestKeeper
from richdoc.taxonomy import Transient
from richdoc_client.events import DETAIL_TYPE, EVENT_SOURCE, CompletionDetail

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient

# The event bus's name (the notifier's environment; template resource EventBus).
EVENT_BUS_ENV = "EVENT_BUS_NAME"


def job_image(image: Mapping[str, Any] | None) -> Job | None:
    """A stream image (deserialized) as a job; None for other items and no image."""
    if not image or image.get("sk") != JOB_SK:
        return None
    return Job.from_item(dict(image))


class Notifier:
    def __init__(
        self,
        *,
        events: EventBridgeClient,
        bus_name: str,
        manifests: ManifestKeeper,
        results_bucket: str,
    ) -> None:
        self.events = events
        self.bus_name = bus_name
        self.manifests = manifests
        self.results_bucket = results_bucket

    @property
    def copies(self) -> ResultCopies:
        return self.manifests.copies

    def job_changed(self, old: Job | None, new: Job | None) -> CompletionDetail | None:
        """Handle one write of a job item; the event published, if the write ended a run."""
        job = completed(old, new)
        if job is None:
            return None
        self.copies.keep(job)
        manifest = self.manifests.refresh(job.source.bucket, job.source.key)
        if job.status is JobStatus.DELETED:
            self.copies.discard(job)
        elif job.status is JobStatus.SUCCEEDED:
            self.copies.prune(job)  # the job's older runs, which the manifest no longer names
        detail = completion_detail(job, self.results_bucket, manifest)
        self.publish(detail)
        return detail

    def publish(self, detail: CompletionDetail) -> None:
        what = f"publishing the completion event of job {detail.job_id} run {detail.run}"
        with aws_errors(what):
            response = self.events.put_events(
                Entries=[
                    {
                        "Source": EVENT_SOURCE,
                        "DetailType": DETAIL_TYPE,
                        "Detail": detail.to_json(),
                        "EventBusName": self.bus_name,
                    }
                ]
            )
        if response.get("FailedEntryCount"):
            entry = response["Entries"][0]
            raise Transient(f"{what}: {entry.get('ErrorCode')} {entry.get('ErrorMessage')}")
