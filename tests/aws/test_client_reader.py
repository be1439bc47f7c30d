"""The richdoc-client distribution on its own: built as a wheel, installed into a fresh
environment without docling, docling-core or the richdoc package, and reading results
through its reader, from S3 (moto, served on 127.0.0.1) and from a directory copy."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from richdoc_client.chunking import build_chunks, chunks_jsonl
from richdoc_client.events import TerminalStatus
from richdoc_client.manifest import Manifest
from richdoc_client.projection import Projection
from richdoc_client.tables import read_table_csv
from tests.support.client_venv import build_wheel, fresh_venv, requirements_of
from tests.support.consumer_examples import ARTIFACT_BUCKET, CONSUMERS, JOB, outputs, source
from tests.support.paths import DATA, ROOT

CONSUMER = ROOT / "tests" / "support" / "client_consumer.py"
GOLDEN = DATA / "golden" / "pages_bbox"
DETECTION = DATA / "golden_detection" / "price-notice.detection.json"


@pytest.fixture(scope="module")
def client_python(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("client")
    return fresh_venv(root, build_wheel(root))


def _bucket_objects() -> dict[str, bytes]:
    """A results bucket: two documents' manifests, the outputs of the one with a result."""
    current = Manifest.model_validate_json((CONSUMERS / "manifest-current.json").read_bytes())
    broken = source("contracts/broken.pdf")
    failed = Manifest(
        document_id=broken.document_id, source=broken, job_id=JOB, run=2,
        status=TerminalStatus.DEAD_LETTERED, result=None, metadata={},
    )  # fmt: skip
    projection = (GOLDEN / "projection.json").read_bytes()
    chunks = build_chunks(
        Projection.model_validate_json(projection), document_id=current.document_id
    )
    keys = outputs()
    assert keys.chunks_key and keys.markdown_key and keys.tables_prefix
    csvs = {path.name: path.read_bytes() for path in sorted((GOLDEN / "tables").glob("*.csv"))}
    return {
        current.key: current.to_json_bytes(),
        failed.key: failed.to_json_bytes(),
        keys.projection_key: projection,
        keys.detection_key: DETECTION.read_bytes(),
        keys.chunks_key: chunks_jsonl(chunks),
        keys.markdown_key: (GOLDEN / "document.md").read_bytes(),
        **{keys.tables_prefix + name: data for name, data in csvs.items()},
        keys.tables_prefix + "notes.txt": b"not a table: the listing skips it",
        "documents/README.txt": b"not a manifest: the listing skips it",
    }


def _expected() -> dict[str, object]:
    objects = _bucket_objects()
    keys = outputs()
    assert keys.chunks_key is not None
    return {
        "projection": hashlib.sha256(objects[keys.projection_key]).hexdigest(),
        "detection": hashlib.sha256(objects[keys.detection_key]).hexdigest(),
        "chunks": hashlib.sha256(objects[keys.chunks_key]).hexdigest(),
        "markdown": hashlib.sha256((GOLDEN / "document.md").read_bytes()).hexdigest(),
        "tables": {
            path.name: read_table_csv(path.read_bytes()).records()
            for path in sorted((GOLDEN / "tables").glob("*.csv"))
        },
    }


def _consume(python: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    result = subprocess.run(
        [str(python), str(CONSUMER), *args],
        capture_output=True, text=True, check=False, cwd="/",
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _check(found: dict) -> None:
    assert found["importable"] == []  # no docling, no docling-core, no richdoc package
    [succeeded] = [d for d in found["documents"].values() if d["status"] == "SUCCEEDED"]
    [failed] = [d for d in found["documents"].values() if d["status"] == "DEAD_LETTERED"]
    # Read as typed models and written back, every output is byte-identical.
    keys = ("projection", "detection", "chunks", "markdown", "tables")
    assert {k: succeeded[k] for k in keys} == _expected()
    assert succeeded["chunk_texts_slice"] is True
    assert failed == {
        "status": "DEAD_LETTERED",
        "source": "contracts/broken.pdf",
        "error": "NoSuccessfulRun",
    }
    assert found["unknown"] == "ResultNotFound"
    assert found["by_key"] in found["documents"]


@pytest.fixture
def served_bucket() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        s3 = boto3.client(
            "s3", endpoint_url=endpoint, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing",
        )  # fmt: skip
        s3.create_bucket(Bucket=ARTIFACT_BUCKET)
        for key, body in _bucket_objects().items():
            s3.put_object(Bucket=ARTIFACT_BUCKET, Key=key, Body=body)
        yield endpoint
    finally:
        server.stop()


def test_the_client_reads_the_results_bucket_without_docling(client_python, served_bucket):
    env = {
        "AWS_ENDPOINT_URL": served_bucket,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    _check(_consume(client_python, "s3", ARTIFACT_BUCKET, env=env))


def test_the_client_reads_a_directory_copy_of_the_bucket(client_python, tmp_path):
    for key, body in _bucket_objects().items():
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_bytes(body)
    _check(_consume(client_python, "directory", str(tmp_path)))


def test_the_wheel_needs_only_pydantic_and_boto3(tmp_path):
    requirements = requirements_of(build_wheel(tmp_path))
    names = sorted(r.name for r in requirements if r.marker is None)
    assert names == ["boto3", "pydantic"]
    # The loaders' frameworks only with their extras.
    extras = sorted((str(r.marker), r.name) for r in requirements if r.marker is not None)
    assert extras == [
        ('extra == "langchain"', "langchain-core"),
        ('extra == "llamaindex"', "llama-index-core"),
    ]
