"""Large documents end to end: a PDF longer than the shard size is planned, parsed as
page-range shards by the state machine's Map state (each shard with its own tier
escalation and cached artifact), merged, projected and detected exactly as the whole
document is; every shard failure route runs through the real state machine on the
embedded stack. (The long runs, 300 pages through ``richdoc run`` and 2,000 pages, are
in tests/e2e/test_large_pdfs_e2e.py, so that they run beside these.)

The shard size is the plan function's ``RICHDOC_SHARD_PAGES`` (template parameter
``ShardPages``), read on every plan: tests set it in the environment the stack's
functions share, as a deployment sets it on the function.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.runtime.events import wait_until

from richdoc.artifacts import docling_key, merged_key
from richdoc.contracts import PageSpan, ParseInput
from richdoc.formats import DocFormat
from richdoc.jobs import Job, JobStatus
from richdoc.parse.settings import SHARD_CONCURRENCY_ENV, SHARD_PAGES_ENV, ParserSettings
from richdoc.parse.shard_plan import MAX_SHARDS
from richdoc.taxonomy import CorruptInput
from tests.support import parse_inputs
from tests.support.stack_runs import (
    dead_letters_for,
    execution,
    history,
    largest_payload,
    run_pdf,
    shard_attempts,
    states_entered,
    wait_for_handlers,
)

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

PROPERTY_PAGES = 101


# ---- helpers ------------------------------------------------------------------------------


def outputs(stack: Any, job: Job) -> tuple[bytes, bytes]:
    """projection.json and detection.json of a job."""
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.outputs is not None
    return (
        stack.artifact(job.outputs.projection_key),
        stack.artifact(job.outputs.detection_key),
    )


@pytest.fixture
def shard_pages(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    def set_size(pages: int) -> None:
        monkeypatch.setenv(SHARD_PAGES_ENV, str(pages))

    return set_size


@pytest.fixture(scope="module")
def agreement(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("shards") / "agreement.pdf"
    return parse_inputs.long_pdf(path, pages=PROPERTY_PAGES, seed=11).read_bytes()


@pytest.fixture(scope="module")
def whole_agreement(embedded_stack: Any, agreement: bytes) -> tuple[bytes, bytes]:
    """The agreement parsed whole (sharding off): what every sharded run must equal."""
    from unittest import mock

    with mock.patch.dict(os.environ, {SHARD_PAGES_ENV: "0"}):
        job = run_pdf(embedded_stack, "shards/agreement.pdf", agreement)
    assert job.shards == 1
    return outputs(embedded_stack, job)


# ---- identity ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 50, PROPERTY_PAGES - 1])
def test_any_shard_size_gives_the_whole_documents_projection_and_detection(
    stack: Any,
    shard_pages: Callable[[int], None],
    agreement: bytes,
    whole_agreement: tuple[bytes, bytes],
    size: int,
) -> None:
    shard_pages(size)
    job = run_pdf(stack, "shards/agreement.pdf", agreement)
    assert outputs(stack, job) == whole_agreement
    # One page a shard would be 101: past MAX_SHARDS the shards get bigger, not more.
    expected = {1: MAX_SHARDS, 7: 15, 50: 3, PROPERTY_PAGES - 1: 2}[size]
    assert job.shards == expected
    shards = shard_attempts(stack, job)
    assert len(shards) == expected
    ranges = [PageSpan.parse(pages) for pages in shards]
    assert ranges[0].start == 1 and ranges[-1].end == PROPERTY_PAGES
    assert all(a.end + 1 == b.start for a, b in itertools.pairwise(ranges))
    assert {a.outcome for tried in shards.values() for a in tried} == {"ok"}
    events = history(stack, execution(stack, job)["executionArn"])
    entered = states_entered(events)
    assert entered.count("ParseShardTier1") == expected and "ParseTier1" not in entered
    assert entered[-4:] == ["Project", "Detect", "RecordSuccess", "Succeeded"]
    # States pass keys and page ranges only: the largest payload (the merge's input: the
    # plan and the Map's results) is about 260 bytes a shard (docs/shards.md, "Budgets").
    assert largest_payload(events) < 2048 + 300 * expected


# ---- failure routes ----------------------------------------------------------------------


@pytest.fixture
def small_pdf(tmp_path: Path, shard_pages: Callable[[int], None]) -> Callable[[int], bytes]:
    """A 12-page PDF (a seed per test: its own shard artifacts), in shards of 4 pages."""
    shard_pages(4)

    def make(seed: int) -> bytes:
        return parse_inputs.long_pdf(tmp_path / f"s{seed}.pdf", pages=12, seed=seed).read_bytes()

    return make


SHARDS_OF_12 = ["1-4", "5-8", "9-12"]


def _pages_are(pages: str) -> Callable[[Any], bool]:
    span = PageSpan.parse(pages).model_dump(mode="json")
    return lambda event: isinstance(event, dict) and event.get("pages") == span


def test_a_shard_killed_for_memory_escalates_alone(
    stack: Any, small_pdf: Callable[[int], bytes]
) -> None:
    stack.script.add(
        "ParseTier1Function",
        PlatformError("Runtime.OutOfMemory", "Runtime exited with error: signal: killed"),
        when=_pages_are("5-8"),
    )
    job = run_pdf(stack, "shards/oom.pdf", small_pdf(21))
    assert job.status is JobStatus.SUCCEEDED, job.failure
    shards = shard_attempts(stack, job)
    assert list(shards) == SHARDS_OF_12
    assert {
        pages: [(a.tier, a.outcome, a.recorded_by) for a in tried]
        for pages, tried in shards.items()
    } == {
        "1-4": [(1, "ok", "handler")],
        "5-8": [(1, "Runtime.OutOfMemory", "state-machine"), (2, "ok", "handler")],
        "9-12": [(1, "ok", "handler")],
    }
    entered = states_entered(history(stack, execution(stack, job)["executionArn"]))
    assert entered.count("EscalateShardToTier2") == entered.count("ParseShardTier2") == 1
    assert "ParseShardTier3" not in entered and "ParseTier1" not in entered


def test_a_shard_with_a_broken_page_escalates_alone_and_is_kept_partial_at_tier_3(
    stack: Any, shard_pages: Callable[[int], None], tmp_path: Path
) -> None:
    shard_pages(2)
    body = parse_inputs.pdf_with_broken_page(tmp_path / "b.pdf", pages=6, broken=4).read_bytes()
    job = run_pdf(stack, "shards/broken-page.pdf", body)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    shards = shard_attempts(stack, job)
    assert {pages: [(a.tier, a.outcome) for a in tried] for pages, tried in shards.items()} == {
        "1-2": [(1, "ok")],
        "3-4": [(1, "ResourceLimit"), (2, "ResourceLimit"), (3, "ok")],  # partial only at 3
        "5-6": [(1, "ok")],
    }
    assert job.outputs is not None and "-partial/shards-3.json" in job.outputs.docling_key

    shard_pages(0)
    whole = run_pdf(stack, "shards/broken-page.pdf", body)
    assert [a.tier for a in stack.jobs.attempts.of_job(whole.job_id) if a.stage == "parse"] == [
        1,
        2,
        3,
    ]
    assert outputs(stack, job) == outputs(stack, whole)


def test_a_corrupt_shard_fails_the_job_once_with_corrupt_input(
    stack: Any, small_pdf: Callable[[int], bytes], patch_parse: Callable[..., None]
) -> None:
    def second_shard_damaged(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.pages is not None and str(event.pages) == "5-8":
            raise CorruptInput("pages 5-8: a damaged content stream")
        return real(event, **kw)

    patch_parse(second_shard_damaged)
    job = run_pdf(stack, "shards/corrupt.pdf", small_pdf(22))
    assert job.failure is not None
    assert (job.status, job.failure.kind) == (JobStatus.DEAD_LETTERED, "corrupt_input")
    assert "pages 5-8" in job.failure.reason
    described = execution(stack, job)
    assert (described["status"], described["error"]) == ("FAILED", "corrupt_input")
    entered = states_entered(history(stack, described["executionArn"]))
    for once in ("RecordShardFailure", "ShardFailed", "ParseShardsFailed", "RecordFailure"):
        assert entered.count(once) == 1, once
    assert "Merge" not in entered and "ParseShardTier2" not in entered
    [letter] = dead_letters_for(stack, job.job_id)
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == "corrupt_input"
    wait_for_handlers(stack)
    shards = shard_attempts(stack, job)
    # The damaged shard's attempt is closed once, by its handler; no other failure record.
    assert [(a.tier, a.outcome) for a in shards["5-8"]] == [(1, "CorruptInput")]
    others = [a.outcome for pages, tried in shards.items() if pages != "5-8" for a in tried]
    assert set(others) <= {"ok"}


def test_a_redrive_after_a_transient_shard_failure_parses_only_the_missing_shards(
    stack: Any,
    small_pdf: Callable[[int], bytes],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One shard at a time, in page order: shard 1 is parsed, shard 2 fails, shard 3
    # never starts (the Map stops at the failure).
    monkeypatch.setenv(SHARD_CONCURRENCY_ENV, "1")
    outage = PlatformError("Lambda.ServiceException", "Service unavailable")
    stack.script.add("ParseTier1Function", *[outage] * 5, when=_pages_are("5-8"))
    body = small_pdf(23)
    job = run_pdf(stack, "shards/outage.pdf", body)
    assert job.failure is not None
    assert (job.status, job.failure.kind) == (JobStatus.DEAD_LETTERED, "transient")
    run_1 = shard_attempts(stack, job, 1)
    assert {pages: [a.outcome for a in tried] for pages, tried in run_1.items()} == {
        "1-4": ["ok"],
        "5-8": ["Lambda.ServiceException"],  # recorded by the state machine, with its pages
    }
    sha256 = hashlib.sha256(body).hexdigest()
    contract = ParserSettings.from_env().conversion(DocFormat.PDF).contract
    stored = {
        pages: stack.client("s3")
        .list_objects_v2(
            Bucket=stack.outputs["ArtifactBucketName"],
            Prefix=docling_key(sha256, contract, PageSpan.parse(pages)),
        )
        .get("KeyCount", 0)
        for pages in SHARDS_OF_12
    }
    assert stored == {"1-4": 1, "5-8": 0, "9-12": 0}

    from richdoc_tools.ops.dead_letter_queue.acting import redrive_all
    from richdoc_tools.ops.operator import Operator, StackResources

    operator = Operator(stack.session, StackResources.from_outputs("richdoc", stack.outputs))
    moved = redrive_all(operator).moved
    assert moved is not None and moved >= 1

    def run_2_finished() -> bool:
        current = stack.jobs.get(job.job_id)
        return current is not None and current.run == 2 and current.status.terminal

    assert wait_until(run_2_finished, 120)
    rerun = stack.jobs.get(job.job_id)
    assert rerun.status is JobStatus.SUCCEEDED, rerun.failure
    run_2 = shard_attempts(stack, rerun, 2)
    assert {pages: [(a.outcome, a.cached) for a in tried] for pages, tried in run_2.items()} == {
        "1-4": [("ok", True)],  # from run 1's artifact: not parsed again
        "5-8": [("ok", False)],
        "9-12": [("ok", False)],
    }
    assert rerun.outputs.docling_key == merged_key(sha256, contract, 3)

    # The operator's view: each run's shards, which tier, which came from the cache.
    from richdoc_tools.cli import main

    capsys.readouterr()
    assert main(["jobs", "show", job.job_id]) == 0
    shown = capsys.readouterr().out
    # Not a terminal: the record, then each table, as tab-separated rows under headers.
    [shard_table] = [block for block in shown.split("\n\n") if "\tshard pages\t" in block]
    header, *shard_rows = shard_table.splitlines()
    assert header.split("\t") == ["run", "shard pages", "attempts", "tier", "outcome", "cached"]
    assert [row.split("\t") for row in shard_rows] == [
        ["1", "1-4", "1", "1", "ok", "False"],
        ["1", "5-8", "1", "1", "Lambda.ServiceException", "-"],
        ["2", "1-4", "1", "1", "ok", "True"],
        ["2", "5-8", "1", "1", "ok", "False"],
        ["2", "9-12", "1", "1", "ok", "False"],
    ]
