"""Pre-parse inspection: what a file is, and refusing the hostile ones before docling."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from richdoc.formats import EXTENSIONS, ArchiveLimits, DocFormat, format_of, inspect_file
from richdoc.formats.archive import MIB
from richdoc.formats.ooxml import LOADABLE_PACKAGE_KINDS, PACKAGE_KINDS
from richdoc.formats.sheets import HYPERLINK_CELLS_BUDGET, MAX_SHEET_CELLS, MERGED_CELLS_BUDGET
from richdoc.taxonomy import CorruptInput, ResourceLimit, UnsupportedFeature
from tests.support import parse_inputs

ROOMY = ArchiveLimits.for_ceiling(4096)


def _inspect(path: Path, fmt: DocFormat | None = None, *, max_pages: int = 2000, **limits):
    archive = ArchiveLimits(**{"max_unpacked_bytes": ROOMY.max_unpacked_bytes, **limits})
    return inspect_file(path, fmt or format_of(path.name), max_pages=max_pages, archive=archive)


def _ooxml(path: Path, parts: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        archive.writestr("[Content_Types].xml", b'<?xml version="1.0"?><Types/>')
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.pdf", DocFormat.PDF),
        ("A.PDF", DocFormat.PDF),
        ("x/y/contract.docx", DocFormat.DOCX),
        ("deck.pptx", DocFormat.PPTX),
        ("book.xlsx", DocFormat.XLSX),
        ("page.html", DocFormat.HTML),
        ("page.htm", DocFormat.HTML),
        ("notes.md", DocFormat.MD),
        ("notes.markdown", DocFormat.MD),
        ("macros.xlsm", DocFormat.XLSX),
        ("template.xltx", DocFormat.XLSX),
        ("macros.docm", DocFormat.DOCX),
        ("letter.dotx", DocFormat.DOCX),
        ("show.ppsx", DocFormat.PPTX),
        ("macros.PPTM", DocFormat.PPTX),
        ("page.xhtml", DocFormat.HTML),
        ("analysis.Rmd", DocFormat.MD),
        ("notes.txt", DocFormat.MD),
        ("fax.TIFF", DocFormat.IMAGE),
        ("photo.jpeg", DocFormat.IMAGE),
    ],
)
def test_supported_extensions_map_to_formats(name, fmt):
    assert format_of(name) is fmt


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        ("scan.psd", "format:psd"),
        ("legacy.DOC", "format:doc"),
        ("README", "format:none"),
        ("dotfile.", "format:none"),
    ],
)
def test_other_extensions_are_unsupported_with_a_format_tag(name, tag):
    with pytest.raises(UnsupportedFeature) as info:
        format_of(name)
    assert info.value.feature == tag


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        ("backup.tar.gz", "format:tar.gz"),
        ("BACKUP.TAR.BZ2", "format:tar.bz2"),
        ("logs.tar.xz", "format:tar.xz"),
        ("notes.md.gz", "format:md.gz"),
        ("plain.gz", "format:gz"),
        ("report 1.2.gz", "format:gz"),
        (".tar.gz", "format:gz"),
        ("archive.tgz", "format:tgz"),
        ("release.v2.zip", "format:zip"),
    ],
)
def test_a_compressed_file_is_tagged_with_the_extension_inside_the_compression(name, tag):
    with pytest.raises(UnsupportedFeature) as info:
        format_of(name)
    assert info.value.feature == tag


@pytest.mark.docling
def test_the_extension_table_mirrors_doclings_own():
    from docling.datamodel.base_models import FormatToExtensions, InputFormat

    doclings = {
        fmt: sorted({ext.lower() for ext in FormatToExtensions[InputFormat(fmt.value)]})
        for fmt in DocFormat
    }
    assert {fmt: sorted(exts) for fmt, exts in EXTENSIONS.items()} == doclings


def _as_kind(path: Path, source: Path, kind: str) -> Path:
    """``source``'s parts under ``path``, its main part retyped as a ``kind`` package."""
    [main_type] = [ct for ct, k in PACKAGE_KINDS.items() if k == kind]
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "[Content_Types].xml":
                for content_type in PACKAGE_KINDS:
                    data = data.replace(f'"{content_type}"'.encode(), f'"{main_type}"'.encode())
            dst.writestr(info.filename, data)
    return path


