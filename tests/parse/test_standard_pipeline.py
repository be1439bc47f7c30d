"""docling's standard PDF pipeline (layout model + TableFormer, OCR of the pages without a
text layer), run here on synthesised weights and RapidOCR's trained models: the engine
stack imports, docling converts, a mixed PDF keeps its text layer and has its scanned
page read, the parse worker's zygote warms up with both models loaded and stays
single-threaded, children convert with their share of the CPUs, the plan's worker loads
no model, the memory ceiling a tier leaves is real (OCR's share too), and docling's
document timeout gives partial results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from richdoc.formats import DocFormat
from richdoc.parse.settings import (
    ParseLimits,
    ParserSettings,
    Pipeline,
    available_cpus,
    ceiling_for_tier,
)
from richdoc.parse.step import ParseWorker
from richdoc.taxonomy import ResourceLimit
from tests.support import parse_inputs, scans
from tests.support.tiers import smallest_tier_mb, zygote_memory

pytestmark = [pytest.mark.docling, pytest.mark.slow]

# Run in a fresh interpreter of this environment, as the parse worker's zygote is: the
# imports go through whatever `make setup` installed, nothing of pytest's.
ENGINE_STACK = """
import json, sys
from pathlib import Path
import torch, torchvision
from transformers import AutoImageProcessor, RTDetrV2ForObjectDetection
from docling_ibm_models.tableformer.data_management.tf_predictor import TFPredictor
from docling.pipeline.standard_pdf_pipeline import StandardPdfPipeline
from richdoc.formats import DocFormat
from richdoc.parse.convert import build_converters
from richdoc.parse.settings import LAYOUT_MODEL_DIR, ParserSettings, Pipeline

weights, pdf = Path(sys.argv[1]), Path(sys.argv[2])
processor = AutoImageProcessor.from_pretrained(weights / LAYOUT_MODEL_DIR)
try:
    torchvision.ops.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)
    nms = "ok"
except RuntimeError as exc:
    nms = str(exc)
