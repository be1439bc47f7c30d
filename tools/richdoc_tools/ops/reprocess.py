"""Running finished jobs again (``richdoc reprocess``): each a new run of the same source
version, through admission like every other run.

A reprocess does not send anything: it writes the job's next run QUEUED in its tenant's
reprocess backlog (``JobStore.start_next_run``, from SUCCEEDED, DEAD_LETTERED, CANCELLED
or FAILED), that backlog put in the lane first (``Backlog.queue_run``), so the dispatcher
admits it when a slot is free, in its turn; any number of jobs reprocessed at once wait
there, none of them can make a burst. The reprocess backlog takes turns with the tenant's
uploads like another tenant's backlog, so a fresh upload never waits behind a reprocess
of its own tenant.
Its run's end writes the job's terminal record again, so the document's manifest and its
completion event follow (a document finished before they existed gets both); while it
waits or runs, the manifest keeps the run before it.

Which jobs (``pages``): the job of each key's current version in the ingest bucket (older
versions stay as they ran; a key whose current version is a delete marker has none), in
key order, narrowed by a key prefix, a tenant, or to the successful runs whose processor
contract differs from today's: the parse's, which this richdoc computes for their format
and pipeline (after a docling upgrade: the deployed stack's, when the tools come from the
same checkout), or the detection rule set, which the stack's ``DetectionRules`` parameter
says (after it was changed).
The selection is read a page at a time: one ListObjectVersions page of the bucket (at
most ``PAGE_SIZE`` versions) and the jobs of its keys' current versions, each page
queued before the next is read, so an operator's memory holds one page whatever the
number of documents.

Skipped, and said why: a job whose run is under way (QUEUED, RUNNING), a CANCELLED one
unless ``include_cancelled`` (an operator stopped it: often an upload made by mistake),
a DELETED one (its results were deleted on purpose; upload it again to run it), and one
whose run was queued at or after the reprocess began (``ReprocessCursor.began``).

A reprocess can be resumed: ``ReprocessCursor`` is the selection, whether it is a dry
run, when it began and the last key it handled, and its ``token`` is what the operator
passes back. Keys up to that one are not read again, and the rule on ``began`` means that
however far past the token the interrupted run had gone, no job is queued twice.
"""

from __future__ import annotations

import base64
import binascii
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError

from richdoc.admission.backlog import Backlog
from richdoc.admission.tenants import tenant_of
from richdoc.artifacts import contract_of
from richdoc.formats import format_of
from richdoc.jobs import Job, JobStatus, StaleRun, execution_arn, job_id_for
from richdoc.jobs.keys import BacklogKind
from richdoc.manifests import ObjectVersion
from richdoc.parse.settings import Pipeline, processor_contract
from richdoc.taxonomy import UnsupportedFeature
from richdoc_client.detection import FIRST_RULES

if TYPE_CHECKING:
    from types_boto3_s3.type_defs import (
        ListObjectVersionsOutputTypeDef,
        ListObjectVersionsRequestTypeDef,
    )

    from richdoc_tools.ops.operator import Operator

# What a reprocess may run again: every ended run whose source is still there.
REPROCESSABLE = (
    JobStatus.SUCCEEDED,
    JobStatus.DEAD_LETTERED,
    JobStatus.CANCELLED,
    JobStatus.FAILED,
)
# Versions a page of the selection lists (ListObjectVersions returns at most 1,000).
PAGE_SIZE = 1000


class ReprocessOutcome(StrEnum):
    QUEUED = "queued"  # the next run waits in the backlog
    WOULD_QUEUE = "would_queue"  # --dry-run
    SKIPPED = "skipped"  # running, cancelled, deleted, queued already, or moved on meanwhile


class ReprocessFilter(BaseModel):
    """Which jobs ``richdoc reprocess`` runs again (every one matches all that are set)."""

    model_config = ConfigDict(frozen=True)

    prefix: str | None = None  # the source key starts with it
    tenant: str | None = None
    # succeeded under another processor contract (the parse's, or the detection rule set)
    contract_changed: bool = False
    include_cancelled: bool = False  # run CANCELLED jobs again too


