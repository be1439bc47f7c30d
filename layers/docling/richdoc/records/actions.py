"""The job record transitions the state machine asks for: start, tier escalation, a
shard's failure, success, failure, the dead-letter mark.

The state machine calls the records function with one ``RecordsAction``
(``richdoc.records.calls``); each action is a run-fenced transition of the job item
(``richdoc.jobs``), or, for the tier escalation and the failure of a page-range shard, an
attempt record. A failed run is
closed in three states of the definition: ``fail`` records the failure (job FAILED, not
terminal) and returns the classified failure and the SQS message attributes
(``FailureRecorded``); the definition sends the original message to the dead-letter queue;
``mark_dead_lettered`` then records the message's id and makes the job DEAD_LETTERED. So a
job is never terminal without its dead-letter message on the queue.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from richdoc.admission.slots import SlotLedger
from richdoc.contracts import JobCounts, JobOutputs
from richdoc.deadletter import failure_attributes
from richdoc.jobs import Job, JobCancelled, JobStatus, JobStore, StaleRun
from richdoc.metrics import emit
from richdoc.records.calls import (
    ClaimShardSlots,
    EscalationRecorded,
    FailureRecorded,
    MessageAttribute,
    RecordDeadLettered,
    Recorded,
    RecordEscalation,
    RecordFailure,
    RecordsActions,
    RecordShardFailure,
    RecordStart,
    RecordSuccess,
    SlotsClaimed,
)
from richdoc.taxonomy import FailureKind


class Actions:
    """The transitions the definition's recording states ask for, one method each."""

    def __init__(
        self,
        *,
        jobs: JobStore,
        logger: Logger,
        metrics: Metrics,
        ledger: SlotLedger | None = None,
    ) -> None:
        self.jobs = jobs
        self.logger = logger
        self.metrics = metrics
        # Admission's slots: a sharded run claims more of them for its shards.
        self.ledger = ledger

    def answer(self, action: RecordsActions) -> Recorded | FailureRecorded | SlotsClaimed:
        match action:
            case RecordStart():
                return self.start(action)
            case RecordEscalation():
                return self.escalate(action)
            case RecordShardFailure():
                return self.shard_failed(action)
            case RecordSuccess():
                return self.succeed(action)
            case RecordFailure():
                return self.fail(action)
            case RecordDeadLettered():
                return self.mark_dead_lettered(action)
            case ClaimShardSlots():
                return self.claim_slots(action)

    def start(self, action: RecordStart) -> Recorded:
        self.jobs.mark_running(action.job_id, action.run, action.execution_arn)
        self.metrics.add_metric(name="JobsRunning", unit=MetricUnit.Count, value=1)
        return Recorded(recorded="start")

    def escalate(self, action: RecordEscalation) -> EscalationRecorded:
        failure = action.error.failure()
        self.jobs.attempts.record_platform_failure(
            action.job_id, action.run, "parse", action.from_tier, failure, pages=action.pages
        )
        self.metrics.add_metric(name="TierEscalations", unit=MetricUnit.Count, value=1)
        pages = str(action.pages) if action.pages else None
        self.logger.warning(
            "parse tier escalation",
            extra={"from_tier": action.from_tier, "pages": pages, "error": failure.error},
        )
        return EscalationRecorded(
            recorded="escalate", from_tier=action.from_tier, error=failure.error
        )

    def shard_failed(self, action: RecordShardFailure) -> Recorded:
        """A shard failed for good: its attempt is closed here, where its page range is
        known; the job's failure is recorded once, by ``fail``, after the Map state."""
        failure = action.error.failure()
        where = action.failed_at
        self.jobs.attempts.record_platform_failure(
            action.job_id, action.run, where.stage, where.tier, failure, pages=action.pages
        )
        self.logger.warning(
            "shard failed", extra={"pages": str(action.pages), "error": failure.error}
        )
        return Recorded(recorded="shard_failed")

    def succeed(self, action: RecordSuccess) -> Recorded:
        results = action.results
        self.jobs.succeed(
            action.job_id,
            action.run,
            outputs=JobOutputs.of(results),
            counts=JobCounts.of(results),
            pipeline=results.parse.pipeline,
            page_count=results.parse.page_count,
            detection_rules=results.detect.rules,
        )
        self.metrics.add_metric(name="JobsSucceeded", unit=MetricUnit.Count, value=1)
        return Recorded(recorded="succeed")

    def fail(self, action: RecordFailure) -> FailureRecorded:
        failure = action.error.failure()
        where = action.failed_at
        # The job first, behind the run fence: a stale or cancelled run records nothing.
        self.jobs.record_failure(action.job_id, action.run, failure)
        if not where.attempt_recorded:
            self.jobs.attempts.record_platform_failure(
                action.job_id, action.run, where.stage, where.tier, failure
            )
        self.metrics.add_metric(name="JobsFailed", unit=MetricUnit.Count, value=1)
        self.logger.error("run failed; dead-lettering", extra={"failure": failure.to_json_line()})
        attributes = failure_attributes(action.job_id, action.run, failure)
        return FailureRecorded(
            kind=failure.kind,
            reason=failure.reason,
            feature=failure.feature,
            error=failure.error,
            message_attributes={
                name: MessageAttribute.model_validate(value) for name, value in attributes.items()
            },
        )

    def claim_slots(self, action: ClaimShardSlots) -> SlotsClaimed:
        """As many of the wanted slots as the run holds or can claim now; its Map runs
        that many shards at once. A run that was not admitted (its execution started by
        hand) holds none and runs as the plan asked."""
        job = self.jobs.get(action.job_id)
        if job is None or job.run != action.run or job.status is not JobStatus.RUNNING:
            if job is not None and job.run == action.run and job.status is JobStatus.CANCELLED:
                raise JobCancelled(f"job {action.job_id}: run {action.run} was cancelled")
            raise StaleRun(f"job {action.job_id}: run {action.run} is not running")
        holder = self.ledger.read().holders.get(job.job_id) if self.ledger else None
        if self.ledger is None or holder is None or holder.run != job.run:
            return SlotsClaimed(max_concurrency=action.wanted)
        extra = self.ledger.claim_shard_slots(job, action.wanted - holder.slots)
        held = holder.slots + extra
        self.logger.info("slots for shards", extra={"wanted": action.wanted, "held": held})
        return SlotsClaimed(max_concurrency=max(1, min(held, action.wanted)))

    def mark_dead_lettered(self, action: RecordDeadLettered) -> Recorded:
        job = self.jobs.mark_dead_lettered(
            action.job_id, action.run, action.message_id, sent_by="state-machine"
        )
        if job is not None:
            count_dead_lettered(job)
        return Recorded(recorded="mark_dead_lettered")


def count_dead_lettered(job: Job) -> None:
    """One more job DEAD_LETTERED, by its failure kind (its run's actions and the
    backstops alike)."""
    # The kind dimension lets the alarm page on internal failures only: a corrupt
    # upload is dead-lettered as designed.
    failure = job.failure
    emit("JobsDeadLettered", 1, kind=str(failure.kind if failure else FailureKind.INTERNAL))
