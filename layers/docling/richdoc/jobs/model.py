"""The job and attempt records as typed models, and their two forms: the DynamoDB item and
the JSON the command line prints.

pydantic converts both ways. Reading an item, it takes DynamoDB's numbers (``Decimal``)
as the ints the fields declare (the record holds no floats, which DynamoDB would refuse)
and ignores the store's bookkeeping (keys, attempt counters). Writing one, ``to_item``
dumps the fields with JSON types and no nulls (items stay sparse). ``to_dict`` is the
printed form: every field of the model, nulls included, except that a source and a
failure show only the fields they have (as stored) and a job without outputs or counts
shows ``{}`` for them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    WrapSerializer,
    field_serializer,
)

from richdoc.artifacts import run_of
from richdoc.contracts import (
    FailedStage,
    JobCounts,
    JobOptions,
    JobOutputs,
    PageSpanText,
    SourceObject,
    StepName,
)
from richdoc.jobs.keys import JOB_SK, BacklogKind, backlog_of
from richdoc.jobs.phase import JobPhase, Progress
from richdoc.taxonomy import Failure

if TYPE_CHECKING:
    from types_boto3_dynamodb.type_defs import TableAttributeValueTypeDef

RUNNING_OUTCOME = "running"
OK_OUTCOME = "ok"
# An attempt of a cancelled run that nothing else closed (the reconciler or the sweep did).
CANCELLED_OUTCOME = "cancelled"
# Reasons are for humans and for the DLQ message attributes; keep items small.
MAX_REASON_CHARS = 1000

# What an attempt was recorded for: a step, or (added by a catch path or a backstop) the
# run's start, a record state, or the workflow as a whole.
AttemptStage = FailedStage | Literal["workflow"]
# Who sent a run's dead-letter message.
DeadLetterSender = Literal["state-machine", "reconciler", "sweep"]
# Who recorded an attempt: its handler, or the state machine's catch path for a handler
# the platform never ran.
RecordedBy = Literal["handler", "state-machine"]
# Who deleted a job: the source object's removal (an S3 notification), or an operator.
DeletedBy = Literal["source-removed", "operator"]

Item = dict[str, "TableAttributeValueTypeDef"]


class JobStatus(StrEnum):
    """The closed status vocabulary. QUEUED, RUNNING and FAILED are open (a run is under
    way, or its dead-letter message is); every other status is terminal."""

    QUEUED = "QUEUED"  # the starter created the run; its execution is being started
    RUNNING = "RUNNING"  # the state machine recorded the start of the run
    SUCCEEDED = "SUCCEEDED"
    # The run failed and its failure is recorded; the dead-letter message is not yet
    # confirmed durable. Not terminal: the state machine, the reconciler or the sweep
    # sends it (once) and marks the job DEAD_LETTERED.
    FAILED = "FAILED"
    DEAD_LETTERED = "DEAD_LETTERED"  # failed; the ingest message is on the dead-letter queue
    CANCELLED = "CANCELLED"  # an operator cancelled the run (``cancel`` says who, when, why)
    DELETED = "DELETED"  # its source was deleted, with what derives only from it (deletion.py)

    @property
    def terminal(self) -> bool:
        return self not in OPEN_STATUSES

    @property
    def redrivable(self) -> bool:
        """A new run of the job may be started from its stored ingest message."""
        return self in REDRIVABLE_STATUSES


# A run is under way (or its dead-letter message is): what the backstops close.
OPEN_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED)
# A run failed (FAILED: its dead-letter message is on its way): what an operator triages
# (``richdoc jobs failures``, the console's failure count). CANCELLED is not a failure.
FAILED_STATUSES = (JobStatus.DEAD_LETTERED, JobStatus.FAILED)
# How a run ends, short of its job's deletion: what a document's manifest shows of a job.
ENDED_STATUSES = (JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED, JobStatus.CANCELLED)
# What ``richdoc jobs redrive`` starts the next run of (FAILED: the dead-letter message
# of the run is not confirmed yet; the starter accepts the next run all the same). A
# DELETED job has no source left to run again.
REDRIVABLE_STATUSES = (JobStatus.DEAD_LETTERED, JobStatus.FAILED, JobStatus.CANCELLED)


def timestamp(moment: datetime) -> str:
    """How records store a moment (UTC, milliseconds): strings that sort in time order, so
    the by-status index can range over ``updated_at``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


# The jobs table's time-to-live attribute (template.yaml: TimeToLiveSpecification): epoch
# seconds after which DynamoDB deletes the item, in the days after (at no cost).
TTL_ATTRIBUTE = "expires_at"


def expires_at(moment: str, days: int | None) -> int | None:
    """The TTL of an item written at ``moment`` (a ``timestamp``) and kept ``days``; None
    keeps it."""
    if not days:
        return None
    return int(datetime.fromisoformat(moment).timestamp()) + days * 86400


