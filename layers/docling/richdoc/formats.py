"""What an input file is, and whether it is safe to hand to docling.

Two stages. ``format_of`` maps a file name to a supported format by its extension alone
(cheap, no I/O: the caller uses it to pick the pipeline and the cache key before
anything is downloaded). ``inspect_file`` looks at the bytes and runs inside the isolated
parse child, before docling: it refuses empty files, wrong magic, decompression bombs,
DTDs in OOXML parts, OOXML packages docling cannot load, encrypted documents, documents
over the page limit and PDFs without extractable text, each with the taxonomy error the
design page names.

Every read here is bounded: archive sizes come from the central directory (which
``zipfile`` enforces on read), and parts are scanned in fixed-size chunks.
"""

from __future__ import annotations

import errno
import lzma
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePath
from typing import IO, Any, BinaryIO
from xml.etree import ElementTree
from xml.parsers import expat

from richdoc.taxonomy import CorruptInput, ResourceLimit, UnsupportedFeature

_CHUNK = 1 << 16
MIB = 1 << 20


class DocFormat(StrEnum):
    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    HTML = "html"
    MD = "md"

    @property
    def is_ooxml(self) -> bool:
        return self in (DocFormat.DOCX, DocFormat.PPTX, DocFormat.XLSX)


# The file extensions docling accepts for each supported format, exactly as docling's
# ``FormatToExtensions`` (docling.datamodel.base_models) lists them, lower-cased.
# Mirrored, not imported: this module runs where docling is not installed (the Lambda
# zip functions and the caller's side). tests/parse/test_parse_formats.py fails on any drift.
EXTENSIONS: dict[DocFormat, tuple[str, ...]] = {
    DocFormat.PDF: ("pdf",),
    DocFormat.DOCX: ("docx", "dotx", "docm", "dotm"),
    DocFormat.PPTX: ("pptx", "potx", "ppsx", "pptm", "potm", "ppsm"),
    DocFormat.XLSX: ("xlsx", "xlsm", "xltx", "xltm"),
    DocFormat.HTML: ("html", "htm", "xhtml"),
    DocFormat.MD: ("md", "markdown", "txt", "text", "qmd", "rmd"),
}
_FORMAT_OF_EXTENSION = {ext: fmt for fmt, exts in EXTENSIONS.items() for ext in exts}

# A compressed file is tagged with the extension of what was compressed as well
# ("backup.tar.gz" gives "format:tar.gz", "notes.md.gz" "format:md.gz"), so the tag says
# what the file is. The inner suffix counts only when it looks like an extension: a
# letter, then at most seven letters or digits ("report 1.2.gz" gives "format:gz").
_COMPRESSION_SUFFIXES = frozenset({"gz", "bz2", "xz", "zst", "lz", "lz4", "lzma", "z", "br"})
_INNER_EXTENSION = re.compile(r"[a-z][a-z0-9]{0,7}")


def _extension_tag(name: str) -> str:
    """The extension that names a file's format in ``format:<ext>`` tags ("" if none)."""
    path = PurePath(name)
    ext = path.suffix.lower().lstrip(".")
    if ext in _COMPRESSION_SUFFIXES:
        inner = PurePath(path.stem).suffix.lower().lstrip(".")
        if _INNER_EXTENSION.fullmatch(inner):
            return f"{inner}.{ext}"
    return ext


def format_of(name: str) -> DocFormat:
    """The supported format a file name claims, or ``UnsupportedFeature('format:<ext>')``."""
    fmt = _FORMAT_OF_EXTENSION.get(PurePath(name).suffix.lower().lstrip("."))
    if fmt is None:
        tag = f"format:{_extension_tag(name) or 'none'}"
        supported = ", ".join(sorted(_FORMAT_OF_EXTENSION))
        raise UnsupportedFeature(
            f"{PurePath(name).name!r}: supported formats are {supported}", feature=tag
        )
    return fmt


