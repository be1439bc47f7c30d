"""Deleting a job and everything derived only from its source object.

What a job leaves in the artifact bucket (``richdoc.artifacts``):

* ``jobs/<job id>/...``: its runs' projections and detections, its alone;
* ``docling/<sha256>/...``: the parse artifacts of its bytes, shared by every job whose
  source has the same bytes (``richdoc.jobs.references`` says which).

``delete_job`` marks the job DELETED (one write, not run-fenced: from then on no stage of
it opens an attempt, registers on the digest or records an outcome), then ``purge``s:
``jobs/<job id>/`` is deleted, the job leaves its digest's users, and when no other job
uses the digest its artifacts are deleted too, under the digest's purge lease.

A run that was inside a stage when the job was deleted can still write after that purge
(a parse that finishes late). So whoever later finds the job DELETED purges again: each
stage right after its work (``richdoc.stage``), and the reconciler once the run's
execution has ended, after which nothing of that run writes. Every step is idempotent:
deleting twice, or a purge racing another, leaves the same bucket. A stage that registers
on a digest after the job is DELETED is refused (StaleRun), and one that registers while
the digest is being purged is retried (Transient), so the purge cannot delete artifacts
another job has started to use. A job deleted while it registers may join the digest's
users after the delete's purge: it records the digest first, so the purge after its
stage (or the reconciler's) releases it (``richdoc.jobs.references`` has the argument).

The source object's removal (S3 ``ObjectRemoved`` and ``LifecycleExpiration`` events,
through the ingest queue and the starter) names the jobs: a version deleted for good is
one job; a delete marker hides every version of the key, so each of their jobs is
deleted. A version with no job yet gets a DELETED record (a tombstone), so that its
creation notification, if it arrives later (S3 does not order its notifications), starts
nothing; and a creation notification whose object is already gone (S3 answers 404: the
roles that read sources may list the bucket) records the same tombstone instead of
starting a run (``richdoc.ingest``).
"""

from __future__ import annotations

from dataclasses import dataclass

from richdoc.artifacts import ArtifactStore, digest_prefix, job_prefix
from richdoc.contracts import SourceObject, Written
from richdoc.jobs import (
    DeletedBy,
    DeletionMark,
    Job,
    JobStatus,
    JobStore,
    StaleRun,
    job_id_for,
)
from richdoc.jobs.references import DigestReferences
from richdoc.taxonomy import Transient


@dataclass(frozen=True)
class RemovedObject:
    """A source object version that S3 says is gone (an ``ObjectRemoved`` or
    ``LifecycleExpiration`` notification)."""

    bucket: str
    key: str
    version_id: str | None
    event: str  # e.g. ObjectRemoved:DeleteMarkerCreated
    # A delete marker now hides every version of the key (version_id is the marker's).
    delete_marker: bool


@dataclass(frozen=True)
class Purged:
    """What one purge of a deleted job deleted."""

    job_id: str
    run_outputs: int  # objects under jobs/<job id>/
    parse_artifacts: int  # objects under docling/<sha256>/, when no other job used them
    shared_kept: bool  # other jobs use the parse artifacts: they stay


@dataclass(frozen=True)
class Deleted:
    """A job deleted, and what its purge deleted."""

    job: Job
    purged: Purged


class Deletion:
    """Deletes jobs and their artifacts (the starter, the records function, the CLI)."""

    def __init__(
        self, *, jobs: JobStore, references: DigestReferences, artifacts: ArtifactStore
    ) -> None:
        self.jobs = jobs
        self.references = references
        self.artifacts = artifacts

    def delete_job(
        self, job_id: str, *, by: DeletedBy, reason: str, source: SourceObject | None = None
    ) -> Deleted | None:
        """Mark the job DELETED (a DELETED record when it has none yet and ``source`` is
        given) and purge its artifacts; None when there is no such job."""
        mark = DeletionMark(at=self.jobs.clock(), by=by, reason=reason)
        job = self.jobs.mark_deleted(job_id, mark, source=source)
        return Deleted(job, self.purge(job)) if job is not None else None

    def purge(self, job: Job) -> Purged:
        """Delete what a DELETED job's runs wrote; its parse artifacts only when no other
        job uses them. Transient while another purge of them holds the lease."""
        outputs = self.purge_run_outputs(job)
        shared, kept = self.release_parse_artifacts(job)
        return Purged(job.job_id, outputs, shared, kept)

    def purge_run_outputs(self, job: Job) -> int:
        """Delete ``jobs/<job id>/``: every run's projection and detection."""
        return self.artifacts.delete_prefix(job_prefix(job.job_id))

    def release_parse_artifacts(self, job: Job) -> tuple[int, bool]:
        """The job stops using its bytes' parse artifacts; they are deleted when no other
        job uses them: (objects deleted, whether they are kept for other jobs)."""
        sha256 = job.source.sha256
        if sha256 is None:
            return 0, False  # never registered: its parse never touched them
        if not self.references.release(sha256, job.job_id):
            return 0, True
        token = self.references.begin_purge(sha256)
        if token is None:
            if self.references.users(sha256):
                return 0, True
            # Another purge is deleting them right now; a job's late write may not be in
            # what it listed, so this purge must run once that one is over.
            raise Transient(f"{digest_prefix(sha256)} is being deleted by another purge")
        try:
            return self.artifacts.delete_prefix(digest_prefix(sha256)), False
        finally:
            self.references.end_purge(sha256, token)

    def discard_if_deleted(self, job_id: str, wrote: Written) -> None:
        """After a stage's work: if the job was deleted meanwhile, delete what the stage
        writes (``wrote``: it may have come after the deletion's own purge) and stop the
        run with StaleRun."""
        job = self.jobs.get(job_id)
        if job is None or job.status is not JobStatus.DELETED:
            return
        if wrote == "parse_artifacts":
            self.release_parse_artifacts(job)
        else:
            self.purge_run_outputs(job)
        raise StaleRun(f"job {job_id} was deleted while this step ran; its output is deleted")

    def source_removed(self, removed: RemovedObject) -> list[Job]:
        """Delete the jobs of the object versions a removal notification is about."""
        reason = f"s3:{removed.event} of s3://{removed.bucket}/{removed.key}"
        if not removed.delete_marker:
            if removed.version_id is None:
                return []  # an unversioned bucket's object: no version names its job
            job_id = job_id_for(removed.bucket, removed.key, removed.version_id)
            # A version deleted before its creation notification was handled has no job
            # yet: it gets a DELETED record, so that notification starts nothing.
            source = SourceObject(
                bucket=removed.bucket, key=removed.key, version_id=removed.version_id
            )
            deleted = self.delete_job(
                job_id,
                by="source-removed",
                reason=f"{reason} version {removed.version_id}",
                source=source,
            )
            return [deleted.job] if deleted is not None else []
        jobs = []
        for version in self.artifacts.source_versions(removed.bucket, removed.key):
            source = SourceObject(bucket=removed.bucket, key=removed.key, version_id=version)
            deleted = self.delete_job(
                job_id_for(removed.bucket, removed.key, version),
                by="source-removed",
                reason=f"{reason}: a delete marker hides version {version}",
                source=source,
            )
            if deleted is not None:
                jobs.append(deleted.job)
        return jobs
