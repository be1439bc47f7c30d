"""The parse Lambda handler on moto S3: the state it returns, artifact reuse, partial
results at the biggest tier, and typed failures."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, cast

import boto3
import pytest
from botocore.exceptions import ClientError
from docling_core.types.doc import DoclingDocument
from moto import mock_aws

from richdoc.artifacts import ArtifactStore, docling_key
from richdoc.contracts import JobOptions, ParseOutput, SourceObject
from richdoc.formats import DocFormat, format_of
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import parse_object, shared_worker
from richdoc.taxonomy import (
    CorruptInput,
    InternalError,
    ResourceLimit,
    Transient,
    UnsupportedFeature,
)
from richdoc.wiring import wiring
from tests.support import parse_inputs
from tests.support.aws import provision_one
from tests.support.lambda_context import FakeLambdaContext

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

ROOT = Path(__file__).resolve().parents[2]
INGEST, ARTIFACTS = "ingest", "artifacts"


def _load_handler():
    spec = importlib.util.spec_from_file_location("parse_app", ROOT / "functions/parse/app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the Lambda runtime imports it
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws(monkeypatch, template):
    for name in ("DOCLING_ARTIFACTS_PATH", "RICHDOC_PDF_PIPELINE", "RICHDOC_MEM_CEILING_MB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("ARTIFACT_BUCKET", ARTIFACTS)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=INGEST)
        s3.create_bucket(Bucket=ARTIFACTS)
        # The handler records its attempt on the job, which the state machine started.
        monkeypatch.setenv("JOBS_TABLE", provision_one(template, "JobsTable"))
        wiring.jobs.create("job-abc", SourceObject(bucket=INGEST, key="in"), JobOptions())
        wiring.jobs.mark_running("job-abc", 1, "arn:execution:job-abc-r1")
        yield s3


@pytest.fixture
def app(aws):
    return _load_handler()


def _event(key: str, *, tier: int = 1, accept_partial: bool = False, version_id=None) -> dict:
    """A parse's state input, with the conversion the plan decides for ``key``."""
    planned = ParserSettings.from_env().conversion(format_of(key))
    return {
        "job_id": "job-abc",
        "run": 1,
        "tier": tier,
        "accept_partial": accept_partial,
        "source": {"bucket": INGEST, "key": key, "version_id": version_id, "size": 1},
        "format": str(planned.format),
        "pipeline": str(planned.pipeline),
        "contract": planned.contract,
    }


def _upload(s3, tmp_path: Path, key: str, path: Path) -> None:
    s3.put_object(Bucket=INGEST, Key=key, Body=path.read_bytes())


def test_the_handler_returns_only_the_small_state_and_stores_the_document(app, aws, tmp_path):
    _upload(aws, tmp_path, "in/contract.docx", parse_inputs.docx(tmp_path / "c.docx"))
    state = app.handler(_event("in/contract.docx"), FakeLambdaContext())
    assert ParseOutput.model_validate(state).model_dump(mode="json") == state
    assert (state["pipeline"], state["cached"], state["partial"], state["failed_pages"]) == (
        "simple",
        False,
        False,
        [],
    )
    assert state["docling_key"].startswith(f"docling/{state['sha256']}/")
    stored = aws.get_object(Bucket=ARTIFACTS, Key=state["docling_key"])["Body"].read()
    assert (
        "Master services agreement"
        in DoclingDocument.model_validate_json(stored).export_to_markdown()
    )
    assert len(json.dumps(state)) < 1024


def test_identical_bytes_are_parsed_once_and_reused(app, aws, tmp_path):
    path = parse_inputs.pdf(tmp_path / "a.pdf", pages=2)
    _upload(aws, tmp_path, "one.pdf", path)
    _upload(aws, tmp_path, "elsewhere/two.pdf", path)
    first = app.handler(_event("one.pdf"), FakeLambdaContext())
    again = app.handler(_event("one.pdf", tier=2), FakeLambdaContext())
    other_key = app.handler(_event("elsewhere/two.pdf"), FakeLambdaContext())
    assert first["cached"] is False
    assert again["cached"] is other_key["cached"] is True
    assert first["docling_key"] == again["docling_key"] == other_key["docling_key"]
    assert again["page_count"] == first["page_count"] == 2 and again["pipeline"] == "light"
    listed = aws.list_objects_v2(Bucket=ARTIFACTS)["Contents"]
    assert [item["Key"] for item in listed] == [first["docling_key"]]


