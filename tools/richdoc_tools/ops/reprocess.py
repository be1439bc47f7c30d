"""Running finished jobs again (``richdoc reprocess``): each a new run of the same source
version, through admission like every other run.

A reprocess does not send anything: it writes the job's next run QUEUED in its tenant's
reprocess queue (``JobStore.start_next_run``, from SUCCEEDED, DEAD_LETTERED, CANCELLED or
FAILED) and marks that queue's lane, so the dispatcher admits it when a slot is free, in
its turn; any number of jobs reprocessed at once wait there, none of them can make a
burst. The reprocess queue takes turns with the tenant's uploads like another tenant's
queue, so a fresh upload never waits behind a reprocess of its own tenant.
Its run's end writes the job's terminal record again, so the document's manifest and its
completion event follow (a document finished before they existed gets both).

Which jobs (``select``): every job of a document's newest version (the job created last
for its bucket and key; older versions stay as they ran), narrowed by a key prefix, a
tenant, or to the successful runs whose processor contract differs from the one this
richdoc computes for their format and pipeline (after a docling upgrade: the deployed
stack's, when the tools come from the same checkout). Jobs still QUEUED or RUNNING are
skipped; DELETED ones have no source left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from richdoc.admission.backlog import Backlog
from richdoc.admission.tenants import tenant_of
from richdoc.artifacts import contract_of
from richdoc.formats import format_of
from richdoc.jobs import Job, JobStatus, StaleRun, execution_name
from richdoc.jobs.keys import QueueKind
from richdoc.parse.settings import Pipeline, processor_contract
from richdoc.taxonomy import UnsupportedFeature

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

# What a reprocess may run again: every ended run whose source is still there.
REPROCESSABLE = (
    JobStatus.SUCCEEDED,
    JobStatus.DEAD_LETTERED,
    JobStatus.CANCELLED,
    JobStatus.FAILED,
)


class ReprocessOutcome(StrEnum):
    QUEUED = "queued"  # the next run waits in the backlog
    WOULD_QUEUE = "would_queue"  # --dry-run
    SKIPPED = "skipped"  # running (or waiting) already, or moved on meanwhile


class ReprocessFilter(BaseModel):
    """Which jobs ``richdoc reprocess`` runs again (every one matches all that are set)."""

    model_config = ConfigDict(frozen=True)

    prefix: str | None = None  # the source key starts with it
    tenant: str | None = None
    contract_changed: bool = False  # succeeded under another processor contract


class ReprocessResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: str
    key: str
    tenant: str | None
    outcome: ReprocessOutcome
    run: int  # the run queued (or that would be), or the job's run when skipped
    detail: str


class ReprocessReport(BaseModel):
    """``richdoc reprocess --json``."""

    model_config = ConfigDict(frozen=True)

    matched: int
    dry_run: bool
    queued: int
    skipped: int
    results: list[ReprocessResult]


def current_contract(job: Job) -> str | None:
    """The processor contract this richdoc would parse the job's source under (its
    format, and the pipeline its last successful parse ran); None when not known."""
    if job.pipeline is None:
        return None
    try:
        return processor_contract(format_of(job.source.key), Pipeline(job.pipeline))
    except (ValueError, UnsupportedFeature):  # a format or pipeline no longer known
        return None


def contract_changed(job: Job) -> bool:
    """The job succeeded under a processor contract other than today's."""
    if job.status is not JobStatus.SUCCEEDED or job.outputs is None:
        return False
    recorded = contract_of(job.outputs.docling_key)
    return recorded is not None and recorded != current_contract(job)


def select(operator: Operator, wanted: ReprocessFilter) -> list[Job]:
    """The jobs to run again: each document's newest version's job, narrowed by
    ``wanted``, oldest upload first."""
    newest: dict[tuple[str, str], Job] = {}
    for status in (*REPROCESSABLE, JobStatus.QUEUED, JobStatus.RUNNING):
        for job in operator.jobs.list_jobs(status):
            document = (job.source.bucket, job.source.key)
            held = newest.get(document)
            if held is None or (job.created_at or "", job.job_id) > (
                held.created_at or "",
                held.job_id,
            ):
                newest[document] = job

    def keep(job: Job) -> bool:
        if job.status not in REPROCESSABLE:
            return False
        if wanted.prefix is not None and not job.source.key.startswith(wanted.prefix):
            return False
        if wanted.tenant is not None and _tenant(job) != wanted.tenant:
            return False
        return not wanted.contract_changed or contract_changed(job)

    return sorted(filter(keep, newest.values()), key=lambda j: (j.created_at or "", j.job_id))


def reprocess(
    operator: Operator,
    jobs: Sequence[Job],
    *,
    dry_run: bool = False,
    on_result: Callable[[ReprocessResult], None] | None = None,
) -> ReprocessReport:
    """The next run of each of ``jobs``, queued in its tenant's backlog."""
    backlog = Backlog(operator.jobs.table, operator.jobs.clock)
    results = []
    for job in jobs:
        result = _queue(operator, backlog, job, dry_run=dry_run)
        results.append(result)
        if on_result is not None:
            on_result(result)
    queued = sum(r.outcome is not ReprocessOutcome.SKIPPED for r in results)
    return ReprocessReport(
        matched=len(jobs),
        dry_run=dry_run,
        queued=queued,
        skipped=len(results) - queued,
        results=results,
    )


def _tenant(job: Job) -> str:
    """The job's tenant (one recorded before tenants existed: its key's)."""
    return job.tenant or tenant_of(job.source.key)


def _queue(operator: Operator, backlog: Backlog, job: Job, *, dry_run: bool) -> ReprocessResult:
    tenant = _tenant(job)

    def result(outcome: ReprocessOutcome, run: int, detail: str) -> ReprocessResult:
        return ReprocessResult(
            job_id=job.job_id,
            key=job.source.key,
            tenant=tenant,
            outcome=outcome,
            run=run,
            detail=detail,
        )

    if dry_run:
        return result(ReprocessOutcome.WOULD_QUEUE, job.run + 1, f"would queue run {job.run + 1}")
    next_run = job.run + 1
    prefix = operator.resources.state_machine_arn.replace(":stateMachine:", ":execution:", 1)
    # In the lane before the run waits: the dispatcher its stream record wakes finds it.
    backlog.mark(tenant, QueueKind.REPROCESS)
    try:
        operator.jobs.start_next_run(
            job.job_id,
            job.run,
            execution_arn=f"{prefix}:{execution_name(job.job_id, next_run)}",
            tenant=tenant,
            allowed=REPROCESSABLE,
            queue=QueueKind.REPROCESS,
        )
    except StaleRun:  # it moved on meanwhile (a redrive, its own end, a deletion)
        current = operator.jobs.get(job.job_id)
        status = current.status if current else "gone"
        return result(ReprocessOutcome.SKIPPED, job.run, f"it moved on: {status}")
    return result(ReprocessOutcome.QUEUED, next_run, f"run {next_run} waits in the backlog")
