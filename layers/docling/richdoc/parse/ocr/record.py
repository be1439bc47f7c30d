"""What the DoclingDocument records of OCR, and the rule on a document it found nothing in.

Pure, no docling, and light: the project step reads the provenance from here, and its
imports are a benchmarked cost, so nothing here imports the formats or the state
contracts.

What the parse records, in docling-core's own place for node metadata (``meta``, a
custom field in the ``richdoc`` namespace): on every item built from OCR'd text its
``Transcription`` (the engine's confidence), on the document's body the ``OcrRecord``
(engine, mode, the pages read and the pages left unread). The record travels with the
cached DoclingDocument, so a cache hit and a merge of shards carry it too.

A document OCR read pages of and found no text in at all (a picture, a drawing, a fax OCR
cannot read: whatever the engine returned, once its noise is dropped) is
``unsupported_feature`` ``pictures``, as a document of pictures alone is to the
projection: ``require_text`` says so for the whole document (a parse, or the merge of a
sharded one), never for one shard of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from richdoc.parse.ocr.mode import OcrMode
from richdoc.taxonomy import UnsupportedFeature

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument, NodeItem
    from docling_core.types.doc.common.meta import BaseMeta

# docling-core's custom metadata fields are "<namespace>__<name>".
META_FIELD = "richdoc__ocr"
# The feature tag of a document OCR found nothing readable in: the projection's tag for a
# document that holds only pictures.
NOTHING_READ_FEATURE = "pictures"


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


def _custom(meta: BaseMeta | Mapping[str, object] | None) -> object:
    """A ``meta``'s richdoc field: from a docling-core model or its JSON form."""
    if meta is None:
        return None
    if isinstance(meta, Mapping):
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
