"""Which job record changes are completions, and the event each one publishes.

A job's run ends with one run-fenced write of a terminal status (SUCCEEDED, DEAD_LETTERED,
CANCELLED, DELETED), by the state machine, the reconciler, the sweep, the starter or an
operator. The jobs table's stream carries that write as the item's old and new images;
``completed`` tells a terminal change from every other write (an attempt, a progress
step, a discard recorded on a dead-lettered job, a purge of a deleted one), and
``completion_detail`` is the event it publishes (``richdoc_client.events``): keys (of the
outputs kept with the document, ``richdoc.document_results``), counts, the failure's
kind and feature, the passed-through metadata, and how the change relates to the
document's manifest as the notifier left it; never the reason or any document text.
Pure: no I/O.
"""

from __future__ import annotations

from richdoc.document_results import kept_keys
from richdoc.jobs import Job
from richdoc_client.events import (
    CompletionDetail,
    FailureSummary,
    ManifestSummary,
    TerminalStatus,
)
from richdoc_client.failures import FailureKind
from richdoc_client.identity import SourceIdentity
from richdoc_client.manifest import Manifest
from richdoc_client.results import ResultCounts


def completed(old: Job | None, new: Job | None) -> Job | None:
    """``new`` when the write that turned ``old`` into ``new`` ended a run: the status
    became terminal, or a terminal status now belongs to another run. None for any other
    write, and for an item's removal (its time to live ran out)."""
    if new is None or not new.status.terminal:
        return None
    if old is not None and (old.status, old.run) == (new.status, new.run):
        return None
    return new


def source_identity(job: Job) -> SourceIdentity:
    source = job.source
    return SourceIdentity(
        bucket=source.bucket, key=source.key, version_id=source.version_id, sha256=source.sha256
    )


def result_counts(job: Job) -> ResultCounts | None:
    """The counts of the job's latest successful run (``Job.result_run``); None before
    any run succeeded."""
    if job.result_run is None or job.counts is None:
        return None
    return ResultCounts.model_validate(job.counts.model_dump())


def manifest_summary(manifest: Manifest | None) -> ManifestSummary | None:
    if manifest is None:
        return None
    return ManifestSummary(
        job_id=manifest.job_id,
        run=manifest.run,
        status=manifest.status,
        result=manifest.result_ref,
    )


def completion_detail(job: Job, results_bucket: str, manifest: Manifest | None) -> CompletionDetail:
    """The completion event of the terminal status ``job`` is in, as it relates to the
    document's ``manifest`` (None: the document has none)."""
    status = TerminalStatus(job.status.value)
    succeeded = status is TerminalStatus.SUCCEEDED  # outputs of this run, not an earlier one
    failure = None
    if status is TerminalStatus.DEAD_LETTERED:
        recorded = job.failure  # every dead-lettered run has one; internal if not
        failure = (
            FailureSummary(kind=recorded.kind, feature=recorded.feature)
            if recorded is not None
            else FailureSummary(kind=FailureKind.INTERNAL)
        )
    return CompletionDetail.create(
        job_id=job.job_id,
        run=job.run,
        status=status,
        source=source_identity(job),
        outputs=kept_keys(job, results_bucket) if succeeded else None,
        counts=result_counts(job) if succeeded else None,
        failure=failure,
        metadata=job.metadata,
        manifest=manifest_summary(manifest),
    )
