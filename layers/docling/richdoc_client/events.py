"""The completion event: published once per terminal change of a job, on the stack's
``richdoc`` EventBridge bus (source ``richdoc``, detail-type ``Job Finished``).

``CompletionDetail`` is the event's ``detail`` (schema ``richdoc.event/v1``): which source
version, which job and run, how it ended, where its outputs are and how many of each,
the failure's kind and feature, the source's allow-listed metadata, and how the change
relates to the document's manifest, the authority on its current result: whether this
run is that result (``current``), and the manifest as the notifier left it just before
publishing (``manifest``: its version's job and run, and the current result, or null
when the document has none). Events of different versions arrive in any order, so a
consumer acts on the manifest as it is when it handles the event, not on the event
(docs/consumers.md). Keys and counts only, never document text. ``event_id`` is
deterministic (the job, the run and the status), so a consumer that sees one twice
(EventBridge delivers at least once, an archive replays) drops the second.
``CompletionEvent`` is the whole EventBridge event, as a rule's target (a consumer
Lambda) receives it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from richdoc_client.failures import FailureKind
from richdoc_client.identity import DocumentId, SourceIdentity
from richdoc_client.results import ResultCounts, ResultKeys, ResultRef
from richdoc_client.versions import SchemaVersion, Versioned, since
from richdoc_client.wire import FrozenWireModel

SCHEMA: Final = "richdoc.event/v1"
VERSION: Final = "1.1"  # richdoc_client.versions: how it may change
EVENT_SOURCE: Final = "richdoc"
DETAIL_TYPE: Final = "Job Finished"
EVENT_ID_LENGTH = 32
EventId = Annotated[str, Field(pattern=rf"^[0-9a-f]{{{EVENT_ID_LENGTH}}}$")]


class TerminalStatus(StrEnum):
    """How a job's run ended: the terminal statuses of the job record."""

    SUCCEEDED = "SUCCEEDED"
    DEAD_LETTERED = "DEAD_LETTERED"  # failed; its ingest message waits on the dead-letter queue
    CANCELLED = "CANCELLED"  # an operator stopped it
    DELETED = "DELETED"  # its source was deleted, and what was derived only from it


def completion_event_id(job_id: str, run: int, status: TerminalStatus) -> str:
    """The first 32 hex digits of SHA-256 over ``job_id``, ``run`` and ``status`` joined
    by NUL bytes: one id per terminal change, however often it is published."""
    digest = hashlib.sha256(f"{job_id}\x00{run}\x00{status.value}".encode()).hexdigest()
    return digest[:EVENT_ID_LENGTH]


class FailureSummary(FrozenWireModel):
    """A dead-lettered run's failure: its kind, and the feature tag of an unsupported one.
    (The reason stays in the job record: it may quote the document.)"""

    kind: FailureKind
    feature: str | None = None


class ManifestSummary(FrozenWireModel):
    """The document's manifest when the event was published: its newest finished
    version's job, that job's latest finished run and how it ended, and the document's
    current result (null while that version has no successful run)."""

    job_id: str
    run: Annotated[int, Field(ge=1)]
    status: TerminalStatus
    result: ResultRef | None


class CompletionDetail(Versioned, FrozenWireModel):
    """The ``detail`` of a completion event. Every member is present; null means none.

    ``outputs`` and ``counts`` are set exactly when ``status`` is SUCCEEDED, ``failure``
    exactly when it is DEAD_LETTERED. ``current`` and ``manifest`` (version 1.1) are
    null in events published before them.
    """

    schema_: Literal["richdoc.event/v1"] = Field(default=SCHEMA, alias="schema")
    schema_version: SchemaVersion = Field(default=VERSION, json_schema_extra=since("1.1"))
    event_id: EventId
    document_id: DocumentId
    job_id: str
    run: Annotated[int, Field(ge=1)]
    status: TerminalStatus
    source: SourceIdentity
    outputs: ResultKeys | None
    counts: ResultCounts | None
    failure: FailureSummary | None
    metadata: dict[str, str]  # the source's allow-listed user metadata and tags
    # This run is the document's current result: the manifest named its outputs when
    # the event was published.
    current: bool | None = Field(default=None, json_schema_extra=since("1.1"))
    # The document's manifest then; null: the document had none (deleted, or no version
    # of it had finished).
    manifest: ManifestSummary | None = Field(default=None, json_schema_extra=since("1.1"))

    @classmethod
    def create(
        cls,
        *,
        job_id: str,
        run: int,
        status: TerminalStatus,
        source: SourceIdentity,
        outputs: ResultKeys | None = None,
        counts: ResultCounts | None = None,
        failure: FailureSummary | None = None,
        metadata: dict[str, str] | None = None,
        manifest: ManifestSummary | None = None,
    ) -> CompletionDetail:
        """The detail of one terminal change, with its derived ids filled in, as it
        relates to the document's ``manifest`` (None: the document has none)."""
        result = manifest.result if manifest is not None else None
        return cls(
            event_id=completion_event_id(job_id, run, status),
            document_id=source.document_id,
            job_id=job_id,
            run=run,
            status=status,
            source=source,
            outputs=outputs,
            counts=counts,
            failure=failure,
            metadata=metadata or {},
            current=result == ResultRef(job_id=job_id, run=run),
            manifest=manifest,
        )

    @property
    def result(self) -> ResultRef:
        """This event's run, as a manifest would name it."""
        return ResultRef(job_id=self.job_id, run=self.run)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.event_id != completion_event_id(self.job_id, self.run, self.status):
            raise ValueError("event_id is not the id of this job, run and status")
        if self.document_id != self.source.document_id:
            raise ValueError("document_id is not the id of source.bucket and source.key")
        succeeded = self.status is TerminalStatus.SUCCEEDED
        if (self.outputs is not None, self.counts is not None) != (succeeded, succeeded):
            raise ValueError("outputs and counts are set exactly when the job SUCCEEDED")
        if (self.failure is not None) != (self.status is TerminalStatus.DEAD_LETTERED):
            raise ValueError("failure is set exactly when the job is DEAD_LETTERED")
        if self.current and not (
            succeeded and self.manifest is not None and self.manifest.result == self.result
        ):
            raise ValueError("a current run is a success that the manifest names")
        return self

    def to_json(self) -> str:
        """The detail as PutEvents takes it: compact JSON with sorted keys."""
        data = self.model_dump(mode="json", by_alias=True)
        return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class CompletionEvent(BaseModel):
    """A completion event as EventBridge delivers it to a rule's target.

    The envelope is EventBridge's, so members it may add are ignored; the detail is
    checked in full.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    id: str  # EventBridge's id of this delivery's event (not the dedupe key: event_id is)
    # Set by EventBridge on an event replayed from the archive: the replay's name.
    replay_name: str | None = Field(default=None, alias="replay-name")
    source: Literal["richdoc"]
    detail_type: Literal["Job Finished"] = Field(alias="detail-type")
    time: datetime
    account: str
    region: str
    detail: CompletionDetail
