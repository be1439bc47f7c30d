"""A stack's jobs named by an operator: found by their whole id or a unique prefix of it
(as ``richdoc jobs show`` takes them), shown with their attempts, deleted.

A whole id is one read; a prefix is looked up in the job list (the status index, no table
scan), since DynamoDB cannot match a prefix of a partition key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from richdoc.artifacts import ArtifactStore
from richdoc.deletion import Deleted, Deletion
from richdoc.jobs import Job
from richdoc.jobs.references import DigestReferences
from richdoc_tools.ops.job_document import JobDocument

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

JOB_ID_LENGTH = 32


class AmbiguousJobId(ValueError):
    """A job id prefix that several jobs share."""

    def __init__(self, prefix: str, candidates: list[Job]) -> None:
        super().__init__(f"job id prefix {prefix!r} matches {len(candidates)} jobs")
        self.prefix = prefix
        self.candidates = candidates


def find_job(operator: Operator, job_id: str, *, known: Sequence[Job] | None = None) -> Job | None:
    """The job with this id or unique id prefix; AmbiguousJobId when several match.

    A prefix is looked up in ``known`` when the caller has listed the jobs already.
    """
    if len(job_id) >= JOB_ID_LENGTH:
        return operator.jobs.get(job_id)
    listed = operator.jobs.list_jobs() if known is None else known
    matches = [job for job in listed if job.job_id.startswith(job_id)]
    if len(matches) > 1:
        raise AmbiguousJobId(job_id, matches)
    return matches[0] if matches else None


def find_jobs(operator: Operator, job_ids: Sequence[str]) -> dict[str, Job | None]:
    """``find_job`` for each id or prefix, all resolved before anything is done with them
    (AmbiguousJobId for the first ambiguous one; the job list read once for all the
    prefixes); None for no such job."""
    listed = None
    if any(len(job_id) < JOB_ID_LENGTH for job_id in job_ids):
        listed = operator.jobs.list_jobs()
    return {job_id: find_job(operator, job_id, known=listed) for job_id in job_ids}


def show_job(operator: Operator, job_id: str) -> JobDocument | None:
    """The job with this id or unique id prefix and its attempts (AmbiguousJobId)."""
    from richdoc_tools.ops.backlog import places

    job = find_job(operator, job_id)
    if job is None:
        return None
    place = places(operator, [job]).get(job.job_id)
    return JobDocument(job=job, attempts=operator.jobs.attempts.of_job(job.job_id), place=place)


def delete_job(operator: Operator, job_id: str, *, with_source: bool = False) -> Deleted | None:
    """Delete a job (whole id or unique prefix) and what was derived from it, as the
    removal of its source object does; ``with_source`` deletes that object version too,
    for good (its notification then finds the job deleted already). None when there is no
    such job."""
    job = find_job(operator, job_id)
    if job is None:
        return None
    jobs = operator.jobs
    resources = operator.resources
    deletion = Deletion(
        jobs=jobs,
        references=DigestReferences(
            jobs.table, retention_days=resources.days("ParseArtifactRetentionDays")
        ),
        artifacts=ArtifactStore(operator.s3, resources.artifact_bucket),
    )
    command = "richdoc jobs delete" + (" --with-source" if with_source else "")
    deleted = deletion.delete_job(job.job_id, by="operator", reason=command)
    source = job.source
    if with_source and source.version_id:
        operator.s3.delete_object(Bucket=source.bucket, Key=source.key, VersionId=source.version_id)
    return deleted