def _without_nulls(value: object, handler: SerializerFunctionWrapHandler) -> object:
    dumped = handler(value)
    if isinstance(dumped, dict):
        return {k: v for k, v in dumped.items() if v is not None}
    return dumped


# Printed as stored: without the fields they do not have.
_Sparse = WrapSerializer(_without_nulls)


class DeadLetterMark(BaseModel):
    """The dead-letter message of a failed run, once it is on the queue; and, when an
    operator deleted it from the queue instead of redriving it, when and why."""

    model_config = ConfigDict(frozen=True)

    message_id: str
    sent_by: DeadLetterSender
    discarded_at: str | None = None
    discard_reason: str | None = None


class CancelRecord(BaseModel):
    """Who cancelled a run, when and why (``richdoc jobs cancel``), and when a backstop
    closed what the stopped run left open (its attempts still ``running``)."""

    model_config = ConfigDict(frozen=True)

    requested_at: str
    by: str
    reason: str | None = None
    closed_at: str | None = None


class RedriveRequest(BaseModel):
    """``richdoc jobs redrive`` sent the job's ingest message to start the next run of
    ``from_run``; the starter's next run clears it. A second request for the same run is
    skipped while this one is fresh."""

    model_config = ConfigDict(frozen=True)

    from_run: int
    requested_at: str
    by: str


class RunEnd(BaseModel):
    """A run of the job that ended, and how (one of ``ENDED_STATUSES``). Written with each
    end, and kept while a later run waits, runs or fails: the document's manifest goes on
    showing it meanwhile (``richdoc.manifests``)."""

    model_config = ConfigDict(frozen=True)

    run: int
    status: JobStatus


class DeletionMark(BaseModel):
    """Why and when a job was deleted."""

    model_config = ConfigDict(frozen=True)

    at: str
    by: DeletedBy
    # What deleted it: the S3 event name and object version, or the command.
    reason: str


# The fields the printed job names as its record does (``status`` is printed under its
# own name, stored as ``job_status``).
PRINTED_NAMES = {"page_count": "pages"}


