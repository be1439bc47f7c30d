"""The supported formats and the file extensions that name them: ``format_of`` decides by
the name alone, before anything is downloaded."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePath

from richdoc.taxonomy import UnsupportedFeature


class DocFormat(StrEnum):
    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    HTML = "html"
    MD = "md"
    IMAGE = "image"  # a scan or photograph: its pages are read by OCR

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
    DocFormat.IMAGE: ("jpg", "jpeg", "png", "tif", "tiff", "bmp", "webp", "gif"),
}
FORMAT_OF_EXTENSION = {ext: fmt for fmt, exts in EXTENSIONS.items() for ext in exts}

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
    """The supported format a file name's extension names, or
    ``UnsupportedFeature('format:<ext>')``."""
    fmt = FORMAT_OF_EXTENSION.get(PurePath(name).suffix.lower().lstrip("."))
    if fmt is None:
        tag = f"format:{_extension_tag(name) or 'none'}"
        supported = ", ".join(sorted(FORMAT_OF_EXTENSION))
        raise UnsupportedFeature(
            f"{PurePath(name).name!r}: supported formats are {supported}", feature=tag
        )
    return fmt