# docling's XLSX backend visits every cell of the rectangle that spans a sheet's cells
# with values and its merged ranges (``_find_true_data_bounds``, then ``iter_rows``), and
# openpyxl creates a cell object for each: measured 232 bytes and about 5 us per cell
# (docling 2.143, openpyxl 3.1; docs/parse.md). One value at A1 and one at XFD1048576
# make 17 billion. Cells stay allocated until the whole workbook is converted, so the
# limit is on the sum over the workbook's sheets.
#
# A workbook whose used ranges span more cells than the biggest Lambda tier can hold as
# empty cells (10,240 MB: a 9,216 MB ceiling, less the zygote's 290 MB, / 232 bytes =
# 40 million) cannot convert at any tier: it is refused before docling opens it.
MAX_SHEET_CELLS = 40_000_000


@dataclass(frozen=True)
class ArchiveLimits:
    """Thresholds that refuse a crafted OOXML archive before docling unpacks it.

    A real document never comes near them: a 2,000-slide deck has about 8,000 parts,
    and XML deflates 5 to 30 fold (about 200 fold for extremely repetitive XML),
    while deflate bombs expand about 1,000 fold.
    """

    max_unpacked_bytes: int  # declared uncompressed total; derived from the memory ceiling
    max_sheet_cells: int = MAX_SHEET_CELLS  # XLSX: cells of the used ranges, all sheets
    max_entries: int = 10_000
    max_ratio: float = 250.0
    ratio_floor_bytes: int = MIB  # small parts may compress arbitrarily well
    max_central_directory_bytes: int = 16 * MIB

    @classmethod
    def for_ceiling(cls, mem_ceiling_mb: int) -> ArchiveLimits:
        # XML DOMs take several times their text size in memory: an archive that unpacks
        # to more than half the ceiling cannot be parsed within it.
        return cls(max_unpacked_bytes=mem_ceiling_mb * MIB // 2)


@dataclass(frozen=True)
class Inspection:
    """What the pre-parse inspection learned."""

    pages: int | None  # PDF pages, PPTX slides, XLSX sheets; None where docling has no pages


def inspect_file(
    path: Path, fmt: DocFormat, *, max_pages: int, archive: ArchiveLimits
) -> Inspection:
    size = path.stat().st_size
    if size == 0:
        raise CorruptInput("the file is empty (0 bytes)")
    if fmt is DocFormat.PDF:
        return _inspect_pdf(path, max_pages)
    if fmt.is_ooxml:
        return _inspect_ooxml(path, fmt, max_pages, archive)
    return _inspect_text(path)


def _check_pages(pages: int, max_pages: int, unit: str) -> None:
    if pages > max_pages:
        raise UnsupportedFeature(
            f"{pages} {unit}, above the limit of max_pages={max_pages}", feature="max_pages"
        )


# PDF ------------------------------------------------------------------------------------

_PDF_MAGIC = b"%PDF-"
# Acrobat accepts the header anywhere in the first 1,024 bytes; so does pdfium.
_PDF_HEADER_WINDOW = 1024


def _inspect_pdf(path: Path, max_pages: int) -> Inspection:
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
        _check_pages(pages, max_pages, "pages")
        _check_pdf_content(pdf, pages)
    except pdfium.PdfiumError as exc:  # whatever else pdfium fails on is the file's damage
        raise CorruptInput(f"the PDF is damaged: {exc}") from exc
    finally:
        pdf.close()
    return Inspection(pages=pages)


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


# OOXML ----------------------------------------------------------------------------------

_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
# A password-protected OOXML file is an OLE compound file holding this stream.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")

_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")

_PAGE_PARTS: dict[DocFormat, tuple[re.Pattern[str], str]] = {
    DocFormat.PPTX: (re.compile(r"ppt/slides/slide\d+\.xml"), "slides"),
    DocFormat.XLSX: (re.compile(r"xl/worksheets/sheet\d+\.xml"), "sheets"),
}

# OOXML never uses a DTD; any DOCTYPE in an XML part is refused, which covers internal
# entity expansion ("billion laughs") and external entities. Parts may be UTF-8 or UTF-16.
_DOCTYPE = re.compile(
    b"|".join(re.escape("<!DOCTYPE".encode(enc)) for enc in ("ascii", "utf-16-le", "utf-16-be")),
    re.IGNORECASE,
)
_DOCTYPE_OVERLAP = len("<!DOCTYPE") * 2


def _inspect_ooxml(path: Path, fmt: DocFormat, max_pages: int, limits: ArchiveLimits) -> Inspection:
    with path.open("rb") as f:
        magic = f.read(len(_OLE_MAGIC))
        if magic.startswith(_OLE_MAGIC):
            f.seek(0)
            if _stream_contains(f, _ENCRYPTED_PACKAGE):
                raise UnsupportedFeature(f"the {fmt} is password-protected", feature="encrypted")
            raise CorruptInput(f"not a {fmt}: an OLE compound file (legacy Office format)")
        if not magic.startswith(_ZIP_MAGIC):
            raise CorruptInput(f"not a {fmt}: no ZIP signature")
        entries, cd_bytes = _central_directory_size(f)
    if entries > limits.max_entries or cd_bytes > limits.max_central_directory_bytes:
        raise CorruptInput(
            f"the archive lists {entries} entries in {cd_bytes} bytes of central directory "
            f"(limit {limits.max_entries} entries)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            _check_archive(infos, limits)
            _refuse_ambiguous_names(infos, fmt)
            names = {info.filename for info in infos}
            if "[Content_Types].xml" not in names:
                raise CorruptInput(f"not a {fmt}: the archive has no [Content_Types].xml")
            _refuse_encrypted_entries(infos, fmt)
            used_ranges = []
            for info in infos:
                used = UsedRange(info.filename) if fmt is DocFormat.XLSX else None
                _scan_part(archive, info, used)
                if used is not None and used.cells:
                    used_ranges.append(used)
            _check_package_kind(archive, fmt)
            _check_sheet_cells(used_ranges, limits.max_sheet_cells)
    except _DAMAGED_ARCHIVE as exc:
        raise CorruptInput(f"the {fmt} archive is damaged: {exc}") from exc
    except OSError as exc:
        if exc.errno not in _DAMAGED_ARCHIVE_ERRNOS:
            raise
        raise CorruptInput(f"the {fmt} archive is damaged: {exc}") from exc
    except NotImplementedError as exc:  # unsupported compression method
        raise CorruptInput(f"the {fmt} archive uses an unsupported compression: {exc}") from exc
    page_parts = _PAGE_PARTS.get(fmt)
    if page_parts is None:
        return Inspection(pages=None)
    pattern, unit = page_parts
    pages = sum(1 for name in names if pattern.fullmatch(name))
    _check_pages(pages, max_pages, unit)
    return Inspection(pages=pages)


# What an OOXML package really is, by the content type of its main part (the one part
# whose type ends in ".main+xml"), whatever its file name says; named by the extension
# Office gives such a package.
PACKAGE_KINDS: dict[str, str] = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": "docx",
    "application/vnd.ms-word.document.macroEnabled.main+xml": "docm",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": "dotx",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml": "dotm",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": "pptx",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml": "pptm",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": "potx",
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml": "potm",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": "ppsx",
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml": "ppsm",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml": "xlsm",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": "xltx",
    "application/vnd.ms-excel.template.macroEnabled.main+xml": "xltm",
}
# The kinds docling's backends load. docling accepts every extension above, but its Word
# backend (python-docx) opens only plain documents and its PowerPoint backend
# (python-pptx) only presentations, macro-enabled or not; they refuse the rest by
# content type, which docling reports like a damaged file. Checked against docling by
# tests/parse/test_parse_formats.py.
LOADABLE_PACKAGE_KINDS = frozenset({"docx", "pptx", "pptm", "xlsx", "xlsm", "xltx", "xltm"})
_CONTENT_TYPES_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_CONTENT_TYPE_TAGS = (f"{_CONTENT_TYPES_NS}Override", f"{_CONTENT_TYPES_NS}Default")


def _main_content_type(archive: zipfile.ZipFile) -> str | None:
    # Streamed: the part may be large in a crafted file; DTDs were refused before this.
    with archive.open("[Content_Types].xml") as part:
        for _, element in ElementTree.iterparse(part):
            if element.tag in _CONTENT_TYPE_TAGS:
                content_type = element.get("ContentType", "")
                if content_type.endswith(".main+xml"):
                    return content_type
            element.clear()
    return None


def _check_package_kind(archive: zipfile.ZipFile, fmt: DocFormat) -> None:
    """Refuse a package of another format, or of a kind docling cannot load.

    A main part of a type not listed above is left for docling to judge.
    """
    try:
        content_type = _main_content_type(archive)
    except ElementTree.ParseError as exc:
        raise CorruptInput(f"the {fmt}'s [Content_Types].xml is not well-formed: {exc}") from exc
    kind = PACKAGE_KINDS.get(content_type or "")
    if kind is None:
        return
    if _FORMAT_OF_EXTENSION[kind] is not fmt:
        raise CorruptInput(f"not a {fmt}: the package is a {kind}")
    if kind not in LOADABLE_PACKAGE_KINDS:
        raise UnsupportedFeature(
            f"the package is a {kind} ({content_type}), which docling's {fmt} backend "
            "does not load",
            feature=f"format:{kind}",
        )


def _central_directory_size(f: BinaryIO) -> tuple[int, int]:
    """Entry count and central-directory size from the end records, before zipfile
    reads (and allocates for) the whole directory."""
    size = f.seek(0, 2)
    tail_len = min(size, _EOCD.size + 0xFFFF)  # the record plus a maximal comment
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        raise CorruptInput("the archive is truncated: no end-of-central-directory record")
    _, _, _, _, entries, cd_bytes, _, _ = _EOCD.unpack_from(tail, at)
    if entries != 0xFFFF and cd_bytes != 0xFFFFFFFF:
        return entries, cd_bytes
    locator_at = at - _ZIP64_LOCATOR.size
    if locator_at < 0 or tail[locator_at : locator_at + 4] != b"PK\x06\x07":
        raise CorruptInput("the archive is damaged: ZIP64 locator missing")
    _, _, record_offset, _ = _ZIP64_LOCATOR.unpack_from(tail, locator_at)
    f.seek(record_offset)
    record = f.read(_ZIP64_EOCD.size)
    if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
        raise CorruptInput("the archive is damaged: ZIP64 end record missing")
    fields = _ZIP64_EOCD.unpack(record)
    return fields[7], fields[8]


def _check_archive(infos: list[zipfile.ZipInfo], limits: ArchiveLimits) -> None:
    if len(infos) > limits.max_entries:
        raise CorruptInput(f"the archive has {len(infos)} entries (limit {limits.max_entries})")
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > limits.ratio_floor_bytes:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_ratio:
                raise CorruptInput(
                    f"archive entry {info.filename!r} expands {ratio:.0f}:1 "
                    f"(limit {limits.max_ratio:.0f}:1): a decompression bomb"
                )
    if total > limits.max_unpacked_bytes:
        raise ResourceLimit(
            f"the archive unpacks to {total // MIB} MiB, above the "
            f"{limits.max_unpacked_bytes // MIB} MiB this memory ceiling allows"
        )


# What zipfile raises on a damaged archive: a bad structure, a name that is not the UTF-8
# its flag claims, compressed data its decompressor refuses (deflate, bzip2, LZMA).
_DAMAGED_ARCHIVE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    UnicodeDecodeError,
)
# OSErrors that are the archive's, not the disk's: EINVAL when the directory puts an
# entry before the start of the file (zipfile seeks there), no errno from bz2's
# "Invalid data stream".
_DAMAGED_ARCHIVE_ERRNOS = frozenset({errno.EINVAL, None})