class Job(BaseModel):
    """The job item (``sk = JOB``): one object version, its current run and what the run
    recorded."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    job_id: str
    # Stored as job_status (the by-status index's key), printed as status.
    status: JobStatus = Field(validation_alias="job_status", serialization_alias="job_status")
    run: int
    stage: StepName | None = None
    tier: int | None = None
    shards: int | None = None  # page-range shards the parse ran as (the plan's; 1: whole)
    pipeline: str | None = None
    # The rule set the successful run's detection ran (DetectionRules); None in the
    # records of runs made before it was recorded, which ran spec-v1.
    detection_rules: str | None = None
    source: Annotated[SourceObject, _Sparse]
    options: JobOptions = JobOptions()
    # The source's user metadata and tags that travel with its results (richdoc.metadata).
    metadata: dict[str, str] | None = None
    failure: Annotated[Failure, _Sparse] | None = None
    execution_arn: str | None = None
    outputs: JobOutputs | None = None
    counts: JobCounts | None = None
    created_at: str | None = None
    updated_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    dead_letter: Annotated[DeadLetterMark, _Sparse] | None = None
    phase: JobPhase | None = None  # how far the run has come (printed within ``progress``)
    # How many pages the successful parse converted: stored and printed as ``pages``, the
    # name the records have always had (``PRINTED_NAMES``).
    page_count: int | None = Field(
        default=None, validation_alias="pages", serialization_alias="pages"
    )
    # Page ranges of the run's shards whose parse finished (a string set; printed as a
    # count within ``progress``).
    shards_done: frozenset[PageSpanText] | None = None
    cancel: CancelRecord | None = None
    redrive: RedriveRequest | None = None
    deletion: DeletionMark | None = None  # a DELETED job's (printed only then)
    last_end: RunEnd | None = None  # the latest run that ended (``ended``)
    message: str | None = None  # the ingest message body that created the job (not printed)
    # Admission (richdoc.admission; printed together as ``admission``): whom the job runs
    # for, when its run entered the backlog (its upload, or the redrive), its place there
    # while it waits (``backlog_key``, the backlog index's sort key; not printed), when it
    # was admitted, the slots it holds (and for which run) while it holds them, and when
    # it last gave them back.
    tenant: str | None = None
    queued_at: str | None = None
    backlog_key: str | None = None
    admitted_at: str | None = None
    slots: int | None = None
    slots_run: int | None = None
    released_at: str | None = None

    @field_serializer("outputs", "counts", "metadata", mode="wrap")
    def _none_as_empty(self, value: object, handler: SerializerFunctionWrapHandler) -> object:
        # Printed as {} until the run succeeds (or when nothing was passed through). An
        # item never gets here: exclude_none drops the field first.
        return {} if value is None else handler(value)

    @classmethod
    def from_item(cls, item: Item) -> Job:
        return cls.model_validate(item)

    @classmethod
    def from_image(cls, image: Mapping[str, Any] | None) -> Job | None:
        """An image of the jobs table's stream (deserialized) as a job; None for the
        table's other items (attempts, references, admission's) and for no image."""
        if not image or image.get("sk") != JOB_SK:
            return None
        return cls.from_item(dict(image))

    def to_item(self) -> Item:
        """The job's attributes as stored (``job_status``; no nulls). The finished shards
        are only ever added to (a string set), never written whole."""
        return self.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"shards_done"}
        )

    def progress(self) -> Progress:
        return Progress.of(
            self.phase, tier=self.tier, shards=self.shards, finished_ranges=self.shards_done
        )

    def ended(self) -> RunEnd | None:
        """The job's latest run that ended SUCCEEDED, DEAD_LETTERED or CANCELLED: the
        current run once it has ended, else the one before it; None when none has (or a
        record written before ``last_end`` existed does not say) and for a deleted job."""
        if self.status in ENDED_STATUSES:
            return RunEnd(run=self.run, status=self.status)
        if self.status is JobStatus.DELETED:
            return None
        return self.last_end

    @property
    def result_run(self) -> int | None:
        """The run ``outputs`` and ``counts`` are of: the job's latest successful run,
        whatever the current run is doing (a later run replaces them only when it
        succeeds; a deletion drops them). The project step writes each run's outputs
        under ``jobs/<job id>/run-NNN/``, so the keys say which run (in records of every
        release)."""
        if self.outputs is None or self.status is JobStatus.DELETED:
            return None
        if self.status is JobStatus.SUCCEEDED:
            return self.run  # written with its outputs, in one write
        return run_of(self.outputs.projection_key)

    @property
    def waiting(self) -> bool:
        """The run waits in the backlog for a slot (QUEUED, not admitted yet)."""
        return self.status is JobStatus.QUEUED and self.backlog_key is not None

    @property
    def backlog(self) -> BacklogKind | None:
        """Which of its tenant's backlogs the run waits in; None when it does not wait."""
        return backlog_of(self.backlog_key) if self.waiting and self.backlog_key else None

    def to_dict(self) -> dict[str, object]:
        """The job as the command line prints it (``status``; nulls shown; no message; the
        phase and the finished shards as ``progress``; the admission fields together as
        ``admission``; ``deletion`` only for a deleted job, so other jobs keep their
        keys)."""
        hidden = {"message", "phase", "shards_done", *ADMISSION_FIELDS, "backlog_key", "slots_run"}
        if not self.deletion:
            hidden.add("deletion")
        printed = self.model_dump(mode="json", exclude=hidden)
        printed = {PRINTED_NAMES.get(name, name): value for name, value in printed.items()}
        admission = self.model_dump(mode="json", include=set(ADMISSION_FIELDS))
        return {
            **printed,
            "progress": self.progress().model_dump(mode="json"),
            "admission": {name: admission[name] for name in ADMISSION_FIELDS},
        }


# The admission fields a job prints, in this order, within ``admission``.
ADMISSION_FIELDS = ("tenant", "queued_at", "admitted_at", "slots", "released_at")


class Attempt(BaseModel):
    """An attempt item (``sk = ATTEMPT#r<run>#<seq>``): one Lambda invocation of a stage,
    or one the state machine recorded for it."""

    model_config = ConfigDict(extra="ignore")

    job_id: str
    run: int
    seq: int  # the job's attempt counter: orders every attempt of the job
    stage: AttemptStage
    attempt: int  # per stage, and per shard within it, in the run
    outcome: str  # running, ok or the error name
    started_at: str
    tier: int | None = None
    pages: PageSpanText | None = None  # a shard's page range; None for a whole document
    memory_mb: int | None = None
    request_id: str | None = None
    reason: str | None = None
    ended_at: str | None = None
    duration_ms: int | None = None
    cached: bool | None = None  # answered from the artifact cache (parse, merge)
    # A parse attempt's memory: the isolated child's ceiling in force, and its peak
    # resident set (None when the cache answered, or the platform killed the handler).
    mem_ceiling_mb: int | None = None
    peak_rss_mb: int | None = None
    recorded_by: RecordedBy = "handler"

    @classmethod
    def from_item(cls, item: Item) -> Attempt:
        return cls.model_validate(item)

    def to_item(self) -> Item:
        return self.model_dump(mode="json", exclude_none=True)

    def to_dict(self) -> dict[str, object]:
        """The attempt as the command line prints it (every field, in this order)."""
        return self.model_dump(mode="json")


@functools.cache
def _failures() -> TypeAdapter[Failure]:
    return TypeAdapter(Failure)


def stored(value: BaseModel | Failure) -> TableAttributeValueTypeDef:
    """A nested value of an item (for an update of one attribute): JSON types, no nulls."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    dumped: dict[str, str] = _failures().dump_python(value, mode="json", exclude_none=True)
    return dumped