_SOURCES = {
    DocFormat.DOCX: parse_inputs.docx,
    DocFormat.PPTX: lambda path: parse_inputs.pptx(path, slides=2),
    DocFormat.XLSX: lambda path: parse_inputs.xlsx(path, sheets=2),
}
_KINDS = sorted((format_of(f"x.{kind}"), kind) for kind in PACKAGE_KINDS.values())


@pytest.mark.parametrize(("fmt", "kind"), _KINDS, ids=[kind for _, kind in _KINDS])
def test_macro_enabled_and_template_packages_pass_inspection_when_docling_loads_them(
    tmp_path, fmt, kind
):
    path = _as_kind(tmp_path / f"a.{kind}", _SOURCES[fmt](tmp_path / f"source.{fmt}"), kind)
    if kind in LOADABLE_PACKAGE_KINDS:  # slides and sheets still count as pages
        assert _inspect(path).page_count == (None if fmt is DocFormat.DOCX else 2)
    else:
        with pytest.raises(UnsupportedFeature) as info:
            _inspect(path)
        assert info.value.feature == f"format:{kind}"


def test_a_package_is_judged_by_its_content_not_its_name(tmp_path):
    workbook = _as_kind(tmp_path / "w.xlsm", parse_inputs.xlsx(tmp_path / "w.xlsx"), "xlsm")
    named_xlsx = tmp_path / "macros.xlsx"
    named_xlsx.write_bytes(workbook.read_bytes())
    assert _inspect(named_xlsx).page_count == 2  # a real xlsm under an .xlsx name
    document = _as_kind(tmp_path / "d.docm", parse_inputs.docx(tmp_path / "d.docx"), "docm")
    named_docx = tmp_path / "macros.docx"
    named_docx.write_bytes(document.read_bytes())
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(named_docx)
    assert info.value.feature == "format:docm"
    renamed = tmp_path / "renamed.docm"  # a plain docx under a .docm name
    renamed.write_bytes((tmp_path / "d.docx").read_bytes())
    assert _inspect(renamed).page_count is None


def test_a_package_of_another_format_is_corrupt(tmp_path):
    path = tmp_path / "deck.docx"
    path.write_bytes(parse_inputs.pptx(tmp_path / "deck.pptx").read_bytes())
    with pytest.raises(CorruptInput, match="not a docx: the package is a pptx"):
        _inspect(path)


def test_a_malformed_content_types_part_is_corrupt(tmp_path):
    path = tmp_path / "bad.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", b"<Types><Override></Types>")
    with pytest.raises(CorruptInput, match="not well-formed"):
        _inspect(path)


@pytest.mark.docling
@pytest.mark.slow
def test_the_loadable_package_kinds_are_the_ones_doclings_backends_convert(tmp_path):
    from docling.datamodel.base_models import ConversionStatus, InputFormat
    from docling.document_converter import DocumentConverter

    converted = set()
    for fmt, kind in _KINDS:
        path = _as_kind(tmp_path / f"a.{kind}", _SOURCES[fmt](tmp_path / f"s.{fmt}"), kind)
        converter = DocumentConverter(allowed_formats=[InputFormat(fmt.value)])
        if converter.convert(path, raises_on_error=False).status is ConversionStatus.SUCCESS:
            converted.add(kind)
    assert converted == LOADABLE_PACKAGE_KINDS


