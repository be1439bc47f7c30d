"""Damaged and exotic real-world files get the kind that says what to do about them: a
recursive page tree, a PDF cut short or blank, image-only PDFs of every kind, OOXML
packages with two entries for one part name or damaged where zipfile fails oddly. In the
inspection, through `richdoc parse` (the worker, as in Lambda) and at the plan."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from richdoc_tools.cli import main

from richdoc.formats import ArchiveLimits, format_of, inspect_file
from richdoc.taxonomy import CorruptInput, PipelineError
from tests.support import damaged_inputs, parse_inputs

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

Make = Callable[[Path], Path]


def _inspect(path: Path) -> object:
    return inspect_file(
        path, format_of(path.name), max_pages=2000, archive=ArchiveLimits.for_ceiling(4096)
    )


def _with_hidden_sheet(path: Path, as_name: str = "") -> Path:
    """A workbook with a second, different xl/worksheets/sheet1.xml (or another name for
    that part)."""
    book = parse_inputs.xlsx(path.with_name("plain-" + path.name))
    with zipfile.ZipFile(book) as archive:
        hidden = archive.read("xl/worksheets/sheet1.xml").replace(b"item 1", b"HIDDEN")
    return damaged_inputs.with_duplicate_entry(
        path, book, "xl/worksheets/sheet1.xml", hidden, as_name=as_name
    )


def _duplicate(make: Callable[[Path], Path], name: str, part: str) -> Make:
    """``make``'s package named ``name`` in a folder, with a second, different ``part``."""

    def duplicated(folder: Path) -> Path:
        source = make(folder / f"plain-{name}")
        with zipfile.ZipFile(source) as archive:
            body = archive.read(part).replace(b"Slide", b"Other").replace(b"Master", b"Other")
        return damaged_inputs.with_duplicate_entry(folder / name, source, part, body)

    return duplicated


# ---- PDFs that pdfium cannot read whole ----------------------------------------------------

# name -> (make the file, its kind, feature, what the reason says)
PDFS: dict[str, tuple[Make, type[PipelineError], str | None, str]] = {
    "recursive page tree": (
        lambda p: damaged_inputs.recursive_page_tree(p / "loop.pdf"),
        CorruptInput,
        None,
        "the PDF is damaged: pdfium cannot load pages 1, 2 (of 2: a damaged page tree",
    ),
    "cut short": (
        lambda p: damaged_inputs.cut_short_pdf(p / "cut.pdf"),
        CorruptInput,
        None,
        "the PDF is damaged: its cross-reference table is missing or broken",
    ),
    "blank": (
        lambda p: damaged_inputs.blank_pdf(p / "blank.pdf"),
        CorruptInput,
        None,
        "the PDF is empty: none of its 2 pages has text, images or drawings",
    ),
}

# PDFs whose pages carry images or drawings but no text: only OCR reads them.
NEEDS_OCR: dict[str, tuple[Make, tuple[int, ...]]] = {
    "ccitt scan": (lambda p: damaged_inputs.ccitt_pdf(p / "fax.pdf"), (1,)),
    "jbig2 scan": (lambda p: damaged_inputs.jbig2_pdf(p / "scan.pdf"), (1,)),
    "large inline image": (lambda p: damaged_inputs.inline_image_pdf(p / "inline.pdf"), (1,)),
    "outlined text": (lambda p: damaged_inputs.outlined_text_pdf(p / "outlines.pdf"), (1,)),
    "image drawn by reportlab": (
        lambda p: parse_inputs.pdf(p / "photo.pdf", pages=2, text=False, image=True),
        (1, 2),
    ),
}


@pytest.mark.parametrize("case", PDFS)
def test_the_inspection_tells_damaged_and_empty_pdfs_from_ones_that_need_ocr(tmp_path, case):
    make, error, feature, reason = PDFS[case]
    with pytest.raises(PipelineError) as info:
        _inspect(make(tmp_path))
    assert (type(info.value), info.value.feature) == (error, feature)
    assert reason in info.value.reason


@pytest.mark.parametrize("case", NEEDS_OCR)
def test_the_inspection_lists_the_pages_only_ocr_reads(tmp_path, case):
    make, image_only = NEEDS_OCR[case]
    assert _inspect(make(tmp_path)).image_only == image_only  # type: ignore[attr-defined]


def test_the_image_only_pdfs_really_show_their_images(tmp_path):
    """The CCITT and JBIG2 data are genuine: pdfium decodes both to the same ink."""
    import pypdfium2 as pdfium

    dark = []
    for make in (damaged_inputs.ccitt_pdf, damaged_inputs.jbig2_pdf):
        pdf = pdfium.PdfDocument(make(tmp_path / f"{make.__name__}.pdf"))
        image = pdf[0].render(scale=0.5).to_pil().convert("L")
        dark.append(sum(image.histogram()[:128]))
        pdf.close()
    assert dark[0] == dark[1] > 1000


def test_a_pdf_whose_later_pages_cannot_be_loaded_is_left_to_docling(tmp_path):
    # A page pdfium cannot load is no page OCR reads; docling decides about it
    # (corrupt_input through `richdoc parse`, below).
    path = damaged_inputs.later_page_unloadable(tmp_path / "half.pdf")
    assert _inspect(path).page_count == 2  # type: ignore[attr-defined]


