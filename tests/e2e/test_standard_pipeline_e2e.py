"""PDFs on docling's standard pipeline (layout model + TableFormer, synthesised weights)
through the real state machine on the embedded stack: a memory-tier escalation caused by
the ceiling the tier really leaves, and page-range shards merged as the whole.

The stack's tier 1 is the smallest memory whose derived ceiling
(``richdoc.parse.settings.ceiling_for_tier``, from the warm zygote's resident set) holds
one page: a one-page shard converts there, a three-page document outgrows it and is
killed, and tier 2 (3,008 MB) finishes it; a mixed PDF, whose scanned page OCR reads, is
refused by tier 1 as too small for a page OCR reads and read at tier 2. Small documents
only: each page costs a few CPU seconds here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.stack import EmbeddedStack

from richdoc.jobs import Job, JobStatus
from richdoc.parse.settings import (
    ARTIFACTS_ENV,
    MEM_CEILING_ENV,
    PDF_PIPELINE_ENV,
    SHARD_PAGES_ENV,
    Pipeline,
)
from richdoc.parse.step import shared_worker
from richdoc_client.projection import DocumentNode, block_text
from tests.support import parse_inputs, scans
from tests.support.ocr_runs import projection_of
from tests.support.stack_runs import (
    execution,
    history,
    outcomes,
    run_pdf,
    shard_attempts,
    states_entered,
)
from tests.support.stack_settings import TEST_STACK
from tests.support.tiers import smallest_tier_mb, zygote_memory

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.slow]


@pytest.fixture(scope="module")
def standard_stack(
    model_weights: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, int]]:
    """The embedded stack with the weights where the parse image has them, and tier 1 as
    small as one page allows beside this machine's zygote (its memory, MB, is returned)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv(ARTIFACTS_ENV, str(model_weights))
        env.delenv(PDF_PIPELINE_ENV, raising=False)
        env.delenv(MEM_CEILING_ENV, raising=False)
        env.delenv(SHARD_PAGES_ENV, raising=False)
        # The worker the stack's parse handlers share (same settings, same process).
        worker = shared_worker()
        assert worker.settings.pdf_pipeline is Pipeline.STANDARD
        tier1 = smallest_tier_mb(zygote_memory(worker.server.start()), Pipeline.STANDARD)
        parameters = {
            "ParseTier1MemoryMB": str(tier1),
            "ParseTier2MemoryMB": "3008",
            "ParseTier3MemoryMB": "4096",
        }
        log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
        with EmbeddedStack(replace(TEST_STACK, parameters=parameters, log_path=log_path)) as stack:
            yield stack, tier1
            assert stack.loop_errors == []


@pytest.fixture(scope="module")
def three_pages(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("standard") / "three.pdf"
    return parse_inputs.pdf(path, pages=3).read_bytes()


@pytest.fixture(scope="module")
def whole(standard_stack: tuple[Any, int], three_pages: bytes) -> Job:
    stack, _ = standard_stack
    return run_pdf(stack, "standard/three.pdf", three_pages)


def _outputs(stack: Any, job: Job) -> tuple[bytes, bytes]:
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.outputs is not None
    return stack.artifact(job.outputs.projection_key), stack.artifact(job.outputs.detection_key)


def test_a_document_over_tier_1s_real_ceiling_escalates_and_succeeds_at_tier_2(
    standard_stack: tuple[Any, int], whole: Job
) -> None:
    stack, tier1 = standard_stack
    assert whole.status is JobStatus.SUCCEEDED, whole.failure
    assert whole.pipeline == "standard"
    # Killed at tier 1's ceiling (a resource limit, recorded as such), parsed at tier 2.
    parses = [
        (tier, outcome) for stage, tier, outcome in outcomes(stack, whole) if stage == "parse"
    ]
    assert parses == [(1, "ResourceLimit"), (2, "ok")]
    [killed] = [
        a
        for a in stack.jobs.attempts.of_job(whole.job_id, whole.run)
        if a.outcome == "ResourceLimit"
    ]
    assert killed.reason is not None and "exceeded mem_ceiling_mb" in killed.reason, killed
    entered = states_entered(history(stack, execution(stack, whole)["executionArn"]))
    assert [s for s in entered if s.startswith(("ParseTier", "Escalate"))] == [
        "ParseTier1",
        "EscalateToTier2",
        "ParseTier2",
    ]
    assert tier1 < 3008


def test_page_range_shards_on_the_standard_pipeline_merge_into_the_whole_documents_result(
    standard_stack: tuple[Any, int],
    whole: Job,
    three_pages: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stack, _ = standard_stack
    monkeypatch.setenv(SHARD_PAGES_ENV, "1")
    job = run_pdf(stack, "standard/three.pdf", three_pages)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert (job.pipeline, job.shards) == ("standard", 3)
    # One page each: every shard fits tier 1's ceiling.
    shards = shard_attempts(stack, job)
    assert {pages: [(a.tier, a.outcome) for a in tried] for pages, tried in shards.items()} == {
        "1-1": [(1, "ok")],
        "2-2": [(1, "ok")],
        "3-3": [(1, "ok")],
    }
    assert _outputs(stack, job) == _outputs(stack, whole)


NATIVE_LINE = "A native text page: its text layer is kept as it is."
SCANNED_LINES = ("Scanned page of the report.", "Signed on February 14, 2025.")


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


def test_a_mixed_pdf_on_the_standard_pipeline_escalates_for_its_ocr_page_and_reads_both(
    standard_stack: tuple[Any, int],
) -> None:
    stack, _ = standard_stack
    body = scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)])
    job = run_pdf(stack, "standard/mixed.pdf", body)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.pipeline == "standard"
    assert job.counts is not None and job.counts.ocr_page_count == 1
    # Tier 1 holds one text page, not a page OCR reads: refused once the child knew.
    parses = [(tier, outcome) for stage, tier, outcome in outcomes(stack, job) if stage == "parse"]
    assert parses == [(1, "ResourceLimit"), (2, "ok")]
    [refused] = [
        a for a in stack.jobs.attempts.of_job(job.job_id, job.run) if a.outcome == "ResourceLimit"
    ]
    assert refused.reason is not None and "with OCR" in refused.reason, refused
    projection = projection_of(stack, job)
    texts = {
        page: " ".join(
            block_text(n) or ""
            for n in projection.nodes
            if not isinstance(n, DocumentNode) and n.props.page == page
        )
        for page in (1, 2)
    }
    assert _words(texts[1]) == _words(NATIVE_LINE)
    assert _words(texts[2]) == _words(" ".join(SCANNED_LINES))
    assert projection.stats.ocr is not None and projection.stats.ocr.ocr_pages == [2]
