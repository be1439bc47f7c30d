"""From an ingest-queue message to a job and a running execution (the starter's logic).

Accepted message bodies: S3 event notifications (``Records`` with ``ObjectCreated:*``,
``ObjectRemoved:*`` or ``LifecycleExpiration:*``), EventBridge "Object Created" and
"Object Deleted" events from S3, and either of those redriven from the dead-letter queue
(they then carry the ``richdoc.*`` failure attributes). S3 test events are skipped.
Object keys arrive URL-encoded (``+`` for space) and are decoded here. Each created
object becomes a ``richdoc.contracts.SourceObject``, the execution input an
``ExecutionInput``; each removed one deletes its jobs (``richdoc.deletion``). A created
object that is already gone when its notification is handled (its version deleted
before; S3 answers 404) starts nothing: its job is recorded DELETED with the reason, a
tombstone, as its removal notification would have recorded it.

Failures: AWS throttling, 5xx and connection errors (S3, DynamoDB, Step Functions) are
``Transient`` (``richdoc.awserrors``); any exception fails just its record, which SQS
redelivers and, after ``maxReceiveCount`` receives, moves to the dead-letter queue.

Idempotency: the job id is derived from bucket, key and version; the execution name is
job id + run. A duplicate notification finds the job and re-issues the same
``StartExecution``, which Step Functions answers without a second execution (or with
``ExecutionAlreadyExists``, which counts as done). Only a redrive of the dead-lettered
(or cancelled) run advances the job to its next run. A run cancelled before its execution
started is not started: a later delivery finds the job CANCELLED, and an execution the
starter had already asked for stops at ``RecordStart`` (its run fence).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event
from aws_lambda_powertools.utilities.data_classes.s3_event import S3EventBridgeNotificationEvent
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.contracts import ExecutionInput, JobOptions, SourceObject
from richdoc.deadletter import RedriveMarker
from richdoc.deletion import Deletion, RemovedObject
from richdoc.jobs import (
    DeletionMark,
    JobStatus,
    JobStore,
    StaleRun,
    execution_name,
    job_id_for,
)
from richdoc.metadata import passed_through

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_stepfunctions import SFNClient

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
class ObjectEvents:
    """What one message says happened to source objects."""

    created: list[SourceObject] = field(default_factory=list)
    removed: list[RemovedObject] = field(default_factory=list)


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
                events.created.append(
                    SourceObject(
                        bucket=record.s3.bucket.name,
                        key=key,
                        version_id=obj.version_id or None,
                        etag=obj.etag.strip('"') or None,
                        size=obj.get("size"),
                    )
                )
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
        return ObjectEvents(
            created=[
                SourceObject(
                    bucket=detail.bucket.name,
                    key=detail.object.key,  # Powertools decodes it
                    version_id=detail.object.get("version-id") or None,
                    etag=detail.object.etag.strip('"') or None,
                    size=detail.object.size,
                )
            ]
        )
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
    return object_events(body).created


class StartOutcome(StrEnum):
    STARTED = "started"  # a new execution for a new run
    ALREADY_STARTED = "already_started"  # duplicate delivery; the execution exists
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
        sfn: SFNClient,
        jobs: JobStore,
        state_machine_arn: str,
        clarify_default: bool,
        deletion: Deletion | None = None,
        metadata_prefix: str = "",
    ) -> None:
        self.s3 = s3
        self.sfn = sfn
        self.jobs = jobs
        self.state_machine_arn = state_machine_arn
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
        results = [self._start(event, body, redrive) for event in events.created]
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
        """The version's object tags; none when nothing is passed through or the version
        is gone by now."""
        if not self.metadata_prefix:
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

    def _execution_arn(self, name: str) -> str:
        """The ARN the execution of that name has (or will have) on this state machine."""
        prefix = self.state_machine_arn.replace(":stateMachine:", ":execution:", 1)
        return f"{prefix}:{name}"

    @staticmethod
    def _ignored(job_id: str, run: int) -> StartResult:
        return StartResult(job_id, run, execution_name(job_id, run), StartOutcome.DUPLICATE_IGNORED)

    def _start(
        self, created: SourceObject, body: str, redrive: RedriveMarker | None
    ) -> StartResult:
        found = self._head(created)
        head = found or {}
        version = created.version_id or head.get("VersionId")
        etag = created.etag or str(head.get("ETag", "")).strip('"') or None
        job_id = job_id_for(created.bucket, created.key, version or etag or "")
        clarify = _parse_bool(head.get("Metadata", {}).get(CLARIFY_METADATA_KEY, ""))
        source = SourceObject(
            bucket=created.bucket,
            key=created.key,
            version_id=version,
            etag=etag,
            size=head.get("ContentLength", created.size),
        )
        options = JobOptions(clarify=self.clarify_default if clarify is None else clarify)
        if found is None:
            tombstone = self._gone(job_id, source)
            if tombstone is not None:
                return tombstone

        run = 1
        metadata = passed_through(
            head.get("Metadata", {}),
            self._tags(source) if found else [],
            self.metadata_prefix,
        )
        new_run = self.jobs.create(
            job_id,
            source,
            options,
            metadata=metadata,
            message=body,
            execution_arn=self._execution_arn(execution_name(job_id, run)),
        )
        if not new_run:
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
                # redrive`) starts the next run; a duplicate notification of a failed or
                # cancelled run has nothing left to start.
                if redrive is None or (redrive.job_id, redrive.run) != (job_id, job.run):
                    return self._ignored(job_id, run)
                try:
                    run = self.jobs.start_next_run(
                        job_id,
                        job.run,
                        execution_arn=self._execution_arn(execution_name(job_id, job.run + 1)),
                    )
                except StaleRun:  # the same redrive delivered twice
                    return self._ignored(job_id, run)
                source, options = job.source, job.options
                new_run = True
            elif job.status is JobStatus.SUCCEEDED:
                return self._ignored(job_id, run)
            else:
                source, options = job.source, job.options
                # QUEUED: an earlier delivery created the run but may not have started it.
                new_run = job.status is JobStatus.QUEUED

        name = execution_name(job_id, run)
        execution_input = ExecutionInput(
            job_id=job_id, run=run, source=source, options=options, message=body
        )
        try:
            with aws_errors(f"starting execution {name}"):
                self.sfn.start_execution(
                    stateMachineArn=self.state_machine_arn,
                    name=name,
                    input=json.dumps(execution_input.model_dump(mode="json"), sort_keys=True),
                )
        except self.sfn.exceptions.ExecutionAlreadyExists:
            return StartResult(job_id, run, name, StartOutcome.ALREADY_STARTED)
        # A duplicate of a running job re-issues the identical start: no second execution.
        outcome = StartOutcome.STARTED if new_run else StartOutcome.ALREADY_STARTED
        return StartResult(job_id, run, name, outcome)
