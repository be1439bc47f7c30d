"""Each successful run's outputs, kept with its document for as long as its version exists.

The pipeline writes a run's outputs under ``jobs/<job id>/run-NNN/`` and its parse
artifact under ``docling/<sha256>/``: a working store that the results bucket's lifecycle
expires (``JobRetentionDays``, ``ParseArtifactRetentionDays``), while a document's
manifest may name its result for years. So the notifier copies each successful run's
outputs (the DoclingDocument, projection, detection, chunks, Markdown and table CSVs) to
``documents/<document id>/<job id>/run-NNN/``, named as ``richdoc run --out`` names
them (``OUTPUT_FILES``, ``OUTPUT_FOLDERS``), before the manifest and the completion event
name them (``kept_keys``): no lifecycle rule touches ``documents/``, and what a manifest
names lives as long as the manifest.

A job keeps one run there: once a later run of it succeeds and the manifest names that
one, the notifier deletes the older runs' folders (``ResultCopies.prune``); a later run
that waits, runs or fails leaves the latest success where it is.

The copies of a job go with the job: when it is DELETED (its version deleted, or expired
by the ingest bucket's lifecycle, or an operator's ``richdoc jobs delete``), the notifier
deletes ``documents/<document id>/<job id>/`` once the manifest no longer names it. A
copy made by a refresh that raced that deletion is deleted by the refresh itself: it
reads the job again after copying (``ResultCopies.keep``); and a success handled only
after its job was deleted, its working copies gone with it, keeps nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from richdoc.artifacts import ArtifactStore
from richdoc.awserrors import aws_errors
from richdoc.contracts import OUTPUT_FILES, OUTPUT_FOLDERS
from richdoc.jobs import Job, JobStatus, JobStore
from richdoc.taxonomy import Transient
from richdoc_client.identity import document_id
from richdoc_client.manifest import MANIFEST_PREFIX
from richdoc_client.results import ResultKeys

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})


def job_results_prefix(job: Job) -> str:
    """``documents/<document id>/<job id>/``: every kept run of the job."""
    return f"{MANIFEST_PREFIX}{document_id(job.source.bucket, job.source.key)}/{job.job_id}/"


def kept_run_prefix(job: Job, run: int) -> str:
    """``documents/<document id>/<job id>/run-NNN/``: one kept run of the job."""
    return f"{job_results_prefix(job)}run-{run:03d}/"


def kept_keys(job: Job, results_bucket: str) -> ResultKeys | None:
    """Where the job's latest successful run's outputs are kept with its document (while
    a later run waits, runs or fails too: ``Job.result_run``); None before any run
    succeeded. Pure."""
    run = job.result_run
    if run is None or job.outputs is None:
        return None
    prefix = kept_run_prefix(job, run)
    written = job.outputs
    files = {field: f"{prefix}{name}" for field, name in OUTPUT_FILES.items()}
    folders = {field: f"{prefix}{name}/" for field, name in OUTPUT_FOLDERS.items()}
    kept = {field: key for field, key in (files | folders).items() if getattr(written, field)}
    return ResultKeys(bucket=results_bucket, **kept)


def written_keys(job: Job, results_bucket: str) -> ResultKeys | None:
    """Where a succeeded job's run wrote its outputs (``jobs/<job id>/run-NNN/``, the
    working copies the tools read); None before it succeeded. Pure."""
    if job.status is not JobStatus.SUCCEEDED or job.outputs is None:
        return None
    return ResultKeys(bucket=results_bucket, **job.outputs.model_dump())


class ResultCopies:
    """Copies succeeded runs' outputs next to their document's manifest, and deletes them."""

    def __init__(self, *, s3: S3Client, jobs: JobStore, results_bucket: str) -> None:
        self.s3 = s3
        self.jobs = jobs
        self.results_bucket = results_bucket
        self.artifacts = ArtifactStore(s3, results_bucket)
        self._kept: set[tuple[str, int]] = set()  # runs this instance has copied

    def keep(self, job: Job) -> ResultKeys | None:
        """Copy the outputs of the job's latest success to ``kept_keys`` (again, if they
        are there: a copy is idempotent); None for a job without one. If the job was
        deleted meanwhile, the copies are deleted again and None is returned."""
        kept, run = kept_keys(job, self.results_bucket), job.result_run
        if kept is None or job.outputs is None or run is None:
            return None
        if (job.job_id, run) in self._kept:
            return kept
        written = job.outputs
        try:
            for field in OUTPUT_FILES:
                source, target = getattr(written, field), getattr(kept, field)
                if source and target:
                    self._copy(source, target)
            tables = job.counts.tables if job.counts is not None else None
            if written.tables_prefix and kept.tables_prefix:
                self._copy_folder(written.tables_prefix, kept.tables_prefix, expected=tables)
        except Transient:
            # A working copy that is gone: deleted with its job (the source deleted before
            # this success was handled), or expired; only the second is worth a retry.
            if not self._deleted(job):
                raise
        if self._deleted(job):
            self.discard(job)
            return None
        self._kept.add((job.job_id, run))
        return kept

    def _deleted(self, job: Job) -> bool:
        now = self.jobs.get(job.job_id)
        return now is None or now.status is JobStatus.DELETED

    def discard(self, job: Job) -> int:
        """Delete every kept run of the job; how many objects there were."""
        return self.artifacts.delete_prefix(job_results_prefix(job))

    def prune(self, job: Job) -> list[int]:
        """Delete the job's kept runs older than its latest success as the record says
        now (read again: the stream's image may be of an older run); which runs went.
        Called once the manifest no longer names them, so what a consumer reads through
        the manifest stays."""
        now = self.jobs.get(job.job_id)
        current = now.result_run if now is not None else None
        if now is None or current is None:
            return []
        older = [run for run in self._kept_runs(now) if run < current]
        for run in older:
            self.artifacts.delete_prefix(kept_run_prefix(now, run))
            self._kept.discard((now.job_id, run))
        return older

    def _kept_runs(self, job: Job) -> list[int]:
        """The runs of the job that have a folder under ``job_results_prefix``."""
        prefix, runs = job_results_prefix(job), []
        with aws_errors(f"listing s3://{self.results_bucket}/{prefix}"):
            for page in self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.results_bucket, Prefix=prefix, Delimiter="/"
            ):
                for folder in page.get("CommonPrefixes", []):
                    name = folder.get("Prefix", "").removeprefix(prefix).rstrip("/")
                    number = name.removeprefix("run-")
                    if name.startswith("run-") and number.isdigit():
                        runs.append(int(number))
        return runs

    def _copy(self, source: str, target: str) -> None:
        bucket = self.results_bucket
        try:
            with aws_errors(f"copying s3://{bucket}/{source} to {target}"):
                self.s3.copy_object(
                    Bucket=bucket, Key=target, CopySource={"Bucket": bucket, "Key": source}
                )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in _MISSING:
                raise
            # The working copy has expired; the kept one may already be there (a
            # republish of an old success).
            if not self._exists(target):
                raise Transient(
                    f"s3://{bucket}/{source} is gone and was never kept as {target}"
                ) from exc

    def _copy_folder(self, source: str, target: str, *, expected: int | None) -> None:
        """Copy every object under ``source`` to the same name under ``target``; at least
        ``expected`` of them must be kept (a working copy that expired before its first
        copy is ``Transient``, as a file's is)."""
        names = self._names(source)
        for name in names:
            self._copy(source + name, target + name)
        if expected and len(names) < expected and len(self._names(target)) < expected:
            raise Transient(
                f"s3://{self.results_bucket}/{source} holds {len(names)} of its {expected} "
                f"objects, and {target} was never kept"
            )

    def _names(self, prefix: str) -> list[str]:
        """The names of the objects under ``prefix`` (the rest of their keys)."""
        names = []
        with aws_errors(f"listing s3://{self.results_bucket}/{prefix}"):
            for page in self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.results_bucket, Prefix=prefix
            ):
                names += [obj["Key"].removeprefix(prefix) for obj in page.get("Contents", [])]
        return names

    def _exists(self, key: str) -> bool:
        try:
            with aws_errors(f"checking s3://{self.results_bucket}/{key}"):
                self.s3.head_object(Bucket=self.results_bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return False
            raise
        return True
