"""Each document's manifest (``documents/<document id>/manifest.json`` in the results
bucket): the one stable place that says where a document's current results are.

The manifest is derived, never edited: ``current_manifest`` computes it from the object's
versions in the ingest bucket (newest first) and their jobs. Its source is the newest
version whose job has a run that ended (SUCCEEDED, DEAD_LETTERED or CANCELLED; a version
whose first run is still under way, deleted or not yet seen is passed over); its run and
status that job's latest ended run (``Job.ended``), and its result that job's latest
successful run (``Job.result_run``), or null when none of its runs succeeded: a newer
version that fails leaves no stale result behind. A later run of the same job (a
reprocess, a redrive) changes nothing while it waits or runs, and a failed one changes
the run and status, not the result. When a delete marker hides the key, or no version
has an ended job, the document has no manifest. A version whose job record has expired
(the jobs table's time to live), or was written before it recorded its ended runs, keeps
the manifest it had: the stored manifest of that same job stands.

The result's outputs are the copies kept with the document (``richdoc.document_results``),
which live as long as the version; the refresh makes sure they are there before it writes
a manifest that names them.

``ManifestKeeper.refresh`` brings the stored manifest to what the versions and jobs say
now, at every terminal change of one of the document's jobs (``richdoc.notifier``). It
walks the versions newest first and reads their jobs a few at a time, stopping at the
first that decides the manifest: a key overwritten every few minutes does not make each
refresh read every noncurrent version's job. Two refreshes of one document may run at
once (two versions' jobs ending together), and the one that computed first may write
last. So a refresh ends only when a fresh computation equals what is stored: after its
own write it computes again, and writes again when the truth has moved on. Whichever
refresh writes last has then checked its write against every change made before that
check, and every later change runs a refresh of its own: the stored manifest converges
to the truth.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError
from pydantic import ValidationError

from richdoc.awserrors import aws_errors
from richdoc.completion import result_counts, source_identity
from richdoc.document_results import ResultCopies, kept_keys
from richdoc.jobs import Job, JobStatus, JobStore, job_id_for
from richdoc.taxonomy import Transient
from richdoc_client.events import TerminalStatus
from richdoc_client.identity import document_id
from richdoc_client.manifest import Manifest, ManifestResult, ManifestStatus, manifest_key

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_s3.type_defs import ListObjectVersionsOutputTypeDef

# How a version's job's run ended, as a manifest shows it (``ENDED_STATUSES``).
ENDED: dict[JobStatus, ManifestStatus] = {
    JobStatus.SUCCEEDED: TerminalStatus.SUCCEEDED,
    JobStatus.DEAD_LETTERED: TerminalStatus.DEAD_LETTERED,
    JobStatus.CANCELLED: TerminalStatus.CANCELLED,
}
# Computations a refresh makes before it gives up (and its record is retried).
MAX_ROUNDS = 5
# How many versions' jobs each read fetches, newest first: the newest version usually
# decides, and a long history is read in growing batches (BatchGetItem takes 100).
JOB_BATCHES = (1, 4, 16, 64, 100)


@dataclass(frozen=True)
class ObjectVersion:
    """One version of the object, as ListObjectVersions names it."""

    version_id: str | None  # None in an unversioned bucket (S3 says "null")
    etag: str | None

    @property
    def version(self) -> str:
        """What the job id is derived from: the version id, else the ETag (as the
        starter does)."""
        return self.version_id or self.etag or ""


@dataclass(frozen=True)
class ObjectVersions:
    """The versions of one object key, newest first, and whether a delete marker is its
    current version."""

    bucket: str
    key: str
    versions: Sequence[ObjectVersion]
    deleted: bool

    def job_ids(self) -> list[str]:
        return [job_id_for(self.bucket, self.key, v.version) for v in self.versions]


def version_manifest(
    bucket: str,
    key: str,
    version: ObjectVersion,
    job: Job | None,
    results_bucket: str,
    stored: Manifest | None = None,
) -> Manifest | None:
    """The manifest one version gives the document; None when the version is passed
    over (no run of its job has ended, it is deleted, or it was never recorded)."""
    if job is not None and job.status is JobStatus.DELETED:
        return None
    ended = job.ended() if job is not None else None
    if job is None or ended is None:
        # Its record expired, or predates ``last_end``, after the manifest named it:
        # that manifest stands.
        if stored is not None and stored.job_id == job_id_for(bucket, key, version.version):
            return stored
        return None
    outputs, counts, run = kept_keys(job, results_bucket), result_counts(job), job.result_run
    result = (
        ManifestResult(run=run, outputs=outputs, counts=counts)
        if outputs is not None and counts is not None and run is not None
        else None
    )
    return Manifest(
        document_id=document_id(bucket, key),
        source=source_identity(job),
        job_id=job.job_id,
        run=ended.run,
        status=ENDED[ended.status],
        result=result,
        metadata=job.metadata or {},
    )


def current_manifest(
    versions: ObjectVersions,
    jobs: Mapping[str, Job],
    results_bucket: str,
    stored: Manifest | None = None,
) -> Manifest | None:
    """The document's manifest by the rules above; None when it has none."""
    if versions.deleted:
        return None
    for version, job_id in zip(versions.versions, versions.job_ids(), strict=True):
        manifest = version_manifest(
            versions.bucket, versions.key, version, jobs.get(job_id), results_bucket, stored
        )
        if manifest is not None:
            return manifest
    return None