class ReprocessCursor(BaseModel):
    """Where a reprocess is: what it selects, whether it only counts, when it began (a job
    whose run was queued since is never queued again) and the last key it handled."""

    model_config = ConfigDict(frozen=True)

    wanted: ReprocessFilter
    dry_run: bool
    began: str  # the job store's clock when it began
    after: str | None = None

    def token(self) -> str:
        """The cursor as one word to paste back (``--resume``)."""
        return base64.urlsafe_b64encode(self.model_dump_json().encode()).decode()

    @classmethod
    def from_token(cls, token: str) -> ReprocessCursor:
        """The cursor a ``token`` holds; ValueError when it holds none."""
        try:
            return cls.model_validate_json(base64.urlsafe_b64decode(token.strip().encode()))
        except (binascii.Error, ValueError, ValidationError) as exc:
            raise ValueError("not a resume token of richdoc reprocess") from exc


class ReprocessResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: str
    key: str
    tenant: str | None
    status: JobStatus  # the job's as found
    outcome: ReprocessOutcome
    run: int  # the run queued (or that would be), or the job's run when skipped
    detail: str


class ReprocessTally(BaseModel):
    """The counts of ``richdoc reprocess --json``, kept as the results go by."""

    matched: int = 0
    queued: int = 0
    skipped: int = 0

    def add(self, result: ReprocessResult) -> None:
        self.matched += 1
        if result.outcome is ReprocessOutcome.SKIPPED:
            self.skipped += 1
        else:
            self.queued += 1


def current_contract(job: Job) -> str | None:
    """The processor contract this richdoc would parse the job's source under (its
    format, and the pipeline its last successful parse ran); None when not known."""
    if job.pipeline is None:
        return None
    try:
        return processor_contract(format_of(job.source.key), Pipeline(job.pipeline))
    except (ValueError, UnsupportedFeature):  # a format or pipeline no longer known
        return None


def contract_changed(job: Job, detection_rules: str) -> bool:
    """The job succeeded under a processor contract other than today's: its parse's, or
    a detection rule set other than ``detection_rules`` (the deployed one)."""
    if job.status is not JobStatus.SUCCEEDED or job.outputs is None:
        return False
    if (job.detection_rules or FIRST_RULES) != detection_rules:
        return True
    recorded = contract_of(job.outputs.docling_key)
    return recorded is not None and recorded != current_contract(job)


def deployed_rules(operator: Operator) -> str:
    """The stack's ``DetectionRules``; a stack deployed before the parameter existed
    runs spec-v1."""
    return operator.resources.parameters.get("DetectionRules") or FIRST_RULES


@dataclass(frozen=True)
class Page:
    """One page of the selection: the matching jobs of the keys it listed, in key order
    (taken from the front as they are handled, so none outlives its turn), and the last
    key it listed (every key up to it has been looked at)."""

    jobs: deque[Job]
    last_key: str | None


def pages(
    operator: Operator, wanted: ReprocessFilter, *, after: str | None, page_size: int = PAGE_SIZE
) -> Iterator[Page]:
    """The jobs of the current versions of the keys under ``wanted.prefix`` after the key
    ``after``, that match ``wanted``, a page of ``page_size`` listed versions at a time."""
    s3, bucket = operator.s3, operator.resources.ingest_bucket
    rules = deployed_rules(operator)
    request: ListObjectVersionsRequestTypeDef = {
        "Bucket": bucket,
        "Prefix": wanted.prefix or "",
        "MaxKeys": page_size,
    }
    if after is not None:
        request["KeyMarker"] = after
    while True:
        listed = s3.list_object_versions(**request)
        current = _current_versions(listed, after)
        ids = [job_id_for(bucket, key, version.version) for key, version in current]
        found = operator.jobs.get_many(ids)
        jobs = deque(found.pop(i) for i in ids if i in found)
        jobs = deque(filter(lambda job: _matches(job, wanted, rules), jobs))
        entries = [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]
        keys = [entry.get("Key", "") for entry in entries]
        yield Page(jobs=jobs, last_key=max(keys) if keys else after)
        if not listed.get("IsTruncated"):
            return
        request["KeyMarker"] = listed.get("NextKeyMarker", "")
        request["VersionIdMarker"] = listed.get("NextVersionIdMarker", "")


