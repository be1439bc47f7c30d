"""Where artifacts live in S3, and the small amount of S3 I/O every step shares.

Layout of the artifact bucket::

    docling/<sha256>/<contract>.json          DoclingDocument, reusable across jobs: the same
                                              bytes under the same processor contract
                                              (docling version, pipeline, options) parse once
    docling/<sha256>/<contract>/pages-<s>-<e>.json
                                              one page-range shard of a large PDF (pages s to
                                              e, 1-based, inclusive), reusable the same way:
                                              a redrive re-parses only the missing shards
    docling/<sha256>/<contract>/shards-<n>.json
                                              the merge of the document's n shards
    jobs/<job_id>/run-<NNN>/projection.json   per run, so a re-upload or a redrive never
    jobs/<job_id>/run-<NNN>/chunks.jsonl      serves another run's output
    jobs/<job_id>/run-<NNN>/document.md       the document as Markdown
    jobs/<job_id>/run-<NNN>/tables/table-<node>.csv
                                              one CSV per TABLE node of the projection
    jobs/<job_id>/run-<NNN>/detection.json
    documents/<document_id>/manifest.json     a document's current results (written by the
                                              notifier: richdoc.manifests)

States pass only these keys, never the documents. Deleting a job deletes its
``jobs/<job_id>/`` and, when no other job uses them, its bytes' ``docling/<sha256>/``
(``richdoc.deletion``); lifecycle rules expire both prefixes (template.yaml).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from richdoc.awserrors import aws_errors
from richdoc.contracts import PageSpan, SourceObject
from richdoc.taxonomy import CorruptInput, SourceAccessDenied, Transient, UnsupportedFeature
from richdoc_client.tables import TABLES_FOLDER

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

ARTIFACT_BUCKET_ENV = "ARTIFACT_BUCKET"
MIB = 1 << 20
# One PutObject takes at most 5 GB, and tiers 2 and 3 can build a bigger DoclingDocument
# JSON: above this size an artifact goes up as a multipart upload (S3 allows 10,000 parts,
# 640 GB at this part size), its parts several at a time.
MULTIPART_THRESHOLD = 64 * MIB
TRANSFER = TransferConfig(
    multipart_threshold=MULTIPART_THRESHOLD, multipart_chunksize=MULTIPART_THRESHOLD
)

_MISSING_SOURCE_CODES = frozenset({"NoSuchKey", "NoSuchVersion", "404", "NotFound"})
_DENIED_CODES = frozenset({"AccessDenied", "403"})
_MISSING_ARTIFACT_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
# S3 metadata of a stored DoclingDocument: what a cache hit reports without reading it.
META_PIPELINE = "richdoc-pipeline"
META_PAGE_COUNT = "richdoc-pages"


def docling_key(sha256: str, contract: str, pages: PageSpan | None = None) -> str:
    """The DoclingDocument of the whole document, or of one page-range shard of it. The
    page range is part of the key, not of the contract, so whole-document artifacts keep
    their keys whether or not sharding is on."""
    if pages is None:
        return f"docling/{sha256}/{contract}.json"
    return f"docling/{sha256}/{contract}/{pages.key_name}.json"


def merged_key(sha256: str, contract: str, shards: int) -> str:
    """The merge of a document's ``shards`` page-range shards. Apart from the
    whole-document key: the merge equals the whole-document conversion in its projection,
    and for the native pipeline byte for byte, but the cache stores what each path made."""
    return f"docling/{sha256}/{contract}/shards-{shards}.json"


def run_prefix(job_id: str, run: int) -> str:
    return f"jobs/{job_id}/run-{run:03d}/"


def run_of(key: str) -> int | None:
    """The run whose outputs a key of ``run_prefix`` is under; None for other keys."""
    parts = key.split("/")
    if len(parts) < 4 or parts[0] != "jobs" or not parts[2].startswith("run-"):
        return None
    number = parts[2].removeprefix("run-")
    return int(number) if number.isdigit() else None


def job_prefix(job_id: str) -> str:
    """Every run's outputs of a job."""
    return f"jobs/{job_id}/"


def digest_prefix(sha256: str) -> str:
    """Every parse artifact of one document's bytes (any contract, whole or shards)."""
    return f"docling/{sha256}/"


def digest_of(key: str) -> str | None:
    """The content digest a parse artifact's key is stored under; None for other keys."""
    folder, _, rest = key.partition("/")
    sha256 = rest.partition("/")[0]
    return sha256 if folder == "docling" and rest.count("/") >= 1 and sha256 else None


def contract_of(key: str) -> str | None:
    """The processor contract a parse artifact's key is stored under (whole, a shard or a
    merge); None for other keys."""
    if digest_of(key) is None:
        return None
    contract = key.split("/")[2]
    return contract.removesuffix(".json") or None


def projection_key(job_id: str, run: int) -> str:
    return run_prefix(job_id, run) + "projection.json"


def detection_key(job_id: str, run: int) -> str:
    return run_prefix(job_id, run) + "detection.json"


def chunks_key(job_id: str, run: int) -> str:
    return run_prefix(job_id, run) + "chunks.jsonl"


def markdown_key(job_id: str, run: int) -> str:
    return run_prefix(job_id, run) + "document.md"


def tables_prefix(job_id: str, run: int) -> str:
    return run_prefix(job_id, run) + TABLES_FOLDER


@dataclass(frozen=True)
class Downloaded:
    path: Path
    sha256: str
    size: int


