"""The job record's shapes: the JSON the command line prints for a job and its attempts
(``richdoc jobs show/list --json``, ``job.json`` under ``richdoc run --out``, ``attempts``
in ``richdoc run --json``) and the DynamoDB items behind them. Users' scripts read the
JSON; deployed tables hold the items."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any, get_args

import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from richdoc_tools.ops.job_document import JobDocument
from richdoc_tools.ops.uploads import Upload
from richdoc_tools.run import RunResult

from richdoc.contracts import (
    OUTPUT_FILES,
    OUTPUT_FOLDERS,
    JobCounts,
    JobOptions,
    JobOutputs,
    PageSpan,
    SourceObject,
    StepName,
)
from richdoc.jobs import (
    Attempt,
    DeadLetterMark,
    DeadLetterSender,
    Job,
    JobStatus,
    JobStore,
    attempt_key,
    job_key,
)
from richdoc.jobs.references import DigestReferences
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import COUNTS, OUTPUTS, SOURCE

NOW = "2026-01-01T00:00:00.000+00:00"


def _store(jobs_table: Any) -> JobStore:
    """A store whose clock stands still (how often a write reads it is no part of the
    shape)."""
    return JobStore(jobs_table, clock=lambda: NOW)


def _job_json(job: Job) -> dict[str, Any]:
    """A job as the command line prints it."""
    data: dict[str, Any] = json.loads(json.dumps(job.to_dict(), default=str))
    return data


def _attempt_json(attempt: Attempt) -> dict[str, Any]:
    """An attempt as `richdoc jobs show --json` prints it."""
    data: dict[str, Any] = json.loads(json.dumps(attempt.to_dict(), default=str))
    return data


def _raw_item(store: JobStore, key: dict[str, str]) -> dict[str, Any]:
    return dict(store.table.get_item(Key=key)["Item"])


def test_a_succeeded_job_and_its_attempts_print_the_same_json(jobs_table: Any) -> None:
    store = _store(jobs_table)
    assert store.create("job-1", SOURCE, JobOptions(clarify=True), message="{}", tenant="acme")
    queued = store.get("job-1")
    assert queued is not None
    assert _job_json(queued) == {
        "job_id": "job-1",
        "status": "QUEUED",
        "run": 1,
        "stage": None,
        "tier": None,
        "shards": None,
        "pipeline": None,
        "detection_rules": None,
        "source": {"bucket": "ingest", "key": "contract.docx", "version_id": "v1", "size": 10},
        "options": {"clarify": True},
        "metadata": {},
        "failure": None,
        "execution_arn": None,
        "outputs": {},
        "counts": {},
        "created_at": NOW,
        "updated_at": NOW,
        "started_at": None,
        "ended_at": None,
        "dead_letter": None,
        "pages": None,
        "cancel": None,
        "redrive": None,
        "last_end": None,
        "progress": {
            "phase": "queued",
            "tier": None,
            "shards": None,
            "shards_done": None,
            "pages_done": None,
        },
        "admission": {
            "tenant": "acme",
            "queued_at": NOW,
            "admitted_at": None,
            "slots": None,
            "released_at": None,
        },
    }
    store.mark_running("job-1", 1, "arn:execution:job-1-r1")
    store.record_shards("job-1", 1, 1)  # as the plan does
    with store.attempts.record(
        "job-1",
        1,
        "parse",
        tier=2,
        pages=PageSpan.parse("51-100"),
        memory_mb=6144,
        request_id="req-1",
    ) as attempt:
        attempt.cached = True
    DigestReferences(store.table).record_on_job("ab" * 32, "job-1")  # as the parse does
    store.succeed(
        "job-1",
        1,
        outputs=OUTPUTS,
        counts=COUNTS,
        pipeline="simple",
        page_count=12,
        detection_rules="contracts-v2",
    )
    job = store.get("job-1")
    assert job is not None
    expected_job = {
        "job_id": "job-1",
        "status": "SUCCEEDED",
        "run": 1,
        "stage": None,
        "tier": 2,
        "shards": 1,
        "pipeline": "simple",
        "detection_rules": "contracts-v2",
        "source": {
            "bucket": "ingest",
            "key": "contract.docx",
            "version_id": "v1",
            "size": 10,
            "sha256": "ab" * 32,
        },
        "options": {"clarify": True},
        "metadata": {},
        "failure": None,
        "execution_arn": "arn:execution:job-1-r1",
        "outputs": {
            "docling_key": "docling/ab/contract.json",
            "projection_key": "jobs/job-1/run-001/projection.json",
            "detection_key": "jobs/job-1/run-001/detection.json",
            "chunks_key": "jobs/job-1/run-001/chunks.jsonl",
            "markdown_key": "jobs/job-1/run-001/document.md",
            "tables_prefix": "jobs/job-1/run-001/tables/",
        },
        "counts": {
            "nodes": 3,
            "edges": 2,
            "spans": 2,
            "ambiguities": 0,
            "ambiguities_suppressed": 1,
            "chunks": 2,
            "tables": 1,
        },
        "created_at": NOW,
        "updated_at": NOW,
        "started_at": NOW,
        "ended_at": NOW,
        "dead_letter": None,
        "pages": 12,
        "cancel": None,
        "redrive": None,
        "last_end": {"run": 1, "status": "SUCCEEDED"},
        "progress": {
            "phase": "succeeded",
            "tier": None,
            "shards": None,
            "shards_done": None,
            "pages_done": None,
        },
        "admission": {
            "tenant": "acme",
            "queued_at": NOW,
            "admitted_at": None,
            "slots": None,
            "released_at": None,
        },
    }
    assert _job_json(job) == expected_job
    [stored] = store.attempts.of_job("job-1")
    expected_attempt = {
        "job_id": "job-1",
        "run": 1,
        "seq": 1,
        "stage": "parse",
        "attempt": 1,
        "outcome": "ok",
        "started_at": NOW,
        "tier": 2,
        "pages": "51-100",
        "memory_mb": 6144,
        "request_id": "req-1",
        "reason": None,
        "ended_at": NOW,
        "duration_ms": 0,
        "cached": True,
        "mem_ceiling_mb": None,
        "peak_rss_mb": None,
        "recorded_by": "handler",
    }
    # The key order too: `richdoc run --json` prints the attempts unsorted.
    assert list(_attempt_json(stored).items()) == list(expected_attempt.items())
    upload = Upload(bucket="ingest", key="contract.docx", version_id="v1", job_id="job-1")
    document = JobDocument(job=job, attempts=[stored])
    printed = RunResult.of(Path("contract.docx"), upload, document).model_dump(mode="json")
    assert [list(a.items()) for a in printed["attempts"]] == [list(expected_attempt.items())]
    assert printed["outputs"] == expected_job["outputs"]


def test_every_output_of_a_job_has_its_own_file_name() -> None:
    """What `richdoc run --out` writes and the console downloads: one file per output."""
    assert list(OUTPUT_FILES) + list(OUTPUT_FOLDERS) == list(JobOutputs.model_fields)
    names = [*OUTPUT_FILES.values(), *OUTPUT_FOLDERS.values()]
    assert len(set(names)) == len(names)
    assert OUTPUTS.files() == {
        "docling.json": OUTPUTS.docling_key,
        "projection.json": OUTPUTS.projection_key,
        "detection.json": OUTPUTS.detection_key,
        "chunks.jsonl": OUTPUTS.chunks_key,
        "document.md": OUTPUTS.markdown_key,
    }
    # A run recorded before chunks and Markdown existed has no such files.
    earlier = OUTPUTS.model_copy(update={"chunks_key": None, "markdown_key": None})
    assert list(earlier.files()) == ["docling.json", "projection.json", "detection.json"]


def test_a_dead_lettered_job_prints_its_failure_as_stored(jobs_table: Any) -> None:
    store = _store(jobs_table)
    store.create("job-1", SOURCE, JobOptions())
    store.mark_running("job-1", 1, "arn:execution:job-1-r1")
    failure = Failure(FailureKind.CORRUPT_INPUT, "not a zip")
    store.attempts.record_platform_failure("job-1", 1, "parse", 1, failure)
    store.record_failure("job-1", 1, failure)
    marked = store.mark_dead_lettered("job-1", 1, "message-1", sent_by="reconciler")
    assert marked is not None
    printed = _job_json(marked)
    # A failure and a source keep no null fields (as stored); the rest of the job does.
    assert (printed["status"], printed["failure"], printed["dead_letter"]) == (
        "DEAD_LETTERED",
        {"kind": "corrupt_input", "reason": "not a zip"},
        {"message_id": "message-1", "sent_by": "reconciler"},
    )
    assert (printed["stage"], printed["tier"], printed["ended_at"]) == (None, None, NOW)
    assert (printed["outputs"], printed["counts"]) == ({}, {})
    [added] = store.attempts.of_job("job-1")
    assert _attempt_json(added) == {
        "job_id": "job-1",
        "run": 1,
        "seq": 1,
        "stage": "parse",
        "attempt": 1,
        "outcome": "corrupt_input",
        "started_at": NOW,
        "tier": 1,
        "pages": None,
        "memory_mb": None,
        "request_id": None,
        "reason": "not a zip",
        "ended_at": NOW,
        "duration_ms": 0,
        "cached": None,
        "mem_ceiling_mb": None,
        "peak_rss_mb": None,
        "recorded_by": "state-machine",
    }


@pytest.mark.parametrize("with_feature", [False, True])
def test_the_items_keep_their_attributes(jobs_table: Any, with_feature: bool) -> None:
    store = _store(jobs_table)
    store.create(
        "job-1", SOURCE, JobOptions(), execution_arn="arn:execution:job-1-r1", tenant="acme"
    )
    waiting = _raw_item(store, job_key("job-1"))
    assert (waiting["tenant"], waiting["backlog_key"]) == ("acme", f"{NOW}#job-1")
    store.mark_running("job-1", 1, "arn:execution:job-1-r1")
    with store.attempts.record("job-1", 1, "plan"):
        pass
    failure = Failure(
        FailureKind.UNSUPPORTED_FEATURE if with_feature else FailureKind.INTERNAL,
        "needs OCR",
        "ocr" if with_feature else None,
        "UnsupportedFeature" if with_feature else None,
    )
    store.record_failure("job-1", 1, failure)
    job_item = _raw_item(store, job_key("job-1"))
    # The keys spelled out: deployed tables hold them in this form.
    assert job_item == {
        "pk": "JOB#job-1",
        "sk": "JOB",
        "job_id": "job-1",
        "job_status": "FAILED",
        "run": 1,
        "stage": "plan",
        "source": {"bucket": "ingest", "key": "contract.docx", "version_id": "v1", "size": 10},
        "options": {"clarify": False},
        "execution_arn": "arn:execution:job-1-r1",
        "failure": (
            {
                "kind": "unsupported_feature",
                "reason": "needs OCR",
                "feature": "ocr",
                "error": "UnsupportedFeature",
            }
            if with_feature
            else {"kind": "internal", "reason": "needs OCR"}
        ),
        "attempt_seq": 1,
        "attempt_counts": {"r1#plan": 1},  # the plan's attempts in run 1
        "phase": "dead_lettering",
        "created_at": NOW,
        "updated_at": NOW,
        "started_at": NOW,
        # Admission's: whom it runs for and when it was queued (its place in the backlog,
        # backlog_key, went when it left it).
        "tenant": "acme",
        "queued_at": NOW,
    }
    attempt_item = _raw_item(store, attempt_key("job-1", 1, 1))
    assert attempt_item == {
        "pk": "JOB#job-1",
        "sk": "ATTEMPT#r001#0001",
        "job_id": "job-1",
        "run": 1,
        "seq": 1,
        "stage": "plan",
        "attempt": 1,
        "outcome": "ok",
        "started_at": NOW,
        "ended_at": NOW,
        "duration_ms": 0,
        "recorded_by": "handler",
    }


# ---- item <-> model ------------------------------------------------------------------------

_text = st.text(max_size=20)
_maybe_int = st.none() | st.integers(min_value=0, max_value=10**12)
_sources = st.builds(
    SourceObject,
    bucket=_text,
    key=_text,
    version_id=st.none() | _text,
    etag=st.none() | _text,
    size=_maybe_int,
    sha256=st.none() | _text,
)
_failures = st.builds(
    Failure,
    kind=st.sampled_from(FailureKind),
    reason=_text,
    feature=st.none() | _text,
    error=st.none() | _text,
)
_stages = st.sampled_from(get_args(StepName))
_jobs = st.builds(
    Job,
    job_id=_text,
    status=st.sampled_from(JobStatus),
    run=st.integers(min_value=1, max_value=10**6),
    stage=st.none() | _stages,
    tier=st.none() | st.integers(min_value=1, max_value=3),
    shards=_maybe_int,
    pipeline=st.none() | _text,
    source=_sources,
    options=st.builds(JobOptions, clarify=st.booleans()),
    failure=st.none() | _failures,
    execution_arn=st.none() | _text,
    outputs=st.none()
    | st.builds(JobOutputs, docling_key=_text, projection_key=_text, detection_key=_text),
    counts=st.none()
    | st.builds(
        JobCounts,
        nodes=st.integers(0, 10**9),
        edges=st.integers(0, 10**9),
        spans=st.integers(0, 10**9),
        ambiguities=st.integers(0, 10**9),
        ambiguities_suppressed=st.integers(0, 10**9),
    ),
    created_at=st.none() | _text,
    updated_at=st.none() | _text,
    started_at=st.none() | _text,
    ended_at=st.none() | _text,
    dead_letter=st.none()
    | st.builds(
        DeadLetterMark,
        message_id=_text,
        sent_by=st.sampled_from(get_args(DeadLetterSender)),
    ),
    message=st.none() | _text,
)
_spans = st.builds(
    lambda start, extra: PageSpan(start=start, end=start + extra),
    st.integers(min_value=1, max_value=5000),
    st.integers(min_value=0, max_value=500),
)
_attempts = st.builds(
    Attempt,
    job_id=_text,
    run=st.integers(min_value=1, max_value=999),
    seq=st.integers(min_value=1, max_value=9999),
    stage=st.sampled_from([*get_args(StepName), "start", "record", "workflow"]),
    attempt=st.integers(min_value=1, max_value=100),
    outcome=_text,
    started_at=_text,
    tier=st.none() | st.integers(min_value=1, max_value=3),
    pages=st.none() | _spans,
    memory_mb=_maybe_int,
    request_id=st.none() | _text,
    reason=st.none() | _text,
    ended_at=st.none() | _text,
    duration_ms=_maybe_int,
    cached=st.none() | st.booleans(),
    recorded_by=st.sampled_from(["handler", "state-machine"]),
)


def _through_dynamodb(item: dict[str, Any]) -> dict[str, Any]:
    """What DynamoDB gives back for an item: its wire form read back (numbers as Decimal)."""
    serializer, deserializer = TypeSerializer(), TypeDeserializer()
    wire = {name: serializer.serialize(value) for name, value in item.items()}
    return {name: deserializer.deserialize(value) for name, value in wire.items()}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=_jobs)
def test_a_job_comes_back_from_its_item_unchanged(job: Job) -> None:
    item = job.to_item()
    assert "status" not in item and item["job_status"] == str(job.status)
    assert None not in _leaves(item)  # items stay sparse
    assert Job.from_item(_through_dynamodb(item)) == job


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attempt=_attempts)
def test_an_attempt_comes_back_from_its_item_unchanged(attempt: Attempt) -> None:
    item = attempt.to_item()
    assert None not in _leaves(item)
    assert Attempt.from_item(_through_dynamodb(item)) == attempt


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def test_a_job_item_with_the_store_s_bookkeeping_reads_as_the_job() -> None:
    """Keys and attempt counters are the store's, not the job's."""
    job = Job(job_id="job-1", status=JobStatus.QUEUED, run=1, source=SOURCE)
    item = {
        **job_key("job-1"),
        **job.to_item(),
        "attempt_seq": Decimal(3),
        "attempt_counts": {"r1#parse": Decimal(3)},
    }
    assert Job.from_item(item) == job
    assert "attempt_seq" not in job.to_dict() and "message" not in job.to_dict()
