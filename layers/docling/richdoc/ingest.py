"""From an ingest-queue message to a job waiting in the backlog (the starter's logic).

Accepted message bodies: S3 event notifications (``Records`` with ``ObjectCreated:*``,
``ObjectRemoved:*`` or ``LifecycleExpiration:*``), EventBridge "Object Created" and
"Object Deleted" events from S3, and either of those redriven from the dead-letter queue
(they then carry the ``richdoc.*`` failure attributes). S3 test events are skipped.
Object keys arrive URL-encoded (``+`` for space) and are decoded here. Each created
object becomes a ``richdoc.contracts.SourceObject`` and a job, QUEUED in its tenant's
backlog in the order of its upload (``richdoc.admission``: the dispatcher admits it when
the deployment has room and only then starts its execution); each removed one deletes
its jobs (``richdoc.deletion``). A created object that is already gone when its
notification is handled (its version deleted before; S3 answers 404) queues nothing: its
job is recorded DELETED with the reason, a tombstone, as its removal notification would
have recorded it.

The starter starts no execution: a burst of uploads costs a job write and a lane item's
write each, and nothing it calls throttles with the burst's size.

Failures: AWS throttling, 5xx and connection errors (S3, DynamoDB) are ``Transient``
(``richdoc.awserrors``); any exception fails just its record, which SQS redelivers and,
after ``maxReceiveCount`` receives, moves to the dead-letter queue.

Idempotency: the job id is derived from bucket, key and version; a duplicate notification
finds the job and queues nothing new (it only marks the backlog's lane item again, in case
the first delivery failed between the two writes). Only a redrive of the dead-lettered
(or cancelled) run advances the job to its next run, which waits in the backlog in turn.
A run cancelled while it waits leaves the backlog in the cancel's write: nothing starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event
from aws_lambda_powertools.utilities.data_classes.s3_event import S3EventBridgeNotificationEvent
from botocore.exceptions import ClientError

from richdoc.admission.backlog import Backlog
from richdoc.admission.tenants import tenant_of
from richdoc.awserrors import aws_errors
from richdoc.contracts import JobOptions, SourceObject
from richdoc.deadletter import RedriveMarker
from richdoc.deletion import Deletion, RemovedObject
from richdoc.jobs import (
    DeletionMark,
    JobStatus,
    JobStore,
    StaleRun,
    execution_arn,
    execution_name,
    job_id_for,
    timestamp,
)
from richdoc.jobs.keys import BacklogKind
from richdoc.metadata import passed_through

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# User metadata (x-amz-meta-richdoc-clarify: true|false) overrides the stack default.
CLARIFY_METADATA_KEY = "richdoc-clarify"


# How much of a malformed message's body a log line (or `richdoc dlq list`) shows.
PREVIEW_CHARS = 120


class MalformedMessage(ValueError):
    """The message is not an S3 object-created notification (it will reach the DLQ)."""


def body_preview(body: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of a message body as a Python literal: quoted, escaped, cut with '...'."""
    shown = repr(body[:limit])
    return shown + "..." if len(body) > limit else shown


@dataclass(frozen=True)
class CreatedObject:
    """An object version one message says was created, and when (the event's time)."""

    source: SourceObject
    uploaded_at: str | None = None


@dataclass(frozen=True)
class ObjectEvents:
    """What one message says happened to source objects."""

    created: list[CreatedObject] = field(default_factory=list)
    removed: list[RemovedObject] = field(default_factory=list)