converter = build_converters(ParserSettings(Pipeline.STANDARD, str(weights)))[DocFormat.PDF]
pipeline = next(iter(converter.initialized_pipelines.values()))
result = converter.convert(pdf)
print(json.dumps({
    "torch": torch.__version__,
    "processor": type(processor).__name__,
    "nms": nms,
    "pipeline": type(pipeline).__name__,
    "status": result.status.value,
    "pages": len(result.pages),
    "labels": sorted({str(item.label) for item, _ in result.document.iterate_items()}),
}))
"""


def test_a_fresh_interpreter_imports_the_engine_stack_and_converts(model_weights, tmp_path):
    pdf = parse_inputs.pdf(tmp_path / "two.pdf", pages=2)
    done = subprocess.run(
        [sys.executable, "-c", ENGINE_STACK, str(model_weights), str(pdf)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["torch"].endswith("+cpu")
    # transformers' torchvision backend, as in the parse image.
    assert facts["processor"] == "RTDetrImageProcessor"
    # torchvision's compiled operators may be absent; calling one says so, as designed.
    assert facts["nms"] == "ok" or "Couldn't load custom C++ ops" in facts["nms"]
    assert facts["pipeline"] == "StandardOcrPdfPipeline"
    assert (facts["status"], facts["pages"]) == ("success", 2)
    assert facts["labels"] == ["text"]  # the synthesised layout model's one label


@pytest.fixture(scope="module")
def standard_worker(model_weights):
    worker = ParseWorker(ParserSettings(Pipeline.STANDARD, str(model_weights)), quiet=True)
    yield worker
    worker.close()


def test_the_parse_worker_warms_up_single_threaded_and_converts(standard_worker, tmp_path):
    """The thread design (docs/parse.md, "Threads"): the zygote loads both models with one
    torch thread and holds one OS thread (fork copies only the calling thread), before
    and after its children ran the models; each child raises torch to its share of the
    CPUs (all of them: it runs alone) and converts."""
    staged = parse_inputs.pdf(tmp_path / "document.pdf", pages=1)
    limits = ParseLimits(max_pages=10, timeout_s=600.0, mem_ceiling_mb=8192)
    report, outcome = standard_worker.convert(
        staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=False
    )
    hello = standard_worker.server.hello
    assert hello is not None
    # Once warm: one OS thread (no OpenMP pool, no progress-bar monitor), torch at one.
    assert hello.threads == 1
    assert hello.details == {"torch_threads": 1}
    # Still so after a child ran both models: the zygote itself never runs one.
    assert len(os.listdir(f"/proc/{hello.pid}/task")) == 1
    assert report.threads == available_cpus()
    assert report.pipeline is Pipeline.STANDARD
    assert (report.page_count, report.partial) == (1, False)
    document = json.loads((tmp_path / "out.json").read_text())
    assert {text["label"] for text in document["texts"]} == {"text"}
    # The child maps the zygote's pages, models included: its RSS counts the zygote's
    # anonymous pages from the fork on.
    assert outcome.peak_rss_mb >= hello.rss_mb * 0.9
    assert outcome.peak_rss_mb >= hello.anon_mb


NATIVE_LINE = "A native text page: its text layer is kept as it is."
SCANNED_LINES = ("Scanned page of the report.", "Signed on February 14, 2025.")


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


def _mixed(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)]))
    return path


def test_a_mixed_pdf_keeps_its_text_layer_and_its_scanned_page_is_read(standard_worker, tmp_path):
    """docling's standard pipeline skips every page's text layer when its OCR reads full
    pages; here OCR reads only the page without one, and the other keeps its own."""
    staged = _mixed(tmp_path / "mixed.pdf")
    limits = ParseLimits(max_pages=10, timeout_s=600.0, mem_ceiling_mb=8192)
    report, _ = standard_worker.convert(
        staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=False
    )
    assert (report.page_count, report.ocr_pages, report.unread_pages) == (2, [2], [])
    document = json.loads((tmp_path / "out.json").read_text())
    by_page: dict[int, list[str]] = {1: [], 2: []}
    for text in document["texts"]:
        by_page[text["prov"][0]["page_no"]].append(text["text"])
    assert _words(" ".join(by_page[1])) == _words(NATIVE_LINE)
    assert _words(" ".join(by_page[2])) == _words(" ".join(SCANNED_LINES))


def test_in_a_lambda_tier_torch_gets_the_threads_its_memory_buys(standard_worker, tmp_path):
    # A 1,769 MB function gets one vCPU of time, whatever cores it shows: one thread.
    staged = parse_inputs.pdf(tmp_path / "document.pdf", pages=1)
    limits = ParseLimits(max_pages=10, timeout_s=600.0, mem_ceiling_mb=8192, memory_tier_mb=1769)
    report, _ = standard_worker.convert(
        staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=False
    )
    assert report.threads == 1


def test_the_plan_worker_inspects_without_docling_or_the_models(model_weights, tmp_path):
    """The plan only counts pages: its zygote never builds a converter nor loads a model."""
    settings = ParserSettings(Pipeline.STANDARD, str(model_weights))
    worker = ParseWorker(settings, quiet=True, inspect_only=True)
    staged = parse_inputs.pdf(tmp_path / "document.pdf", pages=3)
    limits = ParseLimits.resolve(memory_tier_mb=2048, environ={})
    try:
        inspected = worker.inspect(staged, DocFormat.PDF, limits)
        hello = worker.server.hello
        assert hello is not None
        maps = Path(f"/proc/{hello.pid}/maps").read_text()
    finally:
        worker.close()
    assert inspected.page_count == 3
    assert hello.details == {"torch_threads": None}  # torch never imported
    assert "libtorch" not in maps and "pdfium" in maps
    # A fraction of the converting zygote's (about 970 MB with the models).
    assert hello.rss_mb < 300
    assert hello.warmup_s < 30


def test_the_tiers_ceiling_refuses_a_tier_too_small_and_kills_what_outgrows_it(
    standard_worker, tmp_path
):
    """The ceiling is derived from the warm zygote (``ceiling_for_tier``): below the
    smallest tier that holds one page the parse is refused before a child starts; at that
    tier one page converts and three pages outgrow the ceiling and are killed (measured:
    one page peaks about 150 MB below it, three pages 150 MB above)."""
    zygote = zygote_memory(standard_worker.server.start())
    tier = smallest_tier_mb(zygote, Pipeline.STANDARD)
    ceiling = ceiling_for_tier(tier, zygote, Pipeline.STANDARD)

    def convert(pages: int, memory_tier_mb: int):
        staged = parse_inputs.pdf(tmp_path / f"{pages}" / "document.pdf", pages=pages)
        limits = ParseLimits.resolve(memory_tier_mb=memory_tier_mb, timeout_s=600, environ={})
        return standard_worker.convert(
            staged, DocFormat.PDF, staged.with_name("out.json"), limits, accept_partial=False
        )

    (tmp_path / "1").mkdir()
    (tmp_path / "3").mkdir()
    with pytest.raises(ResourceLimit, match="one page needs on the standard pipeline"):
        convert(1, tier - 1)
    report, outcome = convert(1, tier)
    assert (report.page_count, outcome.mem_ceiling_mb) == (1, ceiling)
    assert outcome.peak_rss_mb < ceiling
    with pytest.raises(ResourceLimit, match=f"exceeded mem_ceiling_mb={ceiling}"):
        convert(3, tier)
    # A page OCR reads needs more: known once the child has inspected the document.
    limits = ParseLimits.resolve(memory_tier_mb=tier, timeout_s=600, environ={})
    with pytest.raises(ResourceLimit, match="one page needs on the standard pipeline with OCR"):
        standard_worker.convert(
            _mixed(tmp_path / "mixed" / "document.pdf"),
            DocFormat.PDF,
            tmp_path / "mixed" / "out.json",
            limits,
            accept_partial=False,
        )


def test_the_document_timeout_is_a_resource_limit_below_the_top_tier_and_partial_at_it(
    table_model_weights, tmp_path
):
    """docling's own document timeout (80 % of timeout_s) stops the standard pipeline
    with what it has. The layout model here finds a table on every page, and TableFormer's
    random decoder takes about 110 CPU seconds a table: no machine finishes two in 24 s."""
    worker = ParseWorker(ParserSettings(Pipeline.STANDARD, str(table_model_weights)), quiet=True)
    staged = parse_inputs.page_pdf(tmp_path / "document.pdf", pages=2, tables=True)
    limits = ParseLimits(max_pages=10, timeout_s=30.0, mem_ceiling_mb=8192)
    try:
        # Below the biggest tier: a resource limit, which escalates.
        with pytest.raises(ResourceLimit, match="only partially"):
            worker.convert(
                staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=False
            )
        # At the biggest tier: accepted, the unfinished pages reported.
        report, outcome = worker.convert(
            staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=True
        )
    finally:
        worker.close()
    assert (report.partial, report.failed_pages, report.page_count) == (True, [1, 2], 2)
    # docling stopped at its document timeout, not the worker's kill at timeout_s.
    assert 0.8 * limits.timeout_s <= outcome.seconds < limits.timeout_s
    assert json.loads((tmp_path / "out.json").read_text())["name"] == "document"