def _current_versions(
    listed: ListObjectVersionsOutputTypeDef, after: str | None
) -> list[tuple[str, ObjectVersion]]:
    """Each listed key's current version (a key under a delete marker has none), past
    ``after``: S3 may start a listing at its ``KeyMarker`` or just after it."""
    found = []
    for version in listed.get("Versions", []):
        key = version.get("Key", "")
        if not version.get("IsLatest") or (after is not None and key <= after):
            continue
        version_id = version.get("VersionId")
        found.append(
            (
                key,
                ObjectVersion(
                    version_id=None if version_id in (None, "null") else version_id,
                    etag=str(version.get("ETag", "")).strip('"') or None,
                ),
            )
        )
    return found


def _matches(job: Job, wanted: ReprocessFilter, rules: str) -> bool:
    if wanted.tenant is not None and _tenant(job) != wanted.tenant:
        return False
    return not wanted.contract_changed or contract_changed(job, rules)


def skip_reason(job: Job, cursor: ReprocessCursor) -> str | None:
    """Why the reprocess leaves ``job`` as it is; None when it runs it again."""
    if job.status is JobStatus.DELETED:
        return "deleted: its results were removed on purpose; upload it again to run it"
    if job.status is JobStatus.CANCELLED and not cursor.wanted.include_cancelled:
        return "cancelled by an operator: --include-cancelled runs it again"
    if job.status not in REPROCESSABLE:
        return "a run of it is under way"
    if job.queued_at is not None and job.queued_at >= cursor.began:
        return "queued since this reprocess began"
    return None


def reprocess(
    operator: Operator,
    cursor: ReprocessCursor,
    *,
    page_size: int = PAGE_SIZE,
    on_page: Callable[[ReprocessCursor], None] | None = None,
) -> Iterator[tuple[ReprocessResult, ReprocessCursor]]:
    """The next run of each selected job, queued in its tenant's backlog (counted only on
    a dry run), as it goes: each result with the cursor that resumes after it.
    ``on_page`` hears the cursor after each page."""
    backlog = Backlog(operator.jobs.table, operator.jobs.clock)
    for page in pages(operator, cursor.wanted, after=cursor.after, page_size=page_size):
        while page.jobs:
            result = _handle(operator, backlog, page.jobs.popleft(), cursor)
            cursor = cursor.model_copy(update={"after": result.key})
            yield result, cursor
        cursor = cursor.model_copy(update={"after": page.last_key})
        if on_page is not None:
            on_page(cursor)


def _handle(
    operator: Operator, backlog: Backlog, job: Job, cursor: ReprocessCursor
) -> ReprocessResult:
    reason = skip_reason(job, cursor)
    if reason is not None:
        return _result(job, ReprocessOutcome.SKIPPED, job.run, reason)
    return _queue(operator, backlog, job, dry_run=cursor.dry_run)


def _tenant(job: Job) -> str:
    """The job's tenant (one recorded before tenants existed: its key's)."""
    return job.tenant or tenant_of(job.source.key)


def _result(job: Job, outcome: ReprocessOutcome, run: int, detail: str) -> ReprocessResult:
    return ReprocessResult(
        job_id=job.job_id,
        key=job.source.key,
        tenant=_tenant(job),
        status=job.status,
        outcome=outcome,
        run=run,
        detail=detail,
    )


def _queue(operator: Operator, backlog: Backlog, job: Job, *, dry_run: bool) -> ReprocessResult:
    tenant = _tenant(job)

    def result(outcome: ReprocessOutcome, run: int, detail: str) -> ReprocessResult:
        return _result(job, outcome, run, detail)

    if dry_run:
        return result(ReprocessOutcome.WOULD_QUEUE, job.run + 1, f"would queue run {job.run + 1}")
    next_run = job.run + 1
    try:
        backlog.queue_run(
            tenant,
            lambda: operator.jobs.start_next_run(
                job.job_id,
                job.run,
                execution_arn=execution_arn(
                    operator.resources.state_machine_arn, job.job_id, next_run
                ),
                tenant=tenant,
                allowed=REPROCESSABLE,
                backlog=BacklogKind.REPROCESS,
            ),
            BacklogKind.REPROCESS,
        )
    except StaleRun:  # it moved on meanwhile (a redrive, its own end, a deletion)
        current = operator.jobs.get(job.job_id)
        status = current.status if current else "gone"
        return result(ReprocessOutcome.SKIPPED, job.run, f"it moved on: {status}")
    return result(ReprocessOutcome.QUEUED, next_run, f"run {next_run} waits in the backlog")