def _event_time(value: object) -> str | None:
    """An event's time as records store moments; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return timestamp(datetime.fromisoformat(value))
    except ValueError:
        return None


# S3's removal events: a version deleted for good, or a delete marker hiding the key.
_REMOVED_PREFIXES = ("ObjectRemoved:", "LifecycleExpiration:")


def object_events(body: str) -> ObjectEvents:
    """The objects one message body says were created or removed; nothing for S3 test
    events and other S3 events."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise MalformedMessage(f"message body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise MalformedMessage("message body is not a JSON object")
    if data.get("Event") == "s3:TestEvent":
        return ObjectEvents()
    if "Records" in data:
        events = ObjectEvents()
        for record in S3Event(data).records:
            if record.event_source != "aws:s3":
                continue
            obj = record.s3.get_object
            key = unquote_plus(obj.key)
            if record.event_name.startswith("ObjectCreated:"):
                source = SourceObject(
                    bucket=record.s3.bucket.name,
                    key=key,
                    version_id=obj.version_id or None,
                    etag=obj.etag.strip('"') or None,
                    size=obj.get("size"),
                )
                events.created.append(CreatedObject(source, _event_time(record.get("eventTime"))))
            elif record.event_name.startswith(_REMOVED_PREFIXES):
                events.removed.append(
                    RemovedObject(
                        bucket=record.s3.bucket.name,
                        key=key,
                        version_id=obj.get("versionId") or None,
                        event=record.event_name,
                        delete_marker=record.event_name.endswith(":DeleteMarkerCreated"),
                    )
                )
        return events
    if data.get("source") == "aws.s3" and data.get("detail-type") == "Object Created":
        detail = S3EventBridgeNotificationEvent(data).detail
        source = SourceObject(
            bucket=detail.bucket.name,
            key=detail.object.key,  # Powertools decodes it
            version_id=detail.object.get("version-id") or None,
            etag=detail.object.etag.strip('"') or None,
            size=detail.object.size,
        )
        return ObjectEvents(created=[CreatedObject(source, _event_time(data.get("time")))])
    if data.get("source") == "aws.s3" and data.get("detail-type") == "Object Deleted":
        detail = S3EventBridgeNotificationEvent(data).detail
        marker = detail.raw_event.get("deletion-type") == "Delete Marker Created"
        return ObjectEvents(
            removed=[
                RemovedObject(
                    bucket=detail.bucket.name,
                    key=detail.object.key,
                    version_id=detail.object.get("version-id") or None,
                    event="ObjectRemoved:" + ("DeleteMarkerCreated" if marker else "Delete"),
                    delete_marker=marker,
                )
            ]
        )
    raise MalformedMessage("not an S3 object notification")


def object_created_events(body: str) -> list[SourceObject]:
    """The objects one message body says were created; [] for S3 test events."""
    return [created.source for created in object_events(body).created]


class StartOutcome(StrEnum):
    QUEUED = "queued"  # a new run waits in the backlog
    ALREADY_QUEUED = "already_queued"  # duplicate delivery; the run is queued (or on)
    DUPLICATE_IGNORED = "duplicate_ignored"  # the job ended; only a redrive restarts it
    DELETED = "deleted"  # the source object was removed: the job and its artifacts went


@dataclass(frozen=True)
class StartResult:
    job_id: str
    run: int
    execution_name: str
    outcome: StartOutcome


def _parse_bool(value: str) -> bool | None:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    return None


