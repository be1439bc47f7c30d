"""The run's document as Markdown (``document.md``), rendered by docling-core.

docling-core's own Markdown serializer (``DoclingDocument.export_to_markdown``, the
export docling and docling-serve give) renders the run's DoclingDocument; nothing here
formats Markdown. Page breaks are marked with ``PAGE_BREAK`` on a line of its own, text
inside pictures (what full-page OCR puts there) is included, and pictures are the
``<!-- image -->`` placeholder. UTF-8, ending in one LF. The same document gives the same
bytes (golden files: tests/data/golden/*/document.md).

A workbook's pages are its sheets (docling's ``sheet`` groups), which their headings
separate (``richdoc.parse.workbook``): its Markdown marks no page breaks. (docling-core
would mark each one after the sheet it should precede: it places a break before the
first item of a new page, and a sheet's items are serialized with their group.)

The serializer writes every metadata field of an item (``meta``) as text after it. The
parse keeps its own records there (``richdoc.parse.ocr.record.META_FIELD``: an OCR'd item's
confidence, the document's OCR record; ``richdoc.parse.headings.META_FIELD``: a heading's
type size), which are for the projection, not for readers: they are left out by name.
docling's own metadata (a picture's description or class) stays, as docling exports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from richdoc.parse import headings
from richdoc.parse.ocr import record as ocr_record

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument

#: The line between the content of two pages.
PAGE_BREAK: Final = "<!-- page break -->"
#: The metadata fields that are richdoc's records, not the document's content.
RECORDS: Final = frozenset({ocr_record.META_FIELD, headings.META_FIELD})


def render_markdown(doc: DoclingDocument) -> bytes:
    from docling_core.types.doc import GroupLabel

    sheets = any(group.label is GroupLabel.SHEET for group in doc.groups)
    # export_to_markdown imports the serializer on first use, so the project step's
    # cold start pays for it only when it renders.
    text = doc.export_to_markdown(
        page_break_placeholder=None if sheets else PAGE_BREAK,
        traverse_pictures=True,
        blocked_meta_names=set(RECORDS),
    )
    return (text.rstrip("\n") + "\n").encode("utf-8")
