"""The records function's calls: the state payloads of the failure path, the actions the
state machine asks of the records function (one per call) and the answer to each, and the
sweep's schedule. Part of the state contract (``richdoc.contracts``), apart from the
steps' models so that a step handler's cold start never builds them: only the records
function reads them (``richdoc.records.requests`` parses its calls, ``actions`` and
``backstops`` answer them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from richdoc.contracts import Contract, FailedStage, PageSpan, StepResults
from richdoc.taxonomy import Failure, FailureKind

# ---- the failure path ------------------------------------------------------------------------


class CaughtError(Contract):
    """What a Catch puts at its ResultPath: the error name and its cause (for a Lambda
    function error, the runtime's JSON envelope; free text or absent otherwise)."""

    Error: str
    Cause: str | None = None

    def failure(self) -> Failure:
        return Failure.from_error(self.Error, self.Cause)


class FailedAt(Contract):
    stage: FailedStage
    tier: int | None = None
    # The failed attempt was recorded where it failed: a shard's, inside the Map state
    # (RecordShardFailure), so RecordFailure records only the job's failure.
    attempt_recorded: bool = False


class MessageAttribute(Contract):
    """One SQS message attribute, in the SendMessage API's shape."""

    DataType: Literal["String", "Number"]
    StringValue: str


class DeadLetterSent(Contract):
    """What the dead-letter send leaves at ``$.dead_letter`` (its ResultSelector keeps
    only the SQS MessageId): the proof MarkDeadLettered records on the job."""

    message_id: str


# ---- the records function: one action per call -----------------------------------------------


class Recorded(Contract):
    recorded: Literal["start", "escalate", "shard_failed", "succeed", "mark_dead_lettered"]


class EscalationRecorded(Recorded):
    from_tier: int
    error: str | None


class FailureRecorded(Contract):
    """RecordFailure's output at ``$.failure``: the classified failure, and the SQS message
    attributes the dead-letter send attaches to the original message."""

    kind: FailureKind
    reason: str
    feature: str | None
    error: str | None
    message_attributes: dict[str, MessageAttribute]


class Reconciled(Contract):
    """The reconciler's answer: whether it dead-lettered the execution's job, or closed
    the attempts a cancelled run left (``cancelled``)."""

    reconciled: bool
    cancelled: bool = False


class ScheduledSweep(Contract):
    """The EventBridge "Scheduled Event" that runs the sweep. Its ``time`` (when the
    schedule fired) is the sweep's clock, so the sweep is a function of its event."""

    model_config = ConfigDict(populate_by_name=True)

    detail_type: Literal["Scheduled Event"] = Field(alias="detail-type")
    source: Literal["aws.events"]
    time: datetime
    # The schedule rule's ARN (a pydantic field: each model gets its own copy).
    resources: list[str] = []  # noqa: RUF012


class Swept(Contract):
    """The sweep's answer: jobs open longer than the workflow timeout whose execution is
    not running (``stuck``), and how many of them it dead-lettered (``closed``; the rest
    were closed meanwhile by their own run, or failed and are retried)."""

    stuck: int
    closed: int
    cancelled: int = 0  # cancelled runs whose status event was lost, closed now
    # Admission's audit (richdoc.admission.reconcile): holdings of ended runs released,
    # runs holding slots whose execution had ended unseen closed, counts set right.
    released: int = 0
    holders_closed: int = 0
    recounted: bool = False
    # The walk over the open jobs (richdoc.records.sweep_walk): the index pages it read,
    # the jobs it received (waiting ones are left out), whether it reached the end (False:
    # its budget ran out, the next sweep goes on where it stopped).
    index_pages: int = 0
    read: int = 0
    walked: bool = True


class RecordsCall(Contract):
    job_id: str
    run: int
    # The model the records function answers this action with.
    result: ClassVar[type[Contract]]


class RecordStart(RecordsCall):
    """Mark the job RUNNING for this run."""

    action: Literal["start"]
    execution_arn: str
    result = Recorded


class RecordEscalation(RecordsCall):
    """Close the parse attempt a resource limit ended (of the whole document, or of the
    shard of ``pages``), before the next tier."""

    action: Literal["escalate"]
    from_tier: int
    pages: PageSpan | None = None
    error: CaughtError
    result = EscalationRecorded


class RecordShardFailure(RecordsCall):
    """Close the attempt of a shard that failed for good (the platform may have killed
    it); the shard's iteration then fails under the same error name, and the Map state's
    Catch takes the run to RecordFailure."""

    action: Literal["shard_failed"]
    failed_at: FailedAt
    pages: PageSpan
    error: CaughtError
    result = Recorded


class RecordSuccess(RecordsCall):
    """Mark the job SUCCEEDED with its outputs and counts."""

    action: Literal["succeed"]
    results: StepResults
    result = Recorded


class RecordFailure(RecordsCall):
    """Classify the caught error, close the attempt, mark the job FAILED (not terminal:
    the dead-letter message is sent next)."""

    action: Literal["fail"]
    failed_at: FailedAt
    error: CaughtError
    result = FailureRecorded


class SlotsClaimed(Contract):
    """How many of a sharded run's shards parse side by side: one for each slot it holds
    (at most what the plan asked for)."""

    max_concurrency: int = Field(ge=1)


class ClaimShardSlots(RecordsCall):
    """The plan split the document: claim up to ``wanted`` slots in all for its shards, as
    many as are free now (richdoc.admission.slots), never waiting for more."""

    action: Literal["claim_slots"]
    wanted: int = Field(ge=1)
    result = SlotsClaimed


class RecordDeadLettered(RecordsCall):
    """The dead-letter message is on the queue: mark the FAILED job DEAD_LETTERED, with
    the message's id (idempotent for the same id)."""

    action: Literal["mark_dead_lettered"]
    message_id: str
    result = Recorded


RecordsActions = (
    RecordStart
    | RecordEscalation
    | RecordShardFailure
    | RecordSuccess
    | RecordFailure
    | RecordDeadLettered
    | ClaimShardSlots
)
RecordsAction = Annotated[RecordsActions, Field(discriminator="action")]
RECORDS_ACTION: TypeAdapter[RecordsActions] = TypeAdapter(RecordsAction)