@pytest.mark.parametrize("name", ["empty.docx", "empty.pdf", "empty.html", "empty.md"])
def test_zero_byte_files_are_corrupt(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(CorruptInput, match="empty"):
        _inspect(path)


def test_a_pdf_named_docx_is_corrupt(tmp_path):
    path = tmp_path / "contract.docx"
    path.write_bytes(b"%PDF-1.7\n" + b"0" * 100)
    with pytest.raises(CorruptInput, match="no ZIP signature"):
        _inspect(path)


def test_random_bytes_named_docx_are_corrupt(tmp_path):
    path = parse_inputs.random_bytes(tmp_path / "noise.docx")
    with pytest.raises(CorruptInput):
        _inspect(path)


def test_a_truncated_docx_is_corrupt(tmp_path):
    whole = parse_inputs.docx(tmp_path / "whole.docx")
    path = parse_inputs.truncated(tmp_path / "cut.docx", whole)
    with pytest.raises(CorruptInput, match="truncated"):
        _inspect(path)


def test_a_zip_without_content_types_is_not_ooxml(tmp_path):
    path = tmp_path / "plain.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(CorruptInput, match=r"\[Content_Types\]"):
        _inspect(path)


def test_a_real_docx_passes_and_has_no_pages(tmp_path):
    path = parse_inputs.docx(tmp_path / "ok.docx")
    assert _inspect(path).page_count is None


def test_slides_and_sheets_count_as_pages(tmp_path):
    assert _inspect(parse_inputs.pptx(tmp_path / "d.pptx", slides=4)).page_count == 4
    assert _inspect(parse_inputs.xlsx(tmp_path / "b.xlsx", sheets=3)).page_count == 3


def test_more_slides_than_max_pages_is_unsupported(tmp_path):
    path = parse_inputs.pptx(tmp_path / "d.pptx", slides=4)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path, max_pages=3)
    assert info.value.feature == "max_pages"


def test_more_sheets_than_max_pages_is_unsupported(tmp_path):
    path = parse_inputs.xlsx(tmp_path / "b.xlsx", sheets=3)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path, max_pages=2)
    assert info.value.feature == "max_pages"


# Archive bombs -----------------------------------------------------------------------


def test_a_highly_compressed_part_is_refused_as_a_bomb(tmp_path):
    path = parse_inputs.zip_bomb_ratio(tmp_path / "bomb.docx")
    with pytest.raises(CorruptInput, match="decompression bomb"):
        _inspect(path)


def test_small_parts_may_compress_well(tmp_path):
    # 512 KiB of zeros compresses about 1,000-fold but stays under the ratio floor.
    path = _ooxml(tmp_path / "ok.docx", {"word/document.xml": b"<w/>" + b" " * (512 << 10)})
    assert _inspect(path).page_count is None


def test_thousands_of_entries_are_refused_from_the_end_record(tmp_path):
    path = parse_inputs.zip_bomb_entries(tmp_path / "entries.docx", entries=2_000)
    with pytest.raises(CorruptInput, match="2001 entries"):
        _inspect(path, max_entries=1_000)


def test_entry_counts_are_read_from_zip64_records(tmp_path):
    # More than 65,535 entries forces the ZIP64 end records.
    path = parse_inputs.zip_bomb_entries(tmp_path / "entries.docx", entries=70_000)
    with pytest.raises(CorruptInput, match="70001 entries"):
        _inspect(path)


def test_an_archive_larger_than_the_ceiling_allows_is_a_resource_limit(tmp_path):
    incompressible = parse_inputs.random_bytes(tmp_path / "noise.bin", size=3 * MIB).read_bytes()
    path = _ooxml(tmp_path / "big.docx", {"word/media/image1.bin": incompressible})
    with pytest.raises(ResourceLimit, match="unpacks to 3 MiB"):
        inspect_file(path, DocFormat.DOCX, max_pages=10, archive=ArchiveLimits.for_ceiling(4))


def test_a_dtd_with_entity_expansion_is_refused(tmp_path):
    whole = parse_inputs.docx(tmp_path / "whole.docx")
    path = parse_inputs.xml_entity_expansion(tmp_path / "laughs.docx", whole)
    with pytest.raises(CorruptInput, match=r"word/document\.xml.*DTD"):
        _inspect(path)


