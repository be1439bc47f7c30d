"""Each document's manifest (``documents/<document id>/manifest.json`` in the results
bucket): the one stable place that says where a document's current results are.

The manifest is derived, never edited: ``current_manifest`` computes it from the object's
versions in the ingest bucket (newest first) and their jobs. Its source is the newest
version whose job has finished (SUCCEEDED, DEAD_LETTERED or CANCELLED; a version still
running, deleted or not yet seen is passed over), and its result that job's successful
run, or null when the job did not succeed: a newer version that fails leaves no stale
result behind. When a delete marker hides the key, or no version has a finished job, the
document has no manifest.

``ManifestKeeper.refresh`` brings the stored manifest to what the versions and jobs say
now, at every terminal change of one of the document's jobs (``richdoc.notifier``). Two
refreshes of one document may run at once (two versions' jobs ending together), and the
one that computed first may write last. So a refresh ends only when a fresh computation
equals what is stored: after its own write it computes again, and writes again when the
truth has moved on. Whichever refresh writes last has then checked its write against
every change made before that check, and every later change runs a refresh of its own:
the stored manifest converges to the truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.completion import result_counts, result_keys, source_identity
from richdoc.jobs import Job, JobStatus, JobStore, job_id_for
from richdoc.taxonomy import Transient
from richdoc_client.events import TerminalStatus
from richdoc_client.identity import document_id
from richdoc_client.manifest import Manifest, ManifestResult, ManifestStatus, manifest_key

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# The job statuses a manifest shows: how a version's job ended, short of its deletion.
FINISHED: dict[JobStatus, ManifestStatus] = {
    JobStatus.SUCCEEDED: TerminalStatus.SUCCEEDED,
    JobStatus.DEAD_LETTERED: TerminalStatus.DEAD_LETTERED,
    JobStatus.CANCELLED: TerminalStatus.CANCELLED,
}
# Computations a refresh makes before it gives up (and its record is retried).
MAX_ROUNDS = 5


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


def current_manifest(
    versions: ObjectVersions, jobs: Mapping[str, Job], results_bucket: str
) -> Manifest | None:
    """The document's manifest by the rules above; None when it has none."""
    if versions.deleted:
        return None
    for job_id in versions.job_ids():
        job = jobs.get(job_id)
        if job is None or job.status not in FINISHED:
            continue
        outputs, counts = result_keys(job, results_bucket), result_counts(job)
        result = (
            ManifestResult(run=job.run, outputs=outputs, counts=counts)
            if outputs is not None and counts is not None
            else None
        )
        return Manifest(
            document_id=document_id(versions.bucket, versions.key),
            source=source_identity(job),
            job_id=job.job_id,
            run=job.run,
            status=FINISHED[job.status],
            result=result,
            metadata=job.metadata or {},
        )
    return None


class ManifestKeeper:
    """Keeps the stored manifests equal to ``current_manifest``."""

    def __init__(self, *, s3: S3Client, jobs: JobStore, results_bucket: str) -> None:
        self.s3 = s3
        self.jobs = jobs
        self.results_bucket = results_bucket

    def refresh(self, bucket: str, key: str) -> Manifest | None:
        """Store the document's manifest as it is now (delete it when it has none) and
        return it. Transient when the document kept changing under the refresh."""
        at = manifest_key(document_id(bucket, key))
        for _ in range(MAX_ROUNDS):
            wanted = self.compute(bucket, key)
            wanted_bytes = wanted.to_json_bytes() if wanted is not None else None
            if self._stored(at) == wanted_bytes:
                return wanted
            if wanted_bytes is None:
                with aws_errors(f"deleting s3://{self.results_bucket}/{at}"):
                    self.s3.delete_object(Bucket=self.results_bucket, Key=at)
            else:
                with aws_errors(f"writing s3://{self.results_bucket}/{at}"):
                    self.s3.put_object(
                        Bucket=self.results_bucket,
                        Key=at,
                        Body=wanted_bytes,
                        ContentType="application/json",
                    )
        raise Transient(f"the manifest {at} changed {MAX_ROUNDS} times while it was refreshed")

    def compute(self, bucket: str, key: str) -> Manifest | None:
        versions = self.versions(bucket, key)
        return current_manifest(
            versions, self.jobs.get_many(versions.job_ids()), self.results_bucket
        )

    def versions(self, bucket: str, key: str) -> ObjectVersions:
        """The key's versions, newest first (S3 lists each key's versions so)."""
        found: list[ObjectVersion] = []
        deleted = False
        with aws_errors(f"listing the versions of s3://{bucket}/{key}"):
            pages = self.s3.get_paginator("list_object_versions").paginate(
                Bucket=bucket, Prefix=key
            )
            for page in pages:
                for marker in page.get("DeleteMarkers", []):
                    if marker.get("Key") == key and marker.get("IsLatest"):
                        deleted = True
                for version in page.get("Versions", []):
                    if version.get("Key") != key:
                        continue
                    version_id = version.get("VersionId")
                    found.append(
                        ObjectVersion(
                            version_id=None if version_id in (None, "null") else version_id,
                            etag=str(version.get("ETag", "")).strip('"') or None,
                        )
                    )
                # Keys are listed in order: past ours, nothing more of it follows.
                listed = [v.get("Key", "") for v in page.get("Versions", [])]
                if listed and listed[-1] > key:
                    break
        return ObjectVersions(bucket=bucket, key=key, versions=found, deleted=deleted)

    def _stored(self, at: str) -> bytes | None:
        try:
            with aws_errors(f"reading s3://{self.results_bucket}/{at}"):
                body: bytes = self.s3.get_object(Bucket=self.results_bucket, Key=at)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return body
