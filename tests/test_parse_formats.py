"""Pre-parse inspection: what a file is, and refusing the hostile ones before docling."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from richdoc.formats import (
    EXTENSIONS,
    LOADABLE_PACKAGE_KINDS,
    MIB,
    PACKAGE_KINDS,
    ArchiveLimits,
    DocFormat,
    format_of,
    inspect,
)
from richdoc.taxonomy import CorruptInput, ResourceLimit, UnsupportedFeature
from tests import parse_inputs

ROOMY = ArchiveLimits.for_ceiling(4096)


def _inspect(path: Path, fmt: DocFormat | None = None, *, max_pages: int = 2000, **limits):
    archive = ArchiveLimits(**{"max_unpacked_bytes": ROOMY.max_unpacked_bytes, **limits})
    return inspect(path, fmt or format_of(path.name), max_pages=max_pages, archive=archive)


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
    ],
)
def test_supported_extensions_map_to_formats(name, fmt):
    assert format_of(name) is fmt


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        ("scan.tiff", "format:tiff"),
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
        assert _inspect(path).pages == (None if fmt is DocFormat.DOCX else 2)
    else:
        with pytest.raises(UnsupportedFeature) as info:
            _inspect(path)
        assert info.value.feature == f"format:{kind}"


def test_a_package_is_judged_by_its_content_not_its_name(tmp_path):
    workbook = _as_kind(tmp_path / "w.xlsm", parse_inputs.xlsx(tmp_path / "w.xlsx"), "xlsm")
    named_xlsx = tmp_path / "macros.xlsx"
    named_xlsx.write_bytes(workbook.read_bytes())
    assert _inspect(named_xlsx).pages == 2  # a real xlsm under an .xlsx name
    document = _as_kind(tmp_path / "d.docm", parse_inputs.docx(tmp_path / "d.docx"), "docm")
    named_docx = tmp_path / "macros.docx"
    named_docx.write_bytes(document.read_bytes())
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(named_docx)
    assert info.value.feature == "format:docm"
    renamed = tmp_path / "renamed.docm"  # a plain docx under a .docm name
    renamed.write_bytes((tmp_path / "d.docx").read_bytes())
    assert _inspect(renamed).pages is None


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
    assert _inspect(path).pages is None


def test_slides_and_sheets_count_as_pages(tmp_path):
    assert _inspect(parse_inputs.pptx(tmp_path / "d.pptx", slides=4)).pages == 4
    assert _inspect(parse_inputs.xlsx(tmp_path / "b.xlsx", sheets=3)).pages == 3


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
    assert _inspect(path).pages is None


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
        inspect(path, DocFormat.DOCX, max_pages=10, archive=ArchiveLimits.for_ceiling(4))


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
    assert _inspect(path).pages is None


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
    assert _inspect(path).pages is None


# PDF (pdfium ships with the parse stack) ---------------------------------------------

docling = pytest.mark.docling


@docling
def test_a_pdf_reports_its_page_count(tmp_path):
    assert _inspect(parse_inputs.pdf(tmp_path / "a.pdf", pages=3)).pages == 3


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
    assert _inspect(tmp_path / "restricted.pdf").pages == 3


@docling
def test_an_image_only_pdf_needs_ocr(tmp_path):
    path = parse_inputs.pdf(tmp_path / "scan.pdf", text=False, image=True)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path)
    assert info.value.feature == "ocr"


@docling
def test_a_pdf_with_text_on_some_pages_passes(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=parse_inputs.pdf(tmp_path / "scan.pdf", text=False, image=True))
    writer.append(parse_inputs.pdf(tmp_path / "text.pdf", pages=1))
    writer.write(tmp_path / "mixed.pdf")
    assert _inspect(tmp_path / "mixed.pdf").pages == 4


@docling
def test_a_pdf_over_max_pages_is_unsupported(tmp_path):
    path = parse_inputs.pdf(tmp_path / "long.pdf", pages=5)
    with pytest.raises(UnsupportedFeature) as info:
        _inspect(path, max_pages=4)
    assert info.value.feature == "max_pages"
