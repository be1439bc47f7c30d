"""The backstops: what finishes a run the definition could not.

* the reconciler: EventBridge delivers the "Step Functions Execution Status Change" event
  of an execution that ended FAILED, TIMED_OUT or ABORTED; if the job of that run is still
  open it is recorded as failed (internal, ``Execution.<STATUS>``) unless already FAILED,
  dead-lettered with its original message, and marked;
* (for a DELETED job, the end of its execution is when nothing of the run writes any
  more: the reconciler purges its artifacts once more, ``richdoc.deletion``);
* the sweep: a schedule runs it. First it audits admission's slot ledger
  (``richdoc.admission.reconcile``): a run holding slots whose execution has ended (its
  status event lost, its failure path crashed) is closed the same way once its execution
  has been over for ``HOLDER_GRACE_S``, so it holds its slots one sweep interval at most.
  Then it walks the jobs QUEUED, RUNNING or FAILED whose record has not changed for
  longer than the workflow timeout (``sweep_walk``: a page at a time, to a time budget,
  resumed by the next sweep where this one stopped); those whose execution is not
  running (or never started) are closed the same way, and the number found is the
  ``StuckJobs`` metric. A job waiting in the backlog for a slot is not stuck, however
  long it waits, and the walk never receives it.

A run an operator cancelled (job CANCELLED, with its ``cancel`` record) is closed by the
same two without a dead-letter message or a failure metric: its attempts still
``running`` are closed as ``cancelled``. An execution stopped by anyone else (the job
still QUEUED or RUNNING) is an internal failure.

Exactly one dead-letter message per dead-lettered run: before sending, a backstop reads
the execution's history; a ``SendToDeadLetterQueue`` task that succeeded there (the send
worked, the mark did not) is marked with that message's id instead of sending again. The
history is written by Step Functions together with the task's success, so this check has
no window. A backstop's own send is recorded in the same conditional write that makes the
job DEAD_LETTERED; only a sandbox killed between SendMessage returning and that write (a
retried invocation then sends again) can leave a second copy, and the starter starts the
next run once however often a run's message is redriven.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from richdoc.admission.reconcile import SlotAudit
from richdoc.contracts import ExecutionInput
from richdoc.deadletter import failure_attributes
from richdoc.deletion import Deletion
from richdoc.jobs import (
    CANCELLED_OUTCOME,
    OPEN_STATUSES,
    DeadLetterSender,
    Job,
    JobStatus,
    JobStore,
    StaleRun,
    timestamp,
)
from richdoc.metrics import emit
from richdoc.records.actions import count_dead_lettered
from richdoc.records.calls import Reconciled, ScheduledSweep, Swept
from richdoc.records.sweep_walk import Budget, SweepWalk, Unlimited
from richdoc.taxonomy import Failure, FailureKind

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient
    from types_boto3_stepfunctions import SFNClient
    from types_boto3_stepfunctions.type_defs import DescribeExecutionOutputTypeDef

STATUS_CHANGE = "Step Functions Execution Status Change"
# The definition's TimeoutSeconds: no execution outlives it, so a job open longer than
# this has none left to close it (the template sets the same value; a test checks it).
WORKFLOW_TIMEOUT_ENV = "RICHDOC_WORKFLOW_TIMEOUT_S"
DEFAULT_WORKFLOW_TIMEOUT_S = 10800
# How long after its execution ended a run still holding slots is left to the reconciler
# (whose status event may be on its way) before the sweep closes it.
HOLDER_GRACE_S = 300


# ---- the EventBridge event (Powertools has no Step Functions model) --------------------------


class ExecutionStatusChange(BaseModel):
    """The ``detail`` of a "Step Functions Execution Status Change" event."""

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    execution_arn: str = Field(alias="executionArn")
    state_machine_arn: str = Field(alias="stateMachineArn")
    name: str
    status: Literal["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]
    start_date: int | None = Field(default=None, alias="startDate")
    stop_date: int | None = Field(default=None, alias="stopDate")
    input: str | None = None  # the execution input, JSON (absent when it was too large)
    output: str | None = None
    error: str | None = None
    cause: str | None = None

    def execution_input(self) -> ExecutionInput | None:
        """The input the starter gave the execution; None when it is not one of ours."""
        if not self.input:
            return None
        try:
            return ExecutionInput.model_validate_json(self.input)
        except ValidationError:
            return None


class ExecutionStatusChangeEvent(EventBridgeModel):
    detail_type: Literal["Step Functions Execution Status Change"] = Field(alias="detail-type")
    detail: ExecutionStatusChange


class SweepIncomplete(Exception):
    """Some stuck jobs could not be closed; the invocation fails so Lambda retries it (and
    then delivers it to the failure queue). The jobs stay open for the next sweep."""


class Backstops:
    """The reconciler (``reconcile``) and the sweep (``sweep``), and how they close a run."""

    def __init__(
        self,
        *,
        jobs: JobStore,
        sqs: SQSClient,
        sfn: SFNClient,
        dead_letter_queue_url: str,
        logger: Logger,
        workflow_timeout_s: int = DEFAULT_WORKFLOW_TIMEOUT_S,
        deletion: Deletion | None = None,
        audit: SlotAudit | None = None,
    ) -> None:
        self.jobs = jobs
        # Admission's ledger against the jobs and their executions (the sweep's).
        self.audit = audit
        # Purges a deleted job's artifacts once its run's execution has ended.
        self.deletion = deletion
        self.sqs = sqs
        self.sfn = sfn  # execution status and history
        self.dead_letter_queue_url = dead_letter_queue_url
        self.logger = logger
        self.workflow_timeout_s = workflow_timeout_s

    def reconcile(self, event: ExecutionStatusChangeEvent) -> Reconciled:
        """Finish the run of an execution that ended without the definition closing its
        job; nothing for executions that are not ours, of an older run, or already closed."""
        detail = event.detail
        execution = detail.execution_input()
        job = self.jobs.get(execution.job_id) if execution else None
        if job is not None and job.status is JobStatus.DELETED and self.deletion is not None:
            # The job was deleted while this run was going: nothing of the run writes any
            # more, so this last purge takes whatever it wrote after the earlier ones.
            purged = self.deletion.purge(job)
            self.logger.info("deleted job's run ended; purged", extra={"purged": str(purged)})
        if execution is None or job is None or job.run != execution.run:
            return Reconciled(reconciled=False)
        if job.status is JobStatus.CANCELLED:
            return Reconciled(reconciled=False, cancelled=self._close_cancelled(job))
        if job.status.terminal:
            return Reconciled(reconciled=False)
        failure = Failure(
            kind=FailureKind.INTERNAL,
            reason=" ".join(
                part for part in (f"execution {detail.status}:", detail.error, detail.cause) if part
            ),
            error=f"Execution.{detail.status}",
        )
        closed = self._close(
            job,
            message=execution.message,
            execution_arn=detail.execution_arn,
            failure=failure,
            closer="reconciler",
        )
        return Reconciled(reconciled=closed)

    def sweep(self, event: ScheduledSweep, budget: Budget | None = None) -> Swept:
        """Admission's audit first (bounded by the capacity), then the walk over the open
        jobs (QUEUED but not waiting, RUNNING, FAILED; CANCELLED runs not yet closed)
        unchanged for longer than the workflow timeout, as of the schedule's time, as far
        as ``budget`` lasts (``sweep_walk``): those whose execution is not running are
        closed."""
        cutoff = event.time - timedelta(seconds=self.workflow_timeout_s)
        failed: list[str] = []
        released, holders_closed, recounted = self._sweep_slots(event.time, failed)
        walk = SweepWalk(self.jobs, cutoff, budget or Unlimited())
        stuck = closed = cancelled = 0
        seen: set[str] = set()  # a job this sweep failed is found again under FAILED
        for candidate in walk.candidates():
            if candidate.job_id in seen:
                continue
            seen.add(candidate.job_id)
            try:
                if candidate.status is JobStatus.CANCELLED:
                    cancelled += self._sweep_cancelled(candidate.job_id)
                    continue
                outcome = self._sweep_job(candidate.job_id, cutoff)
            except Exception:  # one job must not keep the sweep from the others
                self.logger.exception(
                    "sweep could not close a job", extra={"job_id": candidate.job_id}
                )
                stuck += candidate.status is not JobStatus.CANCELLED
                failed.append(candidate.job_id)
                continue
            stuck += outcome is not None
            closed += bool(outcome)
        emit("StuckJobs", stuck)  # every sweep, zero too: the alarm sees the sweep ran
        if failed:
            raise SweepIncomplete(f"{len(failed)} stuck job(s) not closed: {', '.join(failed)}")
        swept = Swept(
            stuck=stuck,
            closed=closed,
            cancelled=cancelled,
            released=released,
            holders_closed=holders_closed,
            recounted=recounted,
            index_pages=walk.index_pages,
            read=walk.read,
            walked=walk.finished,
        )
        self.logger.info("sweep done", extra=swept.model_dump())
        return swept

    def _sweep_slots(self, now: datetime, failed: list[str]) -> tuple[int, int, bool]:
        """Admission's audit, and the runs holding slots whose execution ended unseen
        closed; (holdings released, runs closed, counts set right)."""
        if self.audit is None:
            return 0, 0, False
        findings = self.audit.audit()
        closed = 0
        for job in findings.open_runs:
            try:
                closed += self._close_ended_holder(job, now)
            except Exception:
                self.logger.exception("sweep could not close a run", extra={"job_id": job.job_id})
                failed.append(job.job_id)
        if findings.released or findings.recounted:
            self.logger.info(
                "admission repaired",
                extra={"released": findings.released, "recounted": findings.recounted},
            )
        return len(findings.released), closed, findings.recounted

    def _close_ended_holder(self, job: Job, now: datetime) -> bool:
        """Close the open run of a slot holder whose execution ended a while ago."""
        execution = self._describe(job.execution_arn)
        if execution is None or execution["status"] == "RUNNING":
            return False  # running, or admitted and starting (the dispatcher starts it)
        stopped = execution.get("stopDate")
        if stopped is not None and now - stopped < timedelta(seconds=HOLDER_GRACE_S):
            return False  # its status event may still be on its way to the reconciler
        ended = execution["status"]
        failure = Failure(
            kind=FailureKind.INTERNAL,
            reason=f"execution {ended} while the job was {job.status} (found by the sweep)",
            error=f"Execution.{ended}",
        )
        return self._close(
            job,
            message=job.message or self._execution_message(execution),
            execution_arn=job.execution_arn,
            failure=failure,
            closer="sweep",
        )

    def _sweep_cancelled(self, job_id: str) -> bool:
        """Close a cancelled run whose status event was lost, once its execution ended."""
        job = self.jobs.get(job_id)
        if job is None or job.status is not JobStatus.CANCELLED:
            return False
        execution = self._describe(job.execution_arn)
        if execution is not None and execution["status"] == "RUNNING":
            return False  # still stopping; its status event is still to come
        return self._close_cancelled(job)

    def _close_cancelled(self, job: Job) -> bool:
        """What a cancelled run leaves open once its execution has ended: attempts still
        ``running`` are closed as cancelled, and the job says the run was closed. No
        dead-letter message and no failure metric: an operator asked for this. False when
        a backstop closed it already (or the job moved on)."""
        cancel = job.cancel
        reason = f"cancelled by {cancel.by}" if cancel else "cancelled"
        if cancel and cancel.reason:
            reason += f": {cancel.reason}"
        try:
            self.jobs.attempts.close_running(job.job_id, job.run, CANCELLED_OUTCOME, reason)
            self.jobs.mark_cancel_closed(job.job_id, job.run)
        except StaleRun:
            return False
        self.logger.info("cancelled run closed", extra={"job_id": job.job_id, "run": job.run})
        return True

    def _sweep_job(self, job_id: str, cutoff: datetime) -> bool | None:
        """None when the job is not stuck; else whether this sweep closed it."""
        job = self.jobs.get(job_id)  # the index lags the table
        if job is None or job.status not in OPEN_STATUSES or job.waiting:
            return None  # closed meanwhile, or waiting in the backlog for a slot
        if (job.updated_at or "") >= timestamp(cutoff):
            return None
        execution = self._describe(job.execution_arn)
        if execution is not None and execution["status"] == "RUNNING":
            return None
        ended = execution["status"] if execution is not None else "NOT_STARTED"
        failure = Failure(
            kind=FailureKind.INTERNAL,
            reason=(
                f"job {job.status} unchanged since {job.updated_at}, longer than the "
                f"workflow timeout ({self.workflow_timeout_s} s); execution {ended}"
            ),
            error=f"Execution.{ended}",
        )
        return self._close(
            job,
            message=job.message or self._execution_message(execution),
            execution_arn=job.execution_arn,
            failure=failure,
            closer="sweep",
        )

    def _close(
        self,
        job: Job,
        *,
        message: str,
        execution_arn: str | None,
        failure: Failure,
        closer: DeadLetterSender,
    ) -> bool:
        """Record the run FAILED (if still QUEUED or RUNNING), dead-letter its message
        unless the execution already did, and mark it DEAD_LETTERED. False when the run
        turned out not to be the job's open run any more."""
        try:
            if job.status is not JobStatus.FAILED:
                # The execution has ended: every attempt still running was killed with it
                # (several, when shards were running side by side).
                error = failure.error or str(failure.kind)
                if not self.jobs.attempts.close_running(job.job_id, job.run, error, failure.reason):
                    self.jobs.attempts.record_platform_failure(
                        job.job_id, job.run, job.stage or "workflow", job.tier, failure
                    )
                job = self.jobs.record_failure(job.job_id, job.run, failure)
            failure = job.failure or failure
            message_id = self._sent_by_execution(execution_arn)
            sent_by: DeadLetterSender = "state-machine"
            if message_id is None:
                sent = self.sqs.send_message(
                    QueueUrl=self.dead_letter_queue_url,
                    MessageBody=message,
                    MessageAttributes=failure_attributes(job.job_id, job.run, failure),
                )
                message_id, sent_by = str(sent["MessageId"]), closer
            marked = self.jobs.mark_dead_lettered(job.job_id, job.run, message_id, sent_by=sent_by)
        except StaleRun:  # its own run or a newer one took the job over meanwhile
            return False
        if marked is not None:
            count_dead_lettered(marked)
            self.logger.error(
                "run closed outside the definition; job dead-lettered",
                extra={"job_id": job.job_id, "run": job.run, "by": closer, "sent_by": sent_by},
            )
        return True

    def _describe(self, execution_arn: str | None) -> DescribeExecutionOutputTypeDef | None:
        """The execution (DescribeExecution), or None if it does not exist."""
        if not execution_arn:
            return None
        try:
            return self.sfn.describe_execution(executionArn=execution_arn)
        except self.sfn.exceptions.ExecutionDoesNotExist:
            return None

    @staticmethod
    def _execution_message(execution: Mapping[str, Any] | None) -> str:
        """The original message from an execution's input (jobs created before the job
        record kept it)."""
        if execution is not None and execution.get("input"):
            return ExecutionInput.model_validate_json(execution["input"]).message
        raise LookupError("neither the job nor an execution holds the original message")

    def _sent_by_execution(self, execution_arn: str | None) -> str | None:
        """The MessageId of a dead-letter send that succeeded in this execution, from its
        history (a TaskSucceeded of sqs:sendMessage whose TaskScheduled named the DLQ)."""
        if not execution_arn:
            return None
        scheduled_queue = None
        try:
            for page in self.sfn.get_paginator("get_execution_history").paginate(
                executionArn=execution_arn
            ):
                for event in page["events"]:
                    if event["type"] == "TaskScheduled":
                        scheduled = event["taskScheduledEventDetails"]
                        if _is_send_message(scheduled):
                            parameters = json.loads(scheduled.get("parameters") or "{}")
                            scheduled_queue = parameters.get("QueueUrl")
                    elif event["type"] == "TaskSucceeded":
                        succeeded = event["taskSucceededEventDetails"]
                        if (
                            _is_send_message(succeeded)
                            and scheduled_queue == self.dead_letter_queue_url
                        ):
                            return str(json.loads(succeeded.get("output", "{}"))["MessageId"])
        except self.sfn.exceptions.ExecutionDoesNotExist:
            return None
        return None


def _is_send_message(details: Mapping[str, Any]) -> bool:
    return (details.get("resourceType"), details.get("resource")) == ("sqs", "sendMessage")
