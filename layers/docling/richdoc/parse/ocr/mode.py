"""The OCR mode and what it decides: the setting, the engine's identity and thresholds.

Pure, no docling, and light: the record (``richdoc.parse.ocr.record``) and the plan's page
choice (``richdoc.parse.ocr.pages``) stand on it, and the project step's imports are a
benchmarked cost.

The mode (``RICHDOC_OCR_MODE``, the template's ``OcrMode``):

* ``auto`` reads every page without a text layer (a scanned or outlined PDF page, every
  frame of an image); pages with a text layer keep it, OCR never replaces native text;
* ``off`` reads none: a document with no text layer at all is ``unsupported_feature``
  ``ocr``; in a mixed one the pages left unread are named in the result;
* ``force`` reads every page, replacing the text layer where there is one (for PDFs
  whose text layer is garbage).

``engine_identity`` is what decides the OCR'd text of a page (mode, engine, models,
thresholds): it goes into the processor contract of every format OCR may read.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping
from enum import StrEnum
from functools import cache
from typing import Any

OCR_MODE_ENV = "RICHDOC_OCR_MODE"

# The engine, chosen by measurement (docs/parse.md, "OCR"): RapidOCR with the trained
# PP-OCRv6 models its wheel bundles (detection, recognition, orientation), on onnxruntime.
ENGINE = "rapidocr"
MODEL_FILES = (
    "PP-OCRv6_det_small.onnx",
    "PP-OCRv6_rec_small.onnx",
    "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
)
# docling renders a PDF page for the engine at this multiple of 72 dpi (its RapidOCR
# default); an image's page is read at its own pixels.
RENDER_SCALE = 3.0
# RapidOCR's line orientation classifier (upright or upside down) stays off: measured on
# the benchmark's clean 200-dpi pages it turned about a third of the long lines upside
# down before recognition (CER 33 %, 0 % without it). A scan upside down is read badly.
ORIENTATION_CLASSIFIER = False
# What the engine reads that is kept (docs/parse.md, "OCR"): a line the engine scores
# below MIN_LINE_CONFIDENCE, or whose box is less than MIN_TEXT_HEIGHT_PT points tall, is
# noise, not text. Measured: lines of print, 100 to 300 dpi, up to 10 % noise and a 2
# degree skew, scored 0.959 and up and stood 12 points tall at 11-point type; what the
# engine read in pictures (dot patterns, speckles, gradients) scored 0.64 to 0.73, and
# an issue's red dot pattern a 2-point "a" at 0.54. RapidOCR's own filter (its
# text_score) drops the unsure lines.
MIN_LINE_CONFIDENCE = 0.8
MIN_TEXT_HEIGHT_PT = 4.0
# A line's text is its words as the engine segments them (its word boxes: a space in the
# text, or a gap between two characters' columns), one space between two words: the
# recogniser alone sometimes runs words together ("3.Notices", "to12").
WORD_SPACING = "engine word boxes"


class OcrMode(StrEnum):
    AUTO = "auto"  # pages without a text layer
    OFF = "off"  # none: the unread pages are named
    FORCE = "force"  # every page, replacing the text layer


def ocr_mode_setting(environ: Mapping[str, str] | None = None) -> OcrMode:
    """``RICHDOC_OCR_MODE``: auto (the default), off or force."""
    env = os.environ if environ is None else environ
    raw = env.get(OCR_MODE_ENV, "").strip() or OcrMode.AUTO.value
    try:
        return OcrMode(raw)
    except ValueError:
        raise ValueError(f"{OCR_MODE_ENV} must be auto, off or force, not {raw!r}") from None


@cache
def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def engine_identity(mode: OcrMode) -> dict[str, Any]:
    """What decides the OCR'd text of a page: it goes into the processor contract of every
    format OCR may read, so a change of mode, engine or models parses again."""
    return {
        "mode": str(mode),
        "engine": ENGINE,
        "versions": {name: _version(name) for name in ("rapidocr", "onnxruntime")},
        "models": list(MODEL_FILES),
        "render_scale": RENDER_SCALE,
        "orientation_classifier": ORIENTATION_CLASSIFIER,
        "min_line_confidence": MIN_LINE_CONFIDENCE,
        "min_text_height_pt": MIN_TEXT_HEIGHT_PT,
        "word_spacing": WORD_SPACING,
        "images": "own pixels",
        "region": "full_page",
    }


def engine_name() -> str:
    """The engine as the results name it: ``rapidocr 3.10.0 (PP-OCRv6)``."""
    return f"{ENGINE} {_version('rapidocr') or '?'} (PP-OCRv6)"