def test_a_utf16_dtd_is_refused(tmp_path):
    part = '\ufeff<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE x [<!ENTITY a "b">]><x/>'
    path = _ooxml(tmp_path / "u16.docx", {"word/document.xml": part.encode("utf-16-le")})
    with pytest.raises(CorruptInput, match="DTD"):
        _inspect(path)


def test_a_dtd_across_a_read_boundary_is_refused(tmp_path):
    padding = b"<x>" + b"a" * ((1 << 16) - 7)  # the keyword straddles the first chunk
    part = padding + b'<!DOCTYPE x [<!ENTITY a "b">]></x>'
    path = _ooxml(tmp_path / "split.docx", {"word/document.xml": part})
    with pytest.raises(CorruptInput, match="DTD"):
        _inspect(path)


def test_binary_parts_that_embed_a_dtd_are_not_xml_and_pass(tmp_path):
    # Printer settings in real decks carry a plist with a DOCTYPE.
    blob = b"\x02\x00\x00\x00" + b'<?xml version="1.0"?><!DOCTYPE plist><plist/>'
    path = _ooxml(tmp_path / "deck.docx", {"ppt/printerSettings/printerSettings1.bin": blob})
    assert _inspect(path).page_count is None


def test_password_protected_ooxml_is_unsupported_as_encrypted(tmp_path):
    ole = bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 500 + "EncryptedPackage".encode("utf-16-le")
    path = tmp_path / "locked.docx"
    path.write_bytes(ole)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path)
    assert info.value.feature == "encrypted"


def test_a_legacy_office_file_named_docx_is_corrupt(tmp_path):
    path = tmp_path / "old.docx"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 500)
    with pytest.raises(CorruptInput, match="legacy"):
        _inspect(path)


# Text formats ------------------------------------------------------------------------


def test_binary_bytes_named_html_are_corrupt(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(b"<html>\x00\x01\x02</html>")
    with pytest.raises(CorruptInput, match="NUL"):
        _inspect(path)


def test_utf16_html_with_a_byte_order_mark_passes(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes("\ufeff<html><p>hello</p></html>".encode("utf-16"))
    assert _inspect(path).page_count is None


# PDF (pdfium ships with the parse stack) ---------------------------------------------

docling = pytest.mark.docling


@docling
def test_a_pdf_reports_its_page_count(tmp_path):
    assert _inspect(parse_inputs.pdf(tmp_path / "a.pdf", pages=3)).page_count == 3


@docling
def test_bytes_without_a_pdf_header_are_corrupt(tmp_path):
    path = parse_inputs.random_bytes(tmp_path / "noise.pdf")
    with pytest.raises(CorruptInput, match="not a PDF"):
        _inspect(path)


@docling
def test_a_docx_named_pdf_is_corrupt(tmp_path):
    docx = parse_inputs.docx(tmp_path / "a.docx")
    path = tmp_path / "a.pdf"
    path.write_bytes(docx.read_bytes())
    with pytest.raises(CorruptInput, match="not a PDF"):
        _inspect(path)


@docling
def test_a_truncated_pdf_is_corrupt(tmp_path):
    path = parse_inputs.truncated(tmp_path / "cut.pdf", parse_inputs.pdf(tmp_path / "a.pdf"))
    with pytest.raises(CorruptInput, match="cannot be loaded"):
        _inspect(path)


@docling
def test_a_password_protected_pdf_is_unsupported_as_encrypted(tmp_path):
    path = parse_inputs.encrypted_pdf(tmp_path / "locked.pdf")
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path)
    assert info.value.feature == "encrypted"


@docling
def test_a_pdf_with_only_an_owner_password_opens(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=parse_inputs.pdf(tmp_path / "a.pdf"))
    writer.encrypt(user_password="", owner_password="owner")
    writer.write(tmp_path / "restricted.pdf")
    assert _inspect(tmp_path / "restricted.pdf").page_count == 3


@docling
def test_an_image_only_pdf_lists_its_pages_for_ocr(tmp_path):
    path = parse_inputs.pdf(tmp_path / "scan.pdf", text=False, image=True)
    assert _inspect(path).image_only == (1, 2, 3)


@docling
def test_a_pdf_with_text_on_some_pages_passes(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=parse_inputs.pdf(tmp_path / "scan.pdf", text=False, image=True))
    writer.append(parse_inputs.pdf(tmp_path / "text.pdf", pages=1))
    writer.write(tmp_path / "mixed.pdf")
    inspected = _inspect(tmp_path / "mixed.pdf")
    assert (inspected.page_count, inspected.image_only) == (4, (1, 2, 3))


@docling
def test_a_pdf_over_max_pages_is_unsupported(tmp_path):
    path = parse_inputs.pdf(tmp_path / "long.pdf", pages=5)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path, max_pages=4)
    assert info.value.feature == "max_pages"


