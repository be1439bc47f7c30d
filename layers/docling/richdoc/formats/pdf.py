"""PDFs: the header, pdfium's verdict on loading (a password is ``encrypted``, anything
else damage), the page limit, and text on some page (else OCR, or damage)."""

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
        _check_pdf_content(pdf, pages)
    except pdfium.PdfiumError as exc:  # whatever else pdfium fails on is the file's damage
        raise CorruptInput(f"the PDF is damaged: {exc}") from exc
    finally:
        pdf.close()
    return Inspection(page_count=pages)


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


def _check_pdf_content(pdf: Any, pages: int) -> None:
    """Refuse a PDF in which no page has text, saying why.

    Pages that carry images or vector paths where text would be (a scan, outlined text)
    need OCR. Pages with nothing renderable are no case for OCR: pdfium repairs truncated
    and fuzzed files into such pages, and a damaged page tree leaves pages it cannot
    load. Reads pages up to the first one with text, so a document with text costs one
    page or a few.
    """
    import pypdfium2 as pdfium

    found: dict[_Page, list[int]] = {content: [] for content in _Page}
    for index in range(pages):
        content = _page_content(pdf, index)
        if content is _Page.TEXT:
            return
        found[content].append(index + 1)
    if found[_Page.DRAWN]:
        raise UnsupportedFeature(
            f"no page has extractable text, and {len(found[_Page.DRAWN])} of the "
            f"{pages} pages carry images or vector paths where text would be (scanned or "
            "outlined text needs OCR, which is off in v1)",
            feature="ocr",
        )
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