class ManifestKeeper:
    """Keeps the stored manifests equal to ``current_manifest``."""

    def __init__(
        self,
        *,
        s3: S3Client,
        jobs: JobStore,
        results_bucket: str,
        copies: ResultCopies | None = None,
    ) -> None:
        self.s3 = s3
        self.jobs = jobs
        self.results_bucket = results_bucket
        self.copies = copies or ResultCopies(s3=s3, jobs=jobs, results_bucket=results_bucket)

    def refresh(self, bucket: str, key: str) -> Manifest | None:
        """Store the document's manifest as it is now (delete it when it has none) and
        return it. Transient when the document kept changing under the refresh."""
        at = manifest_key(document_id(bucket, key))
        for _ in range(MAX_ROUNDS):
            stored_bytes = self._stored(at)
            stored = _parsed(stored_bytes)
            wanted, job = self.compute(bucket, key, stored)
            wanted_bytes = wanted.to_json_bytes() if wanted is not None else None
            if stored_bytes == wanted_bytes:
                return wanted
            if wanted is None or wanted_bytes is None:
                with aws_errors(f"deleting s3://{self.results_bucket}/{at}"):
                    self.s3.delete_object(Bucket=self.results_bucket, Key=at)
                continue
            if job is not None and self.copies.keep(job) is None and wanted.result is not None:
                continue  # the job was deleted while its outputs were kept: compute again
            with aws_errors(f"writing s3://{self.results_bucket}/{at}"):
                self.s3.put_object(
                    Bucket=self.results_bucket,
                    Key=at,
                    Body=wanted_bytes,
                    ContentType="application/json",
                )
        raise Transient(f"the manifest {at} changed {MAX_ROUNDS} times while it was refreshed")

    def compute(
        self, bucket: str, key: str, stored: Manifest | None = None
    ) -> tuple[Manifest | None, Job | None]:
        """The document's manifest now, and the job it names (None when the stored
        manifest stands, or there is none)."""
        deleted, versions = self._listing(bucket, key)
        if deleted:
            return None, None
        for batch in _batches(versions):
            ids = [job_id_for(bucket, key, v.version) for v in batch]
            jobs = self.jobs.get_many(ids)
            for version, job_id in zip(batch, ids, strict=True):
                job = jobs.get(job_id)
                manifest = version_manifest(bucket, key, version, job, self.results_bucket, stored)
                if manifest is not None:
                    return manifest, (None if manifest is stored else job)
        return None, None

    def versions(self, bucket: str, key: str) -> ObjectVersions:
        """The key's versions, newest first (S3 lists each key's versions so)."""
        deleted, versions = self._listing(bucket, key)
        return ObjectVersions(bucket=bucket, key=key, versions=list(versions), deleted=deleted)

    def _listing(self, bucket: str, key: str) -> tuple[bool, Iterator[ObjectVersion]]:
        """Whether a delete marker is the key's current version, and its versions newest
        first, listed page by page as they are taken. A current delete marker is the
        key's newest entry, so it is on the first page."""
        pages = self._pages(bucket, key)
        first = next(pages, None)
        if first is None:
            return False, iter(())
        deleted = any(
            marker.get("Key") == key and marker.get("IsLatest")
            for marker in first.get("DeleteMarkers", [])
        )
        return deleted, _versions_of(key, _chain_pages(first, pages))

    def _pages(self, bucket: str, key: str) -> Iterator[ListObjectVersionsOutputTypeDef]:
        what = f"listing the versions of s3://{bucket}/{key}"
        paginator = self.s3.get_paginator("list_object_versions")
        with aws_errors(what):
            pages = iter(paginator.paginate(Bucket=bucket, Prefix=key))
        while True:
            with aws_errors(what):
                page = next(pages, None)
            if page is None:
                return
            yield page
            # Keys are listed in order: past ours, nothing more of it follows.
            listed = [v.get("Key", "") for v in page.get("Versions", [])]
            if listed and listed[-1] > key:
                return

    def _stored(self, at: str) -> bytes | None:
        try:
            with aws_errors(f"reading s3://{self.results_bucket}/{at}"):
                body: bytes = self.s3.get_object(Bucket=self.results_bucket, Key=at)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return body


def _parsed(stored: bytes | None) -> Manifest | None:
    if stored is None:
        return None
    try:
        return Manifest.model_validate_json(stored)
    except ValidationError:
        return None  # not a manifest this version reads: it is rewritten


def _chain_pages(
    first: ListObjectVersionsOutputTypeDef, rest: Iterator[ListObjectVersionsOutputTypeDef]
) -> Iterator[ListObjectVersionsOutputTypeDef]:
    yield first
    yield from rest


def _versions_of(
    key: str, pages: Iterable[ListObjectVersionsOutputTypeDef]
) -> Iterator[ObjectVersion]:
    for page in pages:
        for version in page.get("Versions", []):
            if version.get("Key") != key:
                continue
            version_id = version.get("VersionId")
            yield ObjectVersion(
                version_id=None if version_id in (None, "null") else version_id,
                etag=str(version.get("ETag", "")).strip('"') or None,
            )


def _batches(versions: Iterator[ObjectVersion]) -> Iterator[list[ObjectVersion]]:
    """The versions in batches of JOB_BATCHES' sizes (the last size repeats)."""
    sizes = iter(JOB_BATCHES)
    size = next(sizes)
    while True:
        batch = [version for _, version in zip(range(size), versions, strict=False)]
        if not batch:
            return
        yield batch
        size = next(sizes, size)
