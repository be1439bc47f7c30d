"""What an input file is, and whether it is safe to hand to docling.

Two stages. ``format_of`` maps a file name to a supported format by its extension alone
(cheap, no I/O: the caller uses it to pick the pipeline and the cache key before
anything is downloaded; ``extensions``). ``inspect_file`` looks at the bytes and runs
inside the isolated parse child, before docling: it refuses empty files, wrong magic,
decompression bombs, DTDs in OOXML parts, OOXML packages docling cannot load, encrypted
documents, documents over the page limit and damaged images, each with the taxonomy
error the design page names, and it lists the pages only OCR can read (scanned PDF
pages, every frame of an image: ``Inspection.image_only``). One inspector per family:
``pdf``, ``ooxml`` (its ZIP container in ``archive``, a workbook's used ranges in
``sheets``), ``image`` and ``text`` (HTML and Markdown).

Every read here is bounded: archive sizes come from the central directory (which
``zipfile`` enforces on read), and parts are scanned in fixed-size chunks.

``inspection`` holds what an inspection learns (``Inspection``) and the page limit every
inspector applies.
"""

from __future__ import annotations

from pathlib import Path

from richdoc.formats.archive import ArchiveLimits
from richdoc.formats.extensions import EXTENSIONS, DocFormat, format_of
from richdoc.formats.image import inspect_image
from richdoc.formats.inspection import Inspection
from richdoc.formats.ooxml import inspect_ooxml
from richdoc.formats.pdf import inspect_pdf
from richdoc.formats.text import inspect_text
from richdoc.taxonomy import CorruptInput

__all__ = ["EXTENSIONS", "ArchiveLimits", "DocFormat", "Inspection", "format_of", "inspect_file"]


def inspect_file(
    path: Path, fmt: DocFormat, *, max_pages: int, archive: ArchiveLimits
) -> Inspection:
    size = path.stat().st_size
    if size == 0:
        raise CorruptInput("the file is empty (0 bytes)")
    if fmt is DocFormat.PDF:
        return inspect_pdf(path, max_pages)
    if fmt.is_ooxml:
        return inspect_ooxml(path, fmt, max_pages, archive)
    if fmt is DocFormat.IMAGE:
        return inspect_image(path, max_pages)
    return inspect_text(path)
