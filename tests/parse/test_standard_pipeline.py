"""docling's standard PDF pipeline (layout model + TableFormer, OCR off), run here on
synthesised weights: the engine stack imports, docling converts, the parse worker's
zygote warms up with both models loaded and stays single-threaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from richdoc.formats import DocFormat
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import ParseWorker
from tests.support import parse_inputs

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
    assert facts["pipeline"] == "StandardPdfPipeline"
    assert (facts["status"], facts["pages"]) == ("success", 2)
    assert facts["labels"] == ["text"]  # the synthesised layout model's one label


def test_the_parse_worker_warms_up_single_threaded_and_converts(model_weights, tmp_path):
    """The zygote loads both models in its warm-up and must still hold one thread (fork
    copies only the calling thread); a forked child then runs the models."""
    staged = parse_inputs.pdf(tmp_path / "document.pdf", pages=1)
    worker = ParseWorker(ParserSettings(Pipeline.STANDARD, str(model_weights)), quiet=True)
    limits = ParseLimits(max_pages=10, timeout_s=600.0, mem_ceiling_mb=8192)
    try:
        report, outcome = worker.convert(
            staged, DocFormat.PDF, tmp_path / "out.json", limits, accept_partial=False
        )
        hello = worker.server.hello
    finally:
        worker.close()
    assert hello is not None
    assert hello.threads == 1
    assert report.pipeline is Pipeline.STANDARD
    assert (report.pages, report.partial) == (1, False)
    document = json.loads((tmp_path / "out.json").read_text())
    assert {text["label"] for text in document["texts"]} == {"text"}
    # The child maps the zygote's pages, models included.
    assert outcome.peak_rss_mb >= hello.rss_mb * 0.9