# ---- OOXML packages ------------------------------------------------------------------------

PACKAGES: dict[str, Make] = {
    "xlsx, two sheet1.xml": lambda p: _with_hidden_sheet(p / "book.xlsx"),
    "xlsx, sheet1.xml in another case": lambda p: _with_hidden_sheet(
        p / "book.xlsx", "XL/worksheets/Sheet1.xml"
    ),
    "xlsx, sheet1.xml and a name zipfile cuts at a NUL": lambda p: _with_hidden_sheet(
        p / "book.xlsx", "xl/worksheets/sheet1.xml\0.bak"
    ),
    "docx, two document.xml": _duplicate(parse_inputs.docx, "a.docx", "word/document.xml"),
    "pptx, two slide1.xml": _duplicate(parse_inputs.pptx, "a.pptx", "ppt/slides/slide1.xml"),
}


@pytest.mark.parametrize("case", PACKAGES)
def test_a_package_with_two_entries_for_one_part_is_corrupt(tmp_path, case):
    path = PACKAGES[case](tmp_path)
    with pytest.raises(CorruptInput, match="which one a reader takes is ambiguous"):
        _inspect(path)


def test_zipfile_reads_the_later_of_two_entries_and_a_first_entry_reader_the_other(tmp_path):
    """Why the package is refused: its content depends on the reader."""
    path = _with_hidden_sheet(tmp_path / "book.xlsx")
    with zipfile.ZipFile(path) as archive:
        first, later = (i for i in archive.infolist() if i.filename == "xl/worksheets/sheet1.xml")
        assert b"HIDDEN" in archive.read("xl/worksheets/sheet1.xml")  # openpyxl's view
        assert b"HIDDEN" not in archive.read(first) and b"HIDDEN" in archive.read(later)


ARCHIVES: dict[str, Callable[[Path, Path], Path]] = {
    "directory offsets before the start of the file": damaged_inputs.entry_before_the_start,
    "a name flagged UTF-8 that is not": damaged_inputs.name_not_utf8,
    "damaged bzip2 data": lambda p, s: damaged_inputs.damaged_compressed_entry(
        p, s, zipfile.ZIP_BZIP2
    ),
    "damaged LZMA data": lambda p, s: damaged_inputs.damaged_compressed_entry(
        p, s, zipfile.ZIP_LZMA
    ),
}


@pytest.mark.parametrize("case", ARCHIVES)
def test_archives_zipfile_fails_on_with_other_errors_are_corrupt_not_internal(tmp_path, case):
    # Before, these escaped the inspection as OSError, UnicodeDecodeError or LZMAError:
    # an internal failure, for a damaged file.
    source = parse_inputs.docx(tmp_path / "plain.docx")
    with pytest.raises(CorruptInput, match="the docx archive is damaged"):
        _inspect(ARCHIVES[case](tmp_path / "damaged.docx", source))


# ---- richdoc parse: the whole worker, as in Lambda ------------------------------------------

CLI_CASES: dict[str, tuple[Make, int, str, str | None]] = {
    "recursive page tree": (PDFS["recursive page tree"][0], 10, "corrupt_input", None),
    # Past the inspection: docling-parse fails to load it, and that is the document's too.
    "later page unloadable": (
        lambda p: damaged_inputs.later_page_unloadable(p / "half.pdf"),
        10,
        "corrupt_input",
        None,
    ),
    "cut short": (PDFS["cut short"][0], 10, "corrupt_input", None),
    "blank": (PDFS["blank"][0], 10, "corrupt_input", None),
    # With OCR off (RICHDOC_OCR_MODE=off, below): only OCR could read these.
    "ccitt scan": (NEEDS_OCR["ccitt scan"][0], 20, "unsupported_feature", "ocr"),
    "jbig2 scan": (NEEDS_OCR["jbig2 scan"][0], 20, "unsupported_feature", "ocr"),
    "outlined text": (NEEDS_OCR["outlined text"][0], 20, "unsupported_feature", "ocr"),
    "duplicate sheet": (PACKAGES["xlsx, two sheet1.xml"], 10, "corrupt_input", None),
    "duplicate slide": (PACKAGES["pptx, two slide1.xml"], 10, "corrupt_input", None),
    "entry before the start": (
        lambda p: damaged_inputs.entry_before_the_start(
            p / "shifted.docx", parse_inputs.docx(p / "plain.docx")
        ),
        10,
        "corrupt_input",
        None,
    ),
}


@pytest.mark.parametrize("case", CLI_CASES)
def test_richdoc_parse_exits_with_the_kind_of_each_damaged_file(
    tmp_path, capsys, monkeypatch, case
):
    make, code, kind, feature = CLI_CASES[case]
    if feature == "ocr":
        monkeypatch.setenv("RICHDOC_OCR_MODE", "off")
    source = make(tmp_path)
    assert main(["parse", str(source), "-o", str(tmp_path / "out.json")]) == code
    [line] = capsys.readouterr().err.splitlines()
    failure = json.loads(line)
    assert (failure["kind"], failure["feature"]) == (kind, feature)
    assert "unexpected error" not in failure["reason"]
