"""PDF pages rendered to PNG on the console's machine (pypdfium2, the engine docling's PDF
backends use), so the graph's boxes can be drawn over them.

pdfium is not thread-safe: one lock serialises every call into it. Rendered pages, page
sizes and the source bytes they came from are kept in small caches keyed by the object
version (a version never changes), so a page view's images and its reloads do not fetch
and render the document again.
"""

from __future__ import annotations

import functools
import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from richdoc.contracts import SourceObject

SCALE = 2.0  # pixels per point: sharp on high-density screens, about 1200 px for A4
_PDFIUM = threading.Lock()

K = TypeVar("K")
V = TypeVar("V")


class _Recent(Generic[K, V]):
    """The last ``size`` values computed, by key (thread-safe)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = make()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value


SourceKey = tuple[str, str, str | None, str | None]


def source_key(source: SourceObject) -> SourceKey:
    return source.bucket, source.key, source.version_id, source.etag


class PageRenderer:
    def __init__(self, fetch: Callable[[SourceObject], bytes], scale: float = SCALE) -> None:
        self.fetch = fetch
        self.scale = scale
        self._sources: _Recent[SourceKey, bytes] = _Recent(4)
        self._sizes: _Recent[SourceKey, list[tuple[float, float]]] = _Recent(64)
        self._pages: _Recent[tuple[SourceKey, int], bytes] = _Recent(64)

    def sizes(self, source: SourceObject) -> list[tuple[float, float]]:
        """Each page's width and height in points, in order."""
        key = source_key(source)
        return self._sizes.get(key, lambda: page_sizes(self._source(source)))

    def png(self, source: SourceObject, number: int) -> bytes:
        """Page ``number`` (1-based) as PNG. IndexError for a page the PDF does not have."""
        key = source_key(source)
        return self._pages.get(
            (key, number), functools.partial(render_page, self._source(source), number, self.scale)
        )

    def _source(self, source: SourceObject) -> bytes:
        return self._sources.get(source_key(source), lambda: self.fetch(source))


def page_sizes(pdf: bytes) -> list[tuple[float, float]]:
    import pypdfium2

    with _PDFIUM:
        document = pypdfium2.PdfDocument(pdf)
        try:
            return [_size(document[i]) for i in range(len(document))]
        finally:
            document.close()


def _size(page: object) -> tuple[float, float]:
    width, height = page.get_size()  # type: ignore[attr-defined]  # pypdfium2 is untyped
    return float(width), float(height)


def render_page(pdf: bytes, number: int, scale: float = SCALE) -> bytes:
    import pypdfium2

    with _PDFIUM:
        document = pypdfium2.PdfDocument(pdf)
        try:
            if not 1 <= number <= len(document):
                raise IndexError(f"the document has {len(document)} page(s), not page {number}")
            image = document[number - 1].render(scale=scale).to_pil()
        finally:
            document.close()
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
