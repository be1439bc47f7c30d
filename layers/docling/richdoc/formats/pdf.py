"""PDFs: the header, pdfium's verdict on loading (a password is ``encrypted``, anything
else damage), the page limit, and what each page holds: text, or only images and
drawings (a scan: only OCR reads it), or nothing (damage, when no page holds anything)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from richdoc.formats.inspection import Inspection, check_pages
from richdoc.taxonomy import CorruptInput, UnsupportedFeature

_PDF_MAGIC = b"%PDF-"
# Acrobat accepts the header anywhere in the first 1,024 bytes; so does pdfium.
_PDF_HEADER_WINDOW = 1024


def inspect_pdf(path: Path, max_pages: int) -> Inspection:
    with path.open("rb") as f:
        head = f.read(_PDF_HEADER_WINDOW)
    if _PDF_MAGIC not in head:
        raise CorruptInput(f"not a PDF: no {_PDF_MAGIC.decode()} header in the first 1024 bytes")

    # pdfium ships with docling and tells a password apart from damage, which docling's
    # own loader reports alike ("could not load document").
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        if exc.err_code in (pdfium.raw.FPDF_ERR_PASSWORD, pdfium.raw.FPDF_ERR_SECURITY):
            raise UnsupportedFeature("the PDF is encrypted", feature="encrypted") from exc
        raise CorruptInput(f"the PDF cannot be loaded: {exc}") from exc
    try:
        pages = len(pdf)
        if pages == 0:
            raise CorruptInput("the PDF has no pages")
        check_pages(pages, max_pages, "pages")
        image_only = _check_pdf_content(pdf, pages)
    except pdfium.PdfiumError as exc:  # whatever else pdfium fails on is the file's damage
        raise CorruptInput(f"the PDF is damaged: {exc}") from exc
    finally:
        pdf.close()
    return Inspection(page_count=pages, image_only=image_only)


class _Page(StrEnum):
    """What the inspection finds on a PDF page, by what pdfium gives it."""

    TEXT = "text"  # characters pdfium can extract
    DRAWN = "drawn"  # no text, but images or vector paths: a scan, or outlined text
    BLANK = "blank"  # nothing that paints text, an image or a path
    UNLOADABLE = "unloadable"  # pdfium cannot load the page (a damaged page tree)


def _page_content(pdf: Any, index: int) -> _Page:
    """What page ``index`` of an open ``pypdfium2.PdfDocument`` holds (Form XObjects
    included: pdfium descends into them)."""
    import pypdfium2 as pdfium

    try:
        page = pdf[index]
    except pdfium.PdfiumError:
        return _Page.UNLOADABLE
    try:
        textpage = page.get_textpage()
        try:
            if textpage.count_chars() > 0:
                return _Page.TEXT
        finally:
            textpage.close()
        drawn = page.get_objects(
            filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE, pdfium.raw.FPDF_PAGEOBJ_PATH]
        )
        return _Page.DRAWN if next(drawn, None) is not None else _Page.BLANK
    except pdfium.PdfiumError:
        return _Page.UNLOADABLE
    finally:
        page.close()


def _check_pdf_content(pdf: Any, pages: int) -> tuple[int, ...]:
    """The pages without text that carry images or vector paths where text would be (a
    scan, outlined text: only OCR reads them); refuse a PDF in which no page has text or
    such content, saying why.

    Pages with nothing renderable are no case for OCR: pdfium repairs truncated and
    fuzzed files into such pages, and a damaged page tree leaves pages it cannot load.
    Every page is read (about a millisecond a page), so that no scanned page of a mixed
    document goes unnoticed: OCR reads it, or the result names it as unread.
    """
    import pypdfium2 as pdfium

    found: dict[_Page, list[int]] = {content: [] for content in _Page}
    for index in range(pages):
        found[_page_content(pdf, index)].append(index + 1)
    if found[_Page.TEXT] or found[_Page.DRAWN]:
        return tuple(found[_Page.DRAWN])
    nothing = "text, images or drawings"
    unloadable = found[_Page.UNLOADABLE]
    if unloadable:
        others = ", and no other page has " + nothing if len(unloadable) < pages else ""
        raise CorruptInput(
            f"the PDF is damaged: pdfium cannot load {_page_list(unloadable)} (of {pages}: "
            f"a damaged page tree, such as a Kids entry that refers back to an "
            f"ancestor){others}"
        )
    if not pdfium.raw.FPDF_DocumentHasValidCrossReferenceTable(pdf.raw):
        raise CorruptInput(
            "the PDF is damaged: its cross-reference table is missing or broken (a file "
            f"cut short or altered), and none of the {pages} pages pdfium recovered has "
            f"{nothing}"
        )
    raise CorruptInput(
        f"the PDF is empty: none of its {pages} pages has {nothing} (blank pages, or page "
        "content pdfium cannot decode)"
    )


def _page_list(numbers: list[int], shown: int = 5) -> str:
    listed = ", ".join(str(n) for n in numbers[:shown])
    more = f" and {len(numbers) - shown} more" if len(numbers) > shown else ""
    return f"page{'s' if len(numbers) > 1 else ''} {listed}{more}"
