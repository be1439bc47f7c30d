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

A document OCR read pages of and found no text in at all (a picture, a drawing, a fax OCR
cannot read: whatever the engine returned, once its noise is dropped) is
``unsupported_feature`` ``pictures``, as a document of pictures alone is to the
projection: ``require_text`` says so for the whole document (a parse, or the merge of a
sharded one), never for one shard of it.

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

from richdoc.taxonomy import UnsupportedFeature

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

# docling-core's custom metadata fields are "<namespace>__<name>".
META_FIELD = "richdoc__ocr"
# The feature tag of a document OCR found nothing readable in: the projection's tag for a
# document that holds only pictures.
NOTHING_READ_FEATURE = "pictures"


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


def has_text(doc: DoclingDocument) -> bool:
    """Whether any text item or table cell of the document holds text."""
    return any(item.text.strip() for item in doc.texts) or any(
        cell.text.strip() for table in doc.tables for cell in table.data.table_cells
    )


def require_text(doc: DoclingDocument) -> None:
    """Refuse a document OCR read pages of in which nothing readable was found (the
    module docstring says why); any other document passes."""
    record = document_record(doc)
    if record is None or not record.ocr_pages or has_text(doc):
        return
    pages = ", ".join(str(page) for page in record.ocr_pages)
    raise UnsupportedFeature(
        f"nothing readable: OCR read page(s) {pages} and found no text, and the document "
        "has no text layer elsewhere (only pictures or drawings)",
        feature=NOTHING_READ_FEATURE,
    )


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
