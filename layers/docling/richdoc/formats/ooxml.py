"""OOXML packages (DOCX, PPTX, XLSX): a ZIP, not a legacy or password-protected OLE file;
an archive within the limits (``archive``); no DTD in any XML part; the package kind its
main part's content type says, one docling loads; a workbook's used ranges (``sheets``);
the slide or sheet count against the page limit."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO
from xml.etree import ElementTree

from richdoc.formats.archive import (
    ArchiveLimits,
    central_directory_size,
    check_archive,
    damage_is_corrupt,
    refuse_ambiguous_names,
    refuse_encrypted_entries,
)
from richdoc.formats.extensions import FORMAT_OF_EXTENSION, DocFormat
from richdoc.formats.inspection import Inspection, check_pages
from richdoc.formats.sheets import UsedRange, check_sheet_cells
from richdoc.taxonomy import CorruptInput, UnsupportedFeature

_CHUNK = 1 << 16
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
# A password-protected OOXML file is an OLE compound file holding this stream.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")

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


def inspect_ooxml(path: Path, fmt: DocFormat, max_pages: int, limits: ArchiveLimits) -> Inspection:
    with path.open("rb") as f:
        magic = f.read(len(_OLE_MAGIC))
        if magic.startswith(_OLE_MAGIC):
            f.seek(0)
            if _stream_contains(f, _ENCRYPTED_PACKAGE):
                raise UnsupportedFeature(f"the {fmt} is password-protected", feature="encrypted")
            raise CorruptInput(f"not a {fmt}: an OLE compound file (legacy Office format)")
        if not magic.startswith(_ZIP_MAGIC):
            raise CorruptInput(f"not a {fmt}: no ZIP signature")
        entries, cd_bytes = central_directory_size(f)
    if entries > limits.max_entries or cd_bytes > limits.max_central_directory_bytes:
        raise CorruptInput(
            f"the archive lists {entries} entries in {cd_bytes} bytes of central directory "
            f"(limit {limits.max_entries} entries)"
        )
    with damage_is_corrupt(fmt), zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        check_archive(infos, limits)
        refuse_ambiguous_names(infos, fmt)
        names = {info.filename for info in infos}
        if "[Content_Types].xml" not in names:
            raise CorruptInput(f"not a {fmt}: the archive has no [Content_Types].xml")
        refuse_encrypted_entries(infos, fmt)
        used_ranges = []
        for info in infos:
            used = UsedRange(info.filename) if fmt is DocFormat.XLSX else None
            _scan_part(archive, info, used)
            if used is not None and used.cells:
                used_ranges.append(used)
        _check_package_kind(archive, fmt)
        check_sheet_cells(used_ranges, limits.max_sheet_cells)
    page_parts = _PAGE_PARTS.get(fmt)
    if page_parts is None:
        return Inspection(page_count=None)
    pattern, unit = page_parts
    page_count = sum(1 for name in names if pattern.fullmatch(name))
    check_pages(page_count, max_pages, unit)
    return Inspection(page_count=page_count)


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
    if FORMAT_OF_EXTENSION[kind] is not fmt:
        raise CorruptInput(f"not a {fmt}: the package is a {kind}")
    if kind not in LOADABLE_PACKAGE_KINDS:
        raise UnsupportedFeature(
            f"the package is a {kind} ({content_type}), which docling's {fmt} backend "
            "does not load",
            feature=f"format:{kind}",
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
