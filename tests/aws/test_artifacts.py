"""The artifact bucket's shared I/O against emulated S3: artifacts above the transfer
threshold go up as multipart uploads (one PutObject takes at most 5 GB)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import boto3
import pytest
from boto3.s3.transfer import TransferConfig

from richdoc.artifacts import META_PAGE_COUNT, META_PIPELINE, MULTIPART_THRESHOLD, ArtifactStore
from richdoc.taxonomy import Transient
from tests.support.sdk_faults import client_error, failing

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

BUCKET = "artifacts"
MIB = 1 << 20
# S3's smallest part (every part but the last): a test-sized threshold.
SMALL = TransferConfig(multipart_threshold=5 * MIB, multipart_chunksize=5 * MIB)


@pytest.fixture
def s3(aws: None) -> S3Client:
    client = boto3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def _parts(s3: S3Client, key: str) -> int:
    """How many parts the object was uploaded in (1: a single PutObject)."""
    etag = s3.head_object(Bucket=BUCKET, Key=key)["ETag"].strip('"')
    return int(etag.partition("-")[2] or 1)


def test_an_artifact_above_the_threshold_goes_up_in_parts_with_its_metadata(s3: S3Client) -> None:
    store = ArtifactStore(s3, BUCKET, transfer=SMALL)
    body = bytes(range(256)) * (11 * MIB // 256)  # 11 MiB: three parts of at most 5 MiB
    store.put_docling("docling/abc/c.json", io.BytesIO(body), pipeline="native", page_count=7)
    assert _parts(s3, "docling/abc/c.json") == 3
    head = s3.head_object(Bucket=BUCKET, Key="docling/abc/c.json")
    assert head["ContentType"] == "application/json"
    assert head["Metadata"] == {META_PIPELINE: "native", META_PAGE_COUNT: "7"}
    assert store.get_bytes("docling/abc/c.json") == body
    assert store.docling_page_count("docling/abc/c.json") == 7
    store.put_bytes("jobs/j/run-001/projection.json", body)
    assert _parts(s3, "jobs/j/run-001/projection.json") == 3
    assert store.get_bytes("jobs/j/run-001/projection.json") == body


def test_an_artifact_below_the_threshold_is_one_put(s3: S3Client) -> None:
    store = ArtifactStore(s3, BUCKET, transfer=SMALL)
    store.put_docling("docling/abc/small.json", b"{}", pipeline="simple", page_count=None)
    assert _parts(s3, "docling/abc/small.json") == 1
    assert ArtifactStore(s3, BUCKET).transfer.multipart_threshold == MULTIPART_THRESHOLD
    # Well below the 5 GB a single PutObject takes, and parts S3 accepts (5 MiB to 5 GiB).
    assert 5 * MIB <= MULTIPART_THRESHOLD <= 1024 * MIB


def test_a_throttled_part_is_transient(s3: S3Client) -> None:
    store = ArtifactStore(s3, BUCKET, transfer=SMALL)
    with (
        failing(s3, "UploadPart", client_error("SlowDown", "UploadPart", 503)),
        pytest.raises(Transient, match=r"docling/abc/big\.json"),
    ):
        store.put_bytes("docling/abc/big.json", b"x" * (6 * MIB))
