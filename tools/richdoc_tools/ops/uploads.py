"""Dropping a file into the ingest bucket, as ``aws s3 cp`` does, and the job it becomes.

Every way the tools upload (``richdoc run``, the embedded stack's users, the console's
drop zone) puts the object the same way: one PUT with the ``richdoc-clarify`` user
metadata the starter reads. The job id follows from what the PUT answers: the object's
version id (its ETag in an unversioned bucket).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from richdoc.ingest import CLARIFY_METADATA_KEY
from richdoc.jobs import job_id_for

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

    from richdoc_tools.ops.operator import Operator


@dataclass(frozen=True)
class Upload:
    bucket: str
    key: str
    version_id: str | None
    job_id: str


def clarify_metadata(clarify: bool) -> dict[str, str]:
    """The object metadata that asks for (or against) temporal ambiguities."""
    return {CLARIFY_METADATA_KEY: "true" if clarify else "false"}


def put_source(
    s3: S3Client,
    bucket: str,
    key: str,
    body: bytes | IO[bytes],
    metadata: Mapping[str, str] | None = None,
) -> Upload:
    """PUT one object into the ingest bucket; the upload and the id of its job."""
    response = s3.put_object(Bucket=bucket, Key=key, Body=body, Metadata=dict(metadata or {}))
    version = response.get("VersionId")
    etag = response["ETag"].strip('"')
    return Upload(bucket, key, version, job_id_for(bucket, key, version or etag))


def upload(operator: Operator, key: str, body: bytes | IO[bytes], *, clarify: bool) -> Upload:
    """Drop a file into the stack's ingest bucket (``aws s3 cp`` with the clarify
    metadata)."""
    return put_source(
        operator.s3, operator.resources.ingest_bucket, key, body, clarify_metadata(clarify)
    )