class Starter:
    def __init__(
        self,
        *,
        s3: S3Client,
        jobs: JobStore,
        backlog: Backlog,
        state_machine_arn: str,
        clarify_default: bool,
        deletion: Deletion | None = None,
        metadata_prefix: str = "",
        tenant_key: str = "",
    ) -> None:
        self.s3 = s3
        self.jobs = jobs
        self.backlog = backlog
        # The executions' ARNs are recorded on the jobs (the dispatcher starts them).
        self.state_machine_arn = state_machine_arn
        # The user metadata or tag naming an upload's tenant (richdoc.admission.tenants).
        self.tenant_key = tenant_key
        self.clarify_default = clarify_default
        # User metadata and tags named with it travel with the results (richdoc.metadata).
        self.metadata_prefix = metadata_prefix
        # Removal notifications delete their jobs through it (None: they are ignored).
        self.deletion = deletion

    def handle_message(
        self, body: str, attributes: Mapping[str, str] | None = None
    ) -> list[StartResult]:
        redrive = RedriveMarker.from_attributes(attributes or {})
        events = object_events(body)
        results = [self._queue(created, body, redrive) for created in events.created]
        if self.deletion is not None:
            for removed in events.removed:
                results.extend(
                    StartResult(
                        job.job_id,
                        job.run,
                        execution_name(job.job_id, job.run),
                        StartOutcome.DELETED,
                    )
                    for job in self.deletion.source_removed(removed)
                )
        return results

    def _head(self, created: SourceObject) -> Mapping[str, Any] | None:
        """The object's headers; None when it is gone (404: the starter may list the
        bucket, so S3 says so rather than 403)."""
        try:
            with aws_errors(f"reading s3://{created.bucket}/{created.key}"):
                head = self.s3.head_object(**created.get_kwargs())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("404", "NoSuchKey", "NoSuchVersion", "NotFound"):
                return None
            if code == "403":
                # Unreadable: the plan or parse step meets the same refusal and records
                # it (SourceAccessDenied), so the upload still ends in a terminal record.
                return {}
            raise
        return head

    def _tags(self, source: SourceObject) -> list[tuple[str, str]]:
        """The version's object tags; none when nothing is passed through, no tag names
        the tenant, or the version is gone by now."""
        if not self.metadata_prefix and not self.tenant_key:
            return []
        try:
            with aws_errors(f"reading the tags of s3://{source.bucket}/{source.key}"):
                tagging = self.s3.get_object_tagging(**source.get_kwargs())
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "NoSuchVersion", "404"):
                return []
            raise
        return [(tag["Key"], tag["Value"]) for tag in tagging.get("TagSet", [])]

    def _gone(self, job_id: str, source: SourceObject) -> StartResult | None:
        """A created object already deleted: its job recorded DELETED, nothing started;
        None when the job exists (handled as any repeated notification)."""
        version = f" version {source.version_id}" if source.version_id else ""
        mark = DeletionMark(
            at=self.jobs.clock(),
            by="source-removed",
            reason=f"s3://{source.bucket}/{source.key}{version} was deleted before its "
            "creation notification was handled",
        )
        if self.jobs.create_deleted(job_id, source, mark) is None:
            return None
        return StartResult(job_id, 1, execution_name(job_id, 1), StartOutcome.DELETED)

    @staticmethod
    def _ignored(job_id: str, run: int) -> StartResult:
        return StartResult(job_id, run, execution_name(job_id, run), StartOutcome.DUPLICATE_IGNORED)

    def _queue(
        self, created: CreatedObject, body: str, redrive: RedriveMarker | None
    ) -> StartResult:
        found = self._head(created.source)
        head = found or {}
        obj = created.source
        version = obj.version_id or head.get("VersionId")
        etag = obj.etag or str(head.get("ETag", "")).strip('"') or None
        job_id = job_id_for(obj.bucket, obj.key, version or etag or "")
        user_metadata = head.get("Metadata", {})
        clarify = _parse_bool(user_metadata.get(CLARIFY_METADATA_KEY, ""))
        source = SourceObject(
            bucket=obj.bucket,
            key=obj.key,
            version_id=version,
            etag=etag,
            size=head.get("ContentLength", obj.size),
        )
        options = JobOptions(clarify=self.clarify_default if clarify is None else clarify)
        if found is None:
            tombstone = self._gone(job_id, source)
            if tombstone is not None:
                return tombstone

        tags = self._tags(source) if found else []
        tenant = tenant_of(
            source.key, metadata=user_metadata, tags=tags, tenant_key=self.tenant_key
        )
        metadata = passed_through(user_metadata, tags, self.metadata_prefix)
        # A duplicate delivery marks the lane item again, in case the first one failed between
        # its two writes.
        created_run = self.backlog.queue_run(
            tenant,
            lambda: self.jobs.create(
                job_id,
                source,
                options,
                metadata=metadata,
                message=body,
                execution_arn=execution_arn(self.state_machine_arn, job_id, 1),
                tenant=tenant,
                queued_at=created.uploaded_at,
            ),
        )
        if created_run:
            return StartResult(job_id, 1, execution_name(job_id, 1), StartOutcome.QUEUED)
        job = self.jobs.get(job_id)
        assert job is not None  # created earlier; records are never removed here
        run = job.run
        if job.status is JobStatus.DELETED:
            # Its source was removed (or an operator deleted it): nothing starts again,
            # neither a late notification nor a redriven dead letter.
            return self._ignored(job_id, run)
        if redrive is not None and redrive.job_id == job_id and redrive.run < job.run:
            # A dead-letter message of an older run, redriven again: already handled.
            return self._ignored(job_id, run)
        if job.status.redrivable:
            # Only the redrive of this run (its dead-letter message, or `richdoc jobs
            # redrive`) queues the next run; a duplicate notification of a failed or
            # cancelled run has nothing left to start.
            if redrive is None or (redrive.job_id, redrive.run) != (job_id, job.run):
                return self._ignored(job_id, run)
            tenant = job.tenant or tenant
            try:
                run = self.backlog.queue_run(
                    tenant,
                    lambda: self.jobs.start_next_run(
                        job_id,
                        job.run,
                        execution_arn=execution_arn(self.state_machine_arn, job_id, job.run + 1),
                        tenant=tenant,
                    ),
                )
            except StaleRun:  # the same redrive delivered twice
                return self._ignored(job_id, run)
            return StartResult(job_id, run, execution_name(job_id, run), StartOutcome.QUEUED)
        if job.status is JobStatus.SUCCEEDED:
            return self._ignored(job_id, run)
        if job.waiting and job.tenant is not None and job.tenant != tenant:
            # An earlier delivery queued the run under another tenant (the object's tags
            # or the deployment's TenantKey changed since): the job waits in that tenant's
            # backlog, which must be in the lane.
            self.backlog.mark(job.tenant, job.backlog or BacklogKind.UPLOADS)
        return StartResult(job_id, run, execution_name(job_id, run), StartOutcome.ALREADY_QUEUED)
