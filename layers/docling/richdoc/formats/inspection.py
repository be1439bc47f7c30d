"""What an inspection learns, and the page limit every inspector applies."""

from __future__ import annotations

from dataclasses import dataclass

from richdoc.taxonomy import UnsupportedFeature


@dataclass(frozen=True)
class Inspection:
    """What the pre-parse inspection learned."""

    page_count: int | None  # PDF pages, PPTX slides, XLSX sheets; None where docling has none
    # The pages with no text layer that carry images or drawings, 1-based: a PDF's
    # scanned (or outlined) pages, every frame of an image. Only OCR can read them.
    image_only: tuple[int, ...] = ()


def check_pages(page_count: int, max_pages: int, unit: str) -> None:
    if page_count > max_pages:
        raise UnsupportedFeature(
            f"{page_count} {unit}, above the limit of max_pages={max_pages}", feature="max_pages"
        )