class ArtifactStore:
    """The artifact bucket, plus reading source objects from the ingest bucket.

    ``uses_digest``, when given, is called with a parse artifact's digest before this
    store first reads or writes one of its keys (``docling/<sha256>/...``): a job's store
    registers the job as a user of them there (``richdoc.jobs.references``), so that
    deleting another job with the same bytes keeps them.
    """

    def __init__(
        self,
        s3: S3Client,
        bucket: str,
        transfer: TransferConfig = TRANSFER,
        *,
        uses_digest: Callable[[str], None] | None = None,
    ) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.transfer = transfer
        self.uses_digest = uses_digest
        self._digests: set[str] = set()

    def for_user(self, uses_digest: Callable[[str], None]) -> ArtifactStore:
        """The same bucket, calling ``uses_digest`` before a digest's artifacts are used."""
        return ArtifactStore(self.s3, self.bucket, self.transfer, uses_digest=uses_digest)

    def _using(self, key: str) -> None:
        sha256 = digest_of(key)
        if self.uses_digest is None or sha256 is None or sha256 in self._digests:
            return
        self.uses_digest(sha256)
        self._digests.add(sha256)

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under ``prefix``; how many there were."""
        deleted = 0
        where = f"s3://{self.bucket}/{prefix}"
        with aws_errors(f"deleting {where}"):
            for page in self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            ):
                keys = [obj["Key"] for obj in page.get("Contents", [])]
                if not keys:
                    continue
                answer = self.s3.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True},
                )
                if answer.get("Errors"):
                    first = answer["Errors"][0]
                    raise Transient(f"deleting {where}: {first.get('Code')} for {first.get('Key')}")
                deleted += len(keys)
        return deleted

    @classmethod
    def from_env(cls, s3: S3Client) -> ArtifactStore:
        return cls(s3, os.environ[ARTIFACT_BUCKET_ENV])

    def get_bytes(self, key: str) -> bytes:
        self._using(key)
        with aws_errors(f"reading s3://{self.bucket}/{key}"):
            body: bytes = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        return body

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/json") -> None:
        self._upload(key, data, {"ContentType": content_type})

    def _upload(self, key: str, body: bytes | BinaryIO, extra: dict[str, Any]) -> None:
        """One PutObject up to the transfer's threshold, a multipart upload above it."""
        fileobj = io.BytesIO(body) if isinstance(body, bytes) else body
        with aws_errors(f"writing s3://{self.bucket}/{key}"):
            self.s3.upload_fileobj(fileobj, self.bucket, key, ExtraArgs=extra, Config=self.transfer)

    def docling_page_count(self, key: str) -> int | None:
        """The page count recorded on a stored DoclingDocument; None when there is none
        (a cache miss)."""
        self._using(key)
        with aws_errors(f"checking s3://{self.bucket}/{key}"):
            try:
                head = self.s3.head_object(Bucket=self.bucket, Key=key)
            except ClientError as exc:
                if str(exc.response.get("Error", {}).get("Code")) in _MISSING_ARTIFACT_CODES:
                    return None
                raise
        return int(head.get("Metadata", {}).get(META_PAGE_COUNT, 0))

    def put_docling(
        self, key: str, body: bytes | BinaryIO, *, pipeline: str, page_count: int | None
    ) -> None:
        """Store a DoclingDocument with the metadata a later cache hit reports."""
        self._using(key)
        metadata = {META_PIPELINE: pipeline, META_PAGE_COUNT: str(page_count or 0)}
        self._upload(key, body, {"ContentType": "application/json", "Metadata": metadata})

    def source_versions(self, bucket: str, key: str) -> list[str]:
        """The ids of the object versions (not delete markers) a versioned bucket keeps
        under ``key``."""
        versions: list[str] = []
        with aws_errors(f"listing the versions of s3://{bucket}/{key}"):
            for page in self.s3.get_paginator("list_object_versions").paginate(
                Bucket=bucket, Prefix=key
            ):
                versions.extend(
                    str(v["VersionId"])
                    for v in page.get("Versions", [])
                    if v.get("Key") == key and v.get("VersionId") not in (None, "null")
                )
        return versions

    def download_source(
        self, source: SourceObject, dest: Path, *, max_bytes: int | None = None
    ) -> Downloaded:
        """Stream the source object to local storage, hashing it on the way.

        An object larger than ``max_bytes`` is refused from the response headers, before
        any of its body is read: it could not fit the function's local storage.
        """
        digest = hashlib.sha256()
        size = 0
        where = f"s3://{source.bucket}/{source.key}"
        if source.version_id:
            where += f" version {source.version_id}"
        with aws_errors(f"reading {where}"):
            try:
                response = self.s3.get_object(**source.get_kwargs())
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code"))
                if code in _MISSING_SOURCE_CODES:
                    raise CorruptInput(f"source object {where} no longer exists") from exc
                if code in _DENIED_CODES:
                    raise SourceAccessDenied(
                        f"reading the source object {where} was denied ({code}): the "
                        "function's role, the bucket policy or the object's KMS key does "
                        "not let the pipeline read it (without s3:ListBucket on the bucket, "
                        "a deleted object reads this way too)"
                    ) from exc
                raise
            body = response["Body"]
            length = response.get("ContentLength")
            if max_bytes is not None and length is not None and length > max_bytes:
                body.close()
                raise too_large(length, max_bytes)
            with dest.open("wb") as out:
                for chunk in iter(lambda: body.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
                    if max_bytes is not None and size > max_bytes:
                        body.close()
                        raise too_large(size, max_bytes)
                    out.write(chunk)
        return Downloaded(path=dest, sha256=digest.hexdigest(), size=size)


def too_large(size: int, max_bytes: int) -> UnsupportedFeature:
    """The same refusal at every tier (they share the limit): no escalation, no retry."""
    return UnsupportedFeature(
        f"the object is {size / MIB:.1f} MiB, above the limit of max_object_mb={max_bytes // MIB}",
        feature="max_size",
    )
