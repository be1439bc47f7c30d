"""OCR: the mode, the engine, and what the DoclingDocument says about it.

Pure, no docling, and light: the project step reads the provenance from here, and its
imports are a benchmarked cost, so nothing here imports the formats or the state
contracts. Which pages OCR reads and what they cost the plan is
``richdoc.parse.ocr_pages``; ``richdoc.parse.ocr_engine`` is the docling side.

The mode (``RICHDOC_OCR_MODE``, the template's ``OcrMode``):

* ``auto`` reads every page without a text layer (a scanned or outlined PDF page, every
  frame of an image); pages with a text layer keep it, OCR never replaces native text;
* ``off`` reads none: a document with no text layer at all is ``unsupported_feature``
  ``ocr``; in a mixed one the pages left unread are named in the result;
* ``force`` reads every page, replacing the text layer where there is one (for PDFs
  whose text layer is garbage).

What the parse records, in docling-core's own place for node metadata (``meta``, a
custom field in the ``richdoc`` namespace): on every item built from OCR'd text its
``Transcription`` (the engine's confidence), on the document's body the ``OcrRecord``
(engine, mode, the pages read and the pages left unread). The record travels with the
cached DoclingDocument, so a cache hit and a merge of shards carry it too.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument, NodeItem

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

# docling-core's custom metadata fields are "<namespace>__<name>".
META_FIELD = "richdoc__ocr"


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
        "images": "own pixels",
        "region": "full_page",
    }


def engine_name() -> str:
    """The engine as the results name it: ``rapidocr 3.10.0 (PP-OCRv6)``."""
    return f"{ENGINE} {_version('rapidocr') or '?'} (PP-OCRv6)"


# What the DoclingDocument records ------------------------------------------------------


Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class Transcription(BaseModel):
    """An item built from OCR'd text: the engine's confidence in it (the mean of its
    lines' scores, 0 to 1)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    confidence: Confidence


class OcrRecord(BaseModel):
    """What OCR did to a document: the engine, the mode, the pages it read and the pages
    without a text layer it left unread (mode off), ascending."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    engine: str
    mode: OcrMode
    ocr_pages: list[int]
    unread_pages: list[int]

    @classmethod
    def join(cls, records: Sequence[OcrRecord]) -> OcrRecord | None:
        """The record of a document from its shards' (page ranges in order)."""
        if not records:
            return None
        first = records[0]
        return cls(
            engine=first.engine,
            mode=first.mode,
            ocr_pages=sorted(page for record in records for page in record.ocr_pages),
            unread_pages=sorted(page for record in records for page in record.unread_pages),
        )


def _custom(meta: Any) -> Any:
    """A ``meta``'s richdoc field: from a docling-core model or its JSON form."""
    if meta is None:
        return None
    if isinstance(meta, dict):
        return meta.get(META_FIELD)
    return meta.get_custom_part().get(META_FIELD)


def item_transcription(item: NodeItem) -> Transcription | None:
    """The OCR provenance of a DoclingDocument item; None for native content."""
    value = _custom(item.meta)
    return None if value is None else Transcription.model_validate(value)


def document_record(doc: DoclingDocument) -> OcrRecord | None:
    """The OCR record of a DoclingDocument; None where OCR had nothing to do."""
    value = _custom(doc.body.meta)
    return None if value is None else OcrRecord.model_validate(value)


def record_of_json(document: Mapping[str, Any]) -> OcrRecord | None:
    """The OCR record of a DoclingDocument in its JSON form (the merge's)."""
    value = _custom(document.get("body", {}).get("meta"))
    return None if value is None else OcrRecord.model_validate(value)


def with_record_json(body: dict[str, Any], record: OcrRecord | None) -> dict[str, Any]:
    """A body (JSON form) carrying ``record`` instead of whatever it carried."""
    meta = {key: value for key, value in body.get("meta", {}).items() if key != META_FIELD}
    if record is not None:
        meta[META_FIELD] = record.model_dump(mode="json")
    updated = {key: value for key, value in body.items() if key != "meta"}
    if meta:
        updated["meta"] = meta
    return updated
