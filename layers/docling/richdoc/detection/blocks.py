"""The blocks detection reads: span *i*'s slice of the canonical text is block *i*, and
*i* is the ``spanRef`` of whatever evidence it holds (docs/detection.md, "What is read")."""

from __future__ import annotations

from collections.abc import Iterator

from richdoc.graph import Projection
from richdoc.taxonomy import CorruptInput


def text_bytes(projection: Projection) -> bytes:
    """The canonical text as UTF-8, which the spans' offsets count."""
    try:
        return projection.canonical_text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CorruptInput(f"canonical_text is not encodable as UTF-8: {exc}") from exc


def blocks(projection: Projection, data: bytes) -> Iterator[tuple[int, str]]:
    """(spanRef, block text) in span order, which the projection contract makes reading order."""
    for index, span in enumerate(projection.spans):
        if not 0 <= span.start <= span.end <= len(data):
            raise CorruptInput(f"span {index} [{span.start}, {span.end}) is outside the text")
        try:
            yield index, data[span.start : span.end].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptInput(f"span {index} does not slice whole UTF-8 characters") from exc
