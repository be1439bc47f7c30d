"""The loaders end to end: samples run through `richdoc local serve` (another process), then
the richdoc-client wheel with its ``langchain`` and ``llamaindex`` extras, in a fresh
environment that has the real langchain-core and llama-index-core and no docling,
loads every current result through the endpoint: one framework document per chunk, in
order, with the chunk's id, text and metadata; a document without a success gives none."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from richdoc_client.reader import ResultsReader
from tests.support.client_venv import build_wheel, fresh_venv
from tests.support.paths import ROOT, SAMPLES

pytestmark = [pytest.mark.e2e, pytest.mark.docling]

LOADER = ROOT / "tests" / "support" / "loader_consumer.py"
TIMEOUT_S = 180
SAMPLE_FILES = ("contract.docx", "inventory.xlsx", "team-notes.md", "broken.docx")
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "any",
    "AWS_SECRET_ACCESS_KEY": "any",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`richdoc local serve` on a free port, until the module ends."""
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "functions.log"
    command = ["local", "serve", "--port", str(port), "--log", str(log)]
    server = subprocess.Popen(
        [sys.executable, "-m", "richdoc_tools", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "listening on" in line:
                break
        else:
            pytest.fail("richdoc local serve ended before it listened")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.fixture(scope="module")
def loader_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loaders")
    return fresh_venv(root, build_wheel(root), extras=("langchain", "llamaindex"))


def _ran_samples(endpoint: str) -> tuple[str, ResultsReader]:
    session = boto3.Session(
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    cfn = session.client("cloudformation", endpoint_url=endpoint)
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cfn.describe_stacks(StackName="richdoc")["Stacks"][0]["Outputs"]
    }
    s3 = session.client("s3", endpoint_url=endpoint)
    for name in SAMPLE_FILES:
        s3.put_object(
            Bucket=outputs["IngestBucketName"], Key=name, Body=(SAMPLES / name).read_bytes()
        )
    reader = ResultsReader.s3(outputs["ArtifactBucketName"], client=s3)
    deadline = time.monotonic() + TIMEOUT_S
    while len(list(reader.documents())) < len(SAMPLE_FILES):
        assert time.monotonic() < deadline, "the samples' manifests did not all appear"
        time.sleep(0.5)
    return outputs["ArtifactBucketName"], reader


def _load(python: Path, bucket: str, endpoint: str) -> dict[str, Any]:
    result = subprocess.run(
        [str(python), str(LOADER), bucket],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "AWS_ENDPOINT_URL": endpoint, **CREDENTIALS}
        | {k: v for k, v in os.environ.items() if k == "TMPDIR"},
    )
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def test_the_loaders_turn_every_current_result_into_framework_documents(
    endpoint: str, loader_python: Path
) -> None:
    bucket, reader = _ran_samples(endpoint)
    loaded = _load(loader_python, bucket, endpoint)
    assert loaded["importable"] == []  # no docling, docling-core or richdoc there

    expected = []
    for manifest in reader.documents():
        if manifest.result is None:
            assert manifest.source.key == "broken.docx"  # dead-lettered: nothing to load
            continue
        for chunk in reader.chunks(manifest):
            expected.append((manifest, chunk))
    assert len(expected) > len(SAMPLE_FILES)

    langchain, llamaindex = loaded["langchain"], loaded["llamaindex"]
    assert [d["id"] for d in langchain] == [c.id for _, c in expected]
    assert [n["id"] for n in llamaindex] == [c.id for _, c in expected]
    for document, node, (manifest, chunk) in zip(langchain, llamaindex, expected, strict=True):
        assert document["text"] == node["text"] == chunk.text
        metadata = document["metadata"]
        assert metadata == node["metadata"]
        assert metadata["document_id"] == manifest.document_id == node["source"]
        assert metadata["version_id"] == manifest.source.version_id
        assert metadata["source_key"] == manifest.source.key
        assert metadata["heading_path"] == chunk.heading_path
        assert metadata["pages"] == chunk.pages
        assert metadata["nodes"] == chunk.nodes
        assert metadata["bboxes"] == [b.model_dump(mode="json") for b in chunk.boxes]
        assert metadata["table_node"] == (chunk.table.node if chunk.table else None)
        assert "ocr_confidence" not in metadata  # no sample was read by OCR
        # Identifiers and locations stay out of what the embedding model reads (they are
        # metadata all the same); the key and the heading path are in it, with the text.
        embedded = node["embedded"]
        for key in ("document_id", "source_bucket", "version_id", "sha256", "bboxes", "nodes"):
            assert f"{key}: " not in embedded, key
        for value in (manifest.document_id, manifest.source.version_id, manifest.source.bucket):
            assert value is None or value not in embedded
        assert f"source_key: {manifest.source.key}" in embedded and chunk.text in embedded
    # Within one document the nodes link in order.
    first = [n for n in llamaindex if n["source"] == llamaindex[0]["source"]]
    assert [n["previous"] for n in first[1:]] == [n["id"] for n in first[:-1]]
    assert [n["next"] for n in first[:-1]] == [n["id"] for n in first[1:]]
    assert first[0]["previous"] is None and first[-1]["next"] is None
    assert any(d["metadata"]["table_node"] is not None for d in langchain)  # the sheet's rows
