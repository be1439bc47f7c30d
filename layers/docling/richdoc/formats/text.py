"""HTML and Markdown: text, not binary content."""

from __future__ import annotations

from pathlib import Path

from richdoc.formats.inspection import Inspection
from richdoc.taxonomy import CorruptInput

_TEXT_SNIFF = 1 << 16
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")


def inspect_text(path: Path) -> Inspection:
    with path.open("rb") as f:
        head = f.read(_TEXT_SNIFF)
    # NUL bytes mean binary content, except in UTF-16/32 text (which starts with a BOM).
    if b"\x00" in head and not head.startswith(_UTF16_32_BOMS):
        raise CorruptInput("binary content (NUL bytes) in a text format")
    return Inspection(page_count=None)
