"""Which pages of a document OCR reads, by the mode, and what they cost the plan.

Pure, no docling: the plan (to size shards by page cost) and the parse child (to tell the
engine which pages to read) decide from here. The mode is ``richdoc.parse.ocr.mode``;
the docling side is ``richdoc.parse.ocr.engine``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from richdoc.contracts import PageSpan
from richdoc.formats import DocFormat, Inspection
from richdoc.parse.ocr.mode import OcrMode
from richdoc.taxonomy import UnsupportedFeature

# The formats whose pages may have no text layer: a PDF's scanned pages, an image's frames.
OCR_FORMATS = frozenset({DocFormat.PDF, DocFormat.IMAGE})

# What an OCR'd page costs the parse, in text pages: the plan sizes shards and timeouts by
# it (richdoc.parse.shard_plan). Measured on 2 cores (docs/parse.md, "OCR"): the standard
# pipeline's layout and tables take about 1.9 s a text page, OCR adds about 4 s.
OCR_PAGE_COST = 3


@dataclass(frozen=True)
class OcrPages:
    """The pages of one conversion (a document, or a shard's range) OCR reads, and the
    pages without a text layer it leaves unread (mode off), 1-based and ascending."""

    read: tuple[int, ...] = ()
    unread: tuple[int, ...] = ()


def pages_to_read(
    mode: OcrMode, fmt: DocFormat, inspection: Inspection, pages: PageSpan | None = None
) -> OcrPages:
    """Which pages of an inspected document (of ``pages`` of it, for a shard) OCR reads.

    With OCR off, a document none of whose pages has a text layer (a scan, an image) is
    ``UnsupportedFeature('ocr')``: there would be nothing to read."""
    page_count = inspection.page_count
    if fmt not in OCR_FORMATS or page_count is None:
        return OcrPages()
    wanted = range(1, page_count + 1) if pages is None else range(pages.start, pages.end + 1)
    image_only = tuple(page for page in inspection.image_only if page in wanted)
    if mode is OcrMode.FORCE:
        return OcrPages(read=tuple(page for page in wanted if page <= page_count))
    if mode is OcrMode.AUTO:
        return OcrPages(read=image_only)
    if fmt is DocFormat.IMAGE or len(inspection.image_only) == page_count:
        what = "an image" if fmt is DocFormat.IMAGE else "a PDF with no text layer on any page"
        raise UnsupportedFeature(
            f"{what}: only OCR reads it, and OCR is off (OcrMode=off)", feature="ocr"
        )
    return OcrPages(unread=image_only)


def page_costs(page_count: int, ocr_pages: Iterable[int]) -> list[int]:
    """Each page's cost in text pages (``OCR_PAGE_COST`` for an OCR'd one), page 1 first."""
    costs = [1] * page_count
    for page in ocr_pages:
        costs[page - 1] = OCR_PAGE_COST
    return costs