# ---- encrypted archive entries ------------------------------------------------------------


@pytest.mark.parametrize("make", [parse_inputs.docx, parse_inputs.xlsx, parse_inputs.pptx])
def test_an_archive_with_password_protected_entries_is_unsupported_as_encrypted(tmp_path, make):
    # zipfile cannot read such an entry without the password; before, that error escaped
    # the inspection and was retried as transient.
    source = make(tmp_path / f"plain.{make.__name__}")
    locked = parse_inputs.encrypted_entries(tmp_path / f"locked.{make.__name__}", source)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(locked)
    assert info.value.feature == "encrypted"
    assert "password-protected" in info.value.reason


# ---- XLSX used ranges ---------------------------------------------------------------------


def _sheet_cells(path: Path, limit: int) -> None:
    _inspect(path, max_sheet_cells=limit)


def test_one_cell_at_the_last_row_and_column_is_refused_as_sheet_too_large(tmp_path):
    # The 4.9 KB workbook: a used range of 17 billion cells, which docling would
    # allocate one by one.
    path = parse_inputs.sparse_xlsx(tmp_path / "far.xlsx", "XFD1048576")
    assert path.stat().st_size < 10_000
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path)
    assert info.value.feature == "sheet_too_large"
    assert "17,179,869,184 cells" in info.value.reason
    assert "xl/worksheets/sheet1.xml: A1:XFD1048576" in info.value.reason


def test_a_used_range_within_the_limit_passes(tmp_path):
    _sheet_cells(parse_inputs.sparse_xlsx(tmp_path / "near.xlsx", "J100"), limit=1000)
    with pytest.raises(UnsupportedFeature):
        _sheet_cells(parse_inputs.sparse_xlsx(tmp_path / "near.xlsx", "J101"), limit=1000)


def test_the_default_limit_is_what_the_biggest_tier_holds_as_empty_cells():
    # 9,216 MB (the ceiling of a 10,240 MB tier) less 290 MB for the zygote, at the 232
    # bytes per cell measured for docling's XLSX backend (docs/parse.md).
    assert ArchiveLimits.for_ceiling(4096).max_sheet_cells == MAX_SHEET_CELLS
    assert MAX_SHEET_CELLS <= (9216 - 290) * MIB // 232


def test_the_limit_applies_to_all_sheets_together(tmp_path):
    # docling keeps every sheet's cells until the workbook is converted.
    from openpyxl import Workbook

    book = Workbook()
    for index in range(3):
        sheet = book.active if index == 0 else book.create_sheet()
        sheet["A1"], sheet["J40"] = "start", "end"  # 400 cells each
    book.save(tmp_path / "three.xlsx")
    _sheet_cells(tmp_path / "three.xlsx", limit=1200)
    with pytest.raises(UnsupportedFeature, match="1,200 cells"):
        _sheet_cells(tmp_path / "three.xlsx", limit=1199)


