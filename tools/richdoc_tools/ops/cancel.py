"""Cancelling jobs (``richdoc jobs cancel``, and the console).

A cancel is committed on the job record first, in one conditional write (QUEUED or
RUNNING, the same run -> CANCELLED, with who, when and why), and only then is the run's
execution stopped (``StopExecution`` with the error ``richdoc.Cancelled``, so the
execution's history says why). Cancel and completion serialise on that record: whichever
commits first wins. A run that finished first is reported as finished, and how; a run
cancelled first is refused its own later writes (the state machine ends it in
``Cancelled``), and the records backstops close what it leaves open. A QUEUED job is
cancelled all the same: one still waiting in the backlog leaves it in the cancel's write,
nothing of it has started and nothing will (the dispatcher admits only waiting jobs), so
its cancel is closed at once; one admitted whose execution has not started yet stops at
``RecordStart``, which finds it CANCELLED.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from richdoc.awstext import fit_chars
from richdoc.jobs import Job, JobStatus, StaleRun
from richdoc_tools.ops.jobs import find_jobs

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

# The error a cancelled execution stops with (its history and the console show it).
STOP_ERROR = "richdoc.Cancelled"
# StopExecution takes at most this much cause.
MAX_CAUSE_CHARS = 32768
# A refused cancel re-reads the job and tries again at most this often (a job QUEUED at a
# newer run than the one read: it cannot move further without finishing).
ATTEMPTS = 3


class CancelOutcome(StrEnum):
    CANCELLED = "cancelled"  # committed now
    ALREADY_CANCELLED = "already_cancelled"  # committed before (its stop is repeated)
    FINISHED = "finished"  # refused: the run had already succeeded, failed or dead-lettered
    NOT_FOUND = "not_found"


class ExecutionStop(StrEnum):
    STOPPED = "stopped"  # StopExecution accepted (an execution that had ended stays so)
    NOT_STARTED = "not_started"  # no execution yet: RecordStart will refuse to start it
    WAITING = "waiting"  # it waited in the backlog: no execution, and none will start


class CancelResult(BaseModel):
    """What became of one job id given to ``richdoc jobs cancel`` (its JSON form)."""

    model_config = ConfigDict(frozen=True)

    requested: str  # the id or prefix as given
    job_id: str | None  # the job's whole id (None: no such job)
    outcome: CancelOutcome
    status: JobStatus | None  # the job's status as the cancel left or found it
    run: int | None
    execution: ExecutionStop | None = None
    detail: str


def finished_detail(job: Job) -> str:
    """Why a job can no longer be cancelled: how and when its run finished."""
    failure = job.failure
    kind = f" ({failure.kind})" if failure else ""
    if job.status is JobStatus.FAILED:
        return (
            f"the job had already finished: run {job.run} failed{kind} and its dead-letter "
            "message is being sent"
        )
    when = f" at {job.ended_at}" if job.ended_at else ""
    return f"the job had already finished: {job.status}{kind}{when} (run {job.run})"


def cancel_jobs(
    operator: Operator, job_ids: list[str], *, by: str | None = None, reason: str | None = None
) -> list[CancelResult]:
    """Cancel each job (ids or unique prefixes, all resolved first); one result each."""
    found = find_jobs(operator, job_ids)
    who = by or operator.caller()
    return [
        _cancel(operator, requested, job, by=who, reason=reason)
        if job is not None
        else CancelResult(
            requested=requested,
            job_id=None,
            outcome=CancelOutcome.NOT_FOUND,
            status=None,
            run=None,
            detail="no such job",
        )
        for requested, job in found.items()
    ]


def _cancel(
    operator: Operator, requested: str, job: Job, *, by: str, reason: str | None
) -> CancelResult:
    store = operator.jobs
    for _ in range(ATTEMPTS):
        if job.status is JobStatus.CANCELLED:
            return _result(requested, job, CancelOutcome.ALREADY_CANCELLED, _stop(operator, job))
        if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING):
            return CancelResult(
                requested=requested,
                job_id=job.job_id,
                outcome=CancelOutcome.FINISHED,
                status=job.status,
                run=job.run,
                detail=finished_detail(job),
            )
        try:
            cancelled = store.cancel(job.job_id, job.run, by=by, reason=reason)
        except StaleRun:  # the run moved on first: read what it did
            current = store.get(job.job_id)
            assert current is not None  # jobs are not deleted while cancelled
            job = current
            continue
        if job.waiting and cancelled.admitted_at is None:
            # It left the backlog before any slot or execution: nothing is left open.
            closed = store.mark_cancel_closed(cancelled.job_id, cancelled.run)
            return _result(requested, closed, CancelOutcome.CANCELLED, ExecutionStop.WAITING)
        return _result(requested, cancelled, CancelOutcome.CANCELLED, _stop(operator, cancelled))
    raise RuntimeError(f"job {job.job_id} kept changing while it was being cancelled")


def _result(requested: str, job: Job, outcome: CancelOutcome, stop: ExecutionStop) -> CancelResult:
    cancel = job.cancel
    said = f"cancelled at {cancel.requested_at} by {cancel.by}" if cancel else "cancelled"
    if cancel and cancel.reason:
        said += f" ({cancel.reason})"
    if stop is ExecutionStop.NOT_STARTED:
        said += "; its execution had not started and will not run"
    elif stop is ExecutionStop.WAITING:
        said += "; it was waiting in the backlog: nothing had started, nothing will"
    return CancelResult(
        requested=requested,
        job_id=job.job_id,
        outcome=outcome,
        status=job.status,
        run=job.run,
        execution=stop,
        detail=said,
    )


def _stop(operator: Operator, job: Job) -> ExecutionStop:
    """Stop the cancelled run's execution (again, for a cancel repeated after a failed
    stop: StopExecution of a stopped execution changes nothing)."""
    if not job.execution_arn:
        return ExecutionStop.NOT_STARTED
    cancel = job.cancel
    cause = f"cancelled by {cancel.by}" if cancel else "cancelled"
    if cancel and cancel.reason:
        cause += f": {cancel.reason}"
    sfn = operator.stepfunctions
    try:
        sfn.stop_execution(
            executionArn=job.execution_arn,
            error=STOP_ERROR,
            cause=fit_chars(cause, MAX_CAUSE_CHARS),  # the operator's reason: any text
        )
    except sfn.exceptions.ExecutionDoesNotExist:
        return ExecutionStop.NOT_STARTED
    return ExecutionStop.STOPPED