def _refuse_ambiguous_names(infos: list[zipfile.ZipInfo], fmt: DocFormat) -> None:
    """Refuse a package in which one part name stands for two entries.

    Readers disagree on such a package: zipfile (which python-docx, python-pptx, openpyxl
    and docling's own package checks all read with) takes the last entry of a name,
    others the first, and Office refuses it. OPC compares part names case-insensitively
    (ECMA-376 Part 2), so entries whose names differ only in case are one part too.
    With every name unique, each name resolves to the one entry the inspection scans:
    docling cannot read other bytes for a part than those inspected here.
    """
    seen: dict[str, str] = {}
    for info in infos:
        name, key = info.filename, info.filename.casefold()
        other = seen.get(key)
        if other is None:
            seen[key] = name
            continue
        which = (
            f"two entries named {name!r}"
            if other == name
            else f"entries {other!r} and {name!r}, one part name in two cases"
        )
        raise CorruptInput(f"the {fmt} package has {which}: which one a reader takes is ambiguous")


# General purpose flag bit 0: the entry is encrypted (ZipCrypto or, with bit 6, strong
# encryption). No Office application writes these; zipfile refuses to read them.
_ZIP_ENCRYPTED = 0x1


def _refuse_encrypted_entries(infos: list[zipfile.ZipInfo], fmt: DocFormat) -> None:
    encrypted = [info.filename for info in infos if info.flag_bits & _ZIP_ENCRYPTED]
    if encrypted:
        raise UnsupportedFeature(
            f"the {fmt} archive has {len(encrypted)} password-protected "
            f"(encrypted) entries, such as {encrypted[0]!r}",
            feature="encrypted",
        )