def test_a_declared_dimension_alone_does_not_count(tmp_path):
    # docling (openpyxl) ignores <dimension>; a wrong one must not refuse a workbook.
    path = parse_inputs.xlsx_with_sheet_xml(
        tmp_path / "dim.xlsx", '<row r="1"><c r="A1"><v>1</v></c></row>'
    )
    data = _rewrite(path, b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>')
    _sheet_cells(data, limit=10)


def _rewrite(path: Path, old: bytes, new: bytes) -> Path:
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts["xl/worksheets/sheet1.xml"] = parts["xl/worksheets/sheet1.xml"].replace(old, new)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("case", "sheet_data", "after", "refused"),
    [
        (
            "styled empty far cell",
            '<row r="1"><c r="A1"><v>1</v></c><c r="XFD9" s="1"/></row>',
            "",
            False,
        ),
        (
            "far formula",
            '<row r="1"><c r="A1"><v>1</v></c><c r="XFD9"><f>1+1</f></c></row>',
            "",
            True,
        ),
        (
            "cells without r follow their row and the previous cell",
            '<row r="1"><c r="A1"><v>1</v></c></row>'
            '<row r="1048576"><c><v>1</v></c><c><v>2</v></c></row>',
            "",
            True,
        ),
        (
            "a reference written as character references",
            '<row r="1"><c r="A1"><v>1</v></c><c r="&#88;&#70;&#68;9"><v>2</v></c></row>',
            "",
            True,
        ),
        (
            "a small merged range in the far corner",
            '<row r="1"><c r="A1"><v>1</v></c></row>',
            '<mergeCells count="1"><mergeCell ref="XFC1048575:XFD1048576"/></mergeCells>',
            True,
        ),
        (
            "a merged range bigger than docling's budget is clipped to the values",
            '<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>1</v></c></row>',
            '<mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>',
            False,
        ),
        (
            "a hyperlink in the far corner (openpyxl sets its target as the value)",
            '<row r="1"><c r="A1"><v>1</v></c></row>',
            '<hyperlinks><hyperlink ref="XFD1048576" r:id="rId9"/></hyperlinks>',
            True,
        ),
    ],
)
def test_cells_count_the_way_docling_s_backend_reads_them(
    tmp_path, case, sheet_data, after, refused
):
    path = parse_inputs.xlsx_with_sheet_xml(tmp_path / "crafted.xlsx", sheet_data, after=after)
    if refused:
        with pytest.raises(UnsupportedFeature) as info:
            _sheet_cells(path, limit=1000)
        assert info.value.feature == "sheet_too_large"
    else:
        _sheet_cells(path, limit=1000)


def test_a_namespace_prefixed_worksheet_counts_too(tmp_path):
    path = parse_inputs.sparse_xlsx(tmp_path / "far.xlsx", "Z99")
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    sheet = sheet.replace("<worksheet xmlns=", "<x:worksheet xmlns:x=").replace(
        "</worksheet>", "</x:worksheet>"
    )
    for tag in (
        "sheetData",
        "row",
        "c",
        "v",
        "is",
        "t",
        "sheetPr",
        "dimension",
        "sheetViews",
        "sheetView",
        "selection",
        "sheetFormatPr",
        "pageMargins",
        "outlinePr",
        "pageSetUpPr",
    ):
        sheet = sheet.replace(f"<{tag} ", f"<x:{tag} ").replace(f"<{tag}>", f"<x:{tag}>")
        sheet = sheet.replace(f"</{tag}>", f"</x:{tag}>").replace(f"<{tag}/>", f"<x:{tag}/>")
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    from openpyxl import load_workbook

    assert load_workbook(path).active["Z99"].value == "far"  # openpyxl reads it
    with pytest.raises(UnsupportedFeature):
        _sheet_cells(path, limit=1000)


@pytest.mark.docling
def test_the_range_budgets_are_docling_s():
    from docling.backend import msexcel_backend

    assert msexcel_backend._MAX_MERGED_CELLS == MERGED_CELLS_BUDGET
    assert msexcel_backend._MAX_HYPERLINK_CELLS == HYPERLINK_CELLS_BUDGET
