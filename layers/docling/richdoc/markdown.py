"""The run's document as Markdown (``document.md``), rendered by docling-core.

docling-core's own Markdown serializer (``DoclingDocument.export_to_markdown``, the
export docling and docling-serve give) renders the run's DoclingDocument; nothing here
formats Markdown. Page breaks are marked with ``PAGE_BREAK`` on a line of its own, text
inside pictures (what full-page OCR puts there) is included, and pictures are the
``<!-- image -->`` placeholder; the parse step's own metadata on items (OCR confidence, a
heading's type size) is not rendered. UTF-8, ending in one LF. The same document gives the same
bytes (golden files: tests/data/golden/*/document.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from richdoc.parse import headings, ocr

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument

#: The line between the content of two pages.
PAGE_BREAK: Final = "<!-- page break -->"


#: The metadata the parse step writes onto items for the pipeline itself (the OCR
#: engine's confidence, a heading's type size): provenance, not the document's text, so
#: not rendered (docling-core renders every custom metadata field after its item).
PARSE_METADATA: Final = frozenset({ocr.META_FIELD, headings.META_FIELD})


def render_markdown(doc: DoclingDocument) -> bytes:
    # export_to_markdown imports the serializer on first use, so the project step's
    # cold start pays for it only when it renders.
    text = doc.export_to_markdown(
        page_break_placeholder=PAGE_BREAK,
        traverse_pictures=True,
        blocked_meta_names=set(PARSE_METADATA),
    )
    return (text.rstrip("\n") + "\n").encode("utf-8")