def _looks_like_xml(head: bytes) -> bool:
    # After a byte-order mark and whitespace (UTF-8 or UTF-16), XML starts with "<".
    return head.lstrip(b"\xef\xbb\xbf\xff\xfe \t\r\n\x00").startswith(b"<")


def _scan_part(archive: zipfile.ZipFile, info: zipfile.ZipInfo, used: UsedRange | None) -> None:
    """Scan every part an XML parser could accept for a DTD and, in a workbook, for the
    cells it places. Binary parts are skipped: they may embed XML with a DTD (printer
    settings carry a plist) that no parser ever sees."""
    with archive.open(info) as part:
        head = part.read(64)
        if not _looks_like_xml(head):
            return
        part.seek(0)
        reader = used.reader() if used is not None else None
        carry = 0
        for window in _chunks(part, _DOCTYPE_OVERLAP):
            # The DTD check sees each window before the XML parser gets its new bytes.
            if _DOCTYPE.search(window):
                raise CorruptInput(
                    f"archive part {info.filename!r} declares a DTD (entity expansion "
                    "is refused; OOXML never uses one)"
                )
            if reader is not None:
                reader = reader.feed(window[carry:])
            carry = min(len(window), _DOCTYPE_OVERLAP)
        if reader is not None:
            reader.feed(b"", final=True)