def test_the_parse_carries_out_the_plans_conversion_and_stores_under_its_contract(
    app, aws, tmp_path
):
    path = parse_inputs.pdf(tmp_path / "a.pdf", pages=1)
    _upload(aws, tmp_path, "a.pdf", path)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    # Planned under another processor contract (other docling versions: a deploy between
    # the plan and this parse): this worker's output would not be what it names.
    elsewhere = {**_event("a.pdf"), "contract": "0123456789abcdef"}
    with pytest.raises(InternalError, match="planned by another deployment"):
        app.handler(elsewhere, FakeLambdaContext())
    with pytest.raises(InternalError, match="the standard pipeline"):
        app.handler({**_event("a.pdf"), "pipeline": "standard"}, FakeLambdaContext())
    # Unless the cache holds that conversion already: the plan's contract names it.
    key = docling_key(sha256, "0123456789abcdef")
    ArtifactStore(aws, ARTIFACTS).put_docling(key, b"{}", pipeline="native", page_count=1)
    assert app.handler(elsewhere, FakeLambdaContext())["docling_key"] == key
    state = app.handler(_event("a.pdf"), FakeLambdaContext())
    planned = ParserSettings.from_env().conversion(DocFormat.PDF)
    assert (state["docling_key"], state["cached"]) == (docling_key(sha256, planned.contract), False)


def test_a_partial_parse_at_the_biggest_tier_is_stored_apart_and_never_reused(app, aws, tmp_path):
    path = parse_inputs.pdf_with_broken_page(tmp_path / "broken.pdf", pages=4, broken=3)
    _upload(aws, tmp_path, "broken.pdf", path)
    state = app.handler(_event("broken.pdf", tier=3, accept_partial=True), FakeLambdaContext())
    assert (state["partial"], state["failed_pages"], state["page_count"]) == (True, [3], 4)
    assert state["docling_key"].endswith("-partial.json")
    assert (
        app.handler(_event("broken.pdf", tier=3, accept_partial=True), FakeLambdaContext())[
            "cached"
        ]
        is False
    )


def test_a_corrupt_object_raises_the_lambda_error_named_corrupt_input(app, aws, tmp_path):
    _upload(aws, tmp_path, "noise.docx", parse_inputs.random_bytes(tmp_path / "n.docx"))
    with pytest.raises(CorruptInput) as info:
        app.handler(_event("noise.docx"), FakeLambdaContext())
    assert type(info.value).__name__ == "CorruptInput"


def test_an_object_deleted_before_parsing_is_corrupt_input(app, aws):
    with pytest.raises(CorruptInput, match="no longer exists"):
        app.handler(_event("gone.docx"), FakeLambdaContext())


def test_the_plan_records_the_digest_on_the_job_so_its_shards_need_not(
    app, aws, tmp_path, monkeypatch
):
    monkeypatch.setenv("RICHDOC_SHARD_PAGES", "2")
    path = parse_inputs.pdf(tmp_path / "long.pdf", pages=5)
    _upload(aws, tmp_path, "long.pdf", path)
    event = {"job_id": "job-abc", "run": 1, "source": {"bucket": INGEST, "key": "long.pdf"}}
    plan = app.plan(event, FakeLambdaContext(memory_limit_in_mb=2048, remaining_ms=300_000))
    assert plan["sharded"] and plan["shard_count"] == 3
    assert plan["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    job = wiring.jobs.get("job-abc")
    assert job is not None and (job.shards, job.source.sha256) == (3, plan["sha256"])


def test_an_object_above_max_object_mb_is_refused_before_its_body_is_read(
    app, aws, tmp_path, monkeypatch
):
    import richdoc.parse.step

    monkeypatch.setenv("RICHDOC_MAX_OBJECT_MB", "1")
    staged = tmp_path / "staged.md"
    monkeypatch.setattr(richdoc.parse.step, "staged_path", lambda workdir, fmt: staged)
    aws.put_object(Bucket=INGEST, Key="big.md", Body=b"# Big\n\n" + b"x" * (2 << 20))
    with pytest.raises(UnsupportedFeature) as info:
        app.handler(_event("big.md"), FakeLambdaContext())
    # The same at every tier: a permanent refusal, not an escalation.
    assert type(info.value).__name__ == "UnsupportedFeature"
    assert str(info.value).startswith("[max_size] the object is 2.0 MiB")
    assert not staged.exists()  # refused from the response headers: nothing written


def test_a_full_local_disk_is_a_resource_limit_for_a_bigger_tier(app, aws, tmp_path, monkeypatch):
    import richdoc.parse.step

    # /dev/full answers every write with ENOSPC, as a full /tmp does.
    monkeypatch.setattr(richdoc.parse.step, "staged_path", lambda workdir, fmt: Path("/dev/full"))
    _upload(aws, tmp_path, "in/contract.docx", parse_inputs.docx(tmp_path / "c.docx"))
    with pytest.raises(ResourceLimit, match="no space left on the local disk"):
        app.handler(_event("in/contract.docx"), FakeLambdaContext())


class ThrottledS3:
    def get_object(self, **kwargs):
        raise ClientError({"Error": {"Code": "SlowDown", "Message": "slow down"}}, "GetObject")


def test_s3_throttling_is_transient(tmp_path):
    worker = shared_worker(ParserSettings(Pipeline.NATIVE))
    with pytest.raises(Transient, match="SlowDown"):
        parse_object(
            ArtifactStore(cast(Any, ThrottledS3()), ARTIFACTS),
            SourceObject(bucket=INGEST, key="a.docx"),
            worker.settings.conversion(DocFormat.DOCX),
            ParseLimits.resolve(),
            accept_partial=False,
            worker=worker,
        )