# XLSX used ranges -----------------------------------------------------------------------

# While loading, docling clips merged ranges beyond a budget of 100,000 covered cells and
# hyperlink ranges beyond 10,000 (docling.backend.msexcel_backend._MAX_MERGED_CELLS and
# _MAX_HYPERLINK_CELLS) to the cells with values; a clipped range keeps its top-left cell.
MERGED_CELLS_BUDGET = 100_000
HYPERLINK_CELLS_BUDGET = 10_000

_SHEET_NAMESPACES = frozenset(
    {
        "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
        "http://purl.oclc.org/ooxml/spreadsheetml/main",  # Strict OOXML
    }
)
_SHEET_ELEMENTS = {
    f"{namespace} {local}": local
    for namespace in _SHEET_NAMESPACES
    for local in ("row", "c", "mergeCell", "hyperlink")
}
_CELL_REF = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]+)")


def _cell_ref(text: str) -> tuple[int, int] | None:
    """(row, column) of an A1-style reference, or None where openpyxl would fail too."""
    match = _CELL_REF.fullmatch(text.strip())
    if match is None:
        return None
    column = 0
    for letter in match[1].upper():
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(match[2]), column


def _range_ref(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    first, _, last = text.partition(":")
    start, end = _cell_ref(first), _cell_ref(last or first)
    if start is None or end is None:
        return None
    return (min(start[0], end[0]), min(start[1], end[1])), (
        max(start[0], end[0]),
        max(start[1], end[1]),
    )


class UsedRange:
    """The rectangle of one worksheet part that docling's XLSX backend will visit: the
    cells with content (a value, a formula or an inline string; openpyxl's reading of
    cell positions, with or without ``r`` attributes) and the merged and hyperlink
    ranges it keeps. Styled empty cells (``<c r="X9" s="1"/>``) do not count."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.top = self.left = self.bottom = self.right = 0
        self._row = self._column = 0
        self._cell: tuple[int, int] | None = None
        self._cell_has_content = False

    @property
    def cells(self) -> int:
        if not self.bottom:
            return 0
        return (self.bottom - self.top + 1) * (self.right - self.left + 1)

    def describe(self) -> str:
        def a1(row: int, column: int) -> str:
            letters = ""
            while column:
                column, rest = divmod(column - 1, 26)
                letters = chr(ord("A") + rest) + letters
            return f"{letters}{row}"

        return f"{self.part}: {a1(self.top, self.left)}:{a1(self.bottom, self.right)}"

    def include(self, row: int, column: int) -> None:
        if not self.bottom:
            self.top, self.left, self.bottom, self.right = row, column, row, column
            return
        self.top, self.left = min(self.top, row), min(self.left, column)
        self.bottom, self.right = max(self.bottom, row), max(self.right, column)

    def _include_range(self, ref: str | None, budget: int) -> None:
        corners = _range_ref(ref or "")
        if corners is None:
            return
        (top, left), (bottom, right) = corners
        self.include(top, left)
        if (bottom - top + 1) * (right - left + 1) - 1 <= budget:
            self.include(bottom, right)

    def start(self, name: str, attributes: dict[str, str]) -> None:
        if self._cell is not None:
            self._cell_has_content = True  # <v>, <f> or <is> inside <c>
            return
        local = _SHEET_ELEMENTS.get(name)  # expat names: "<namespace> <local name>"
        if local == "row":
            # openpyxl: rows without r follow the previous one; columns restart.
            row = attributes.get("r", "").strip()
            self._row = int(row) if row.isdigit() else self._row + 1
            self._column = 0
        elif local == "c":
            where = _cell_ref(attributes["r"]) if "r" in attributes else None
            if where is None:
                where = (self._row, self._column + 1)
            self._column = where[1]
            self._cell, self._cell_has_content = where, False
        elif local == "mergeCell":
            self._include_range(attributes.get("ref"), MERGED_CELLS_BUDGET)
        elif local == "hyperlink":
            # openpyxl gives every empty cell of a hyperlink range its target as value.
            self._include_range(attributes.get("ref"), HYPERLINK_CELLS_BUDGET)

    def end(self, name: str) -> None:
        if self._cell is not None and _SHEET_ELEMENTS.get(name) == "c":
            if self._cell_has_content:
                self.include(*self._cell)
            self._cell = None

    def reader(self) -> _PartReader:
        return _PartReader(self)


class _PartReader:
    """Streams one part through expat (no DTD: it was refused before the bytes got here)."""

    def __init__(self, used: UsedRange) -> None:
        self._parser = expat.ParserCreate(namespace_separator=" ")
        self._parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self._parser.StartElementHandler = used.start
        self._parser.EndElementHandler = used.end

    def feed(self, data: bytes, *, final: bool = False) -> _PartReader | None:
        """None once the part is not well-formed XML: openpyxl cannot load such a part
        either, so the workbook never reaches the cell scan. Cells seen so far count."""
        try:
            self._parser.Parse(data, final)
        except expat.ExpatError:
            return None
        return self


def _check_sheet_cells(used_ranges: list[UsedRange], limit: int) -> None:
    total = sum(used.cells for used in used_ranges)
    if total > limit:
        largest = max(used_ranges, key=lambda used: used.cells)
        raise UnsupportedFeature(
            f"the worksheets' used ranges span {total:,} cells (largest: "
            f"{largest.describe()}), above the {limit:,} docling can hold",
            feature="sheet_too_large",
        )


def _chunks(stream: IO[bytes], overlap: int) -> Iterator[bytes]:
    """Fixed-size chunks, each prefixed with the tail of the previous one so that a
    token split across a boundary is still seen."""
    carry = b""
    while chunk := stream.read(_CHUNK):
        window = carry + chunk
        yield window
        carry = window[-overlap:]


def _stream_contains(stream: BinaryIO, needle: bytes) -> bool:
    return any(needle in window for window in _chunks(stream, len(needle)))


# HTML and Markdown ----------------------------------------------------------------------

_TEXT_SNIFF = 1 << 16
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _inspect_text(path: Path) -> Inspection:
    with path.open("rb") as f:
        head = f.read(_TEXT_SNIFF)
    # NUL bytes mean binary content, except in UTF-16/32 text (which starts with a BOM).
    if b"\x00" in head and not head.startswith(_UTF16_32_BOMS):
        raise CorruptInput("binary content (NUL bytes) in a text format")
    return Inspection(pages=None)
