"""The graph laid over the document: node boxes on the pages, spans in the canonical text,
temporal ambiguities where their evidence lies.

A node's ``bbox`` is ``[x0, y0, x1, y1]`` with a top-left origin in its page's units (PDF
points), so a box on a page drawn ``width`` by ``height`` units is where the bbox says,
scaled by the drawing (the page template's SVG viewBox is the page in points). Spans are
UTF-8 byte offsets into the canonical text; the text is shown as characters, so each
span also gets its character offsets (a multi-byte character counts one). Pure: a
projection (and its detection) in, the page's model out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from richdoc.detection import Detection
from richdoc.graph import NodeLabel, Projection


class SpanView(BaseModel):
    kind: str
    start_byte: int
    end_byte: int
    start_char: int
    end_char: int


class NodeView(BaseModel):
    id: int
    label: str
    text: str | None  # a section's title, a paragraph's or row's text
    page: int | None
    bbox: tuple[float, float, float, float] | None
    span: SpanView | None
    ambiguous: bool  # a temporal ambiguity's evidence lies in its span
    children: list[int]


class OverlayBox(BaseModel):
    node: int
    label: str
    x: float
    y: float
    width: float
    height: float
    ambiguous: bool


class PageView(BaseModel):
    number: int
    width: float  # in the page's units (PDF points)
    height: float
    image_url: str
    boxes: list[OverlayBox]


class Segment(BaseModel):
    """A stretch of the canonical text: one span's text (``node`` set), or what lies
    between spans."""

    text: str
    node: int | None
    ambiguous: bool


class Evidence(BaseModel):
    label: str
    node: int | None


class AmbiguityView(BaseModel):
    kind: str
    confidence: float
    candidates: list[Evidence]


class Overlay(BaseModel):
    nodes: list[NodeView]
    pages: list[PageView]
    segments: list[Segment]
    ambiguities: list[AmbiguityView]
    canonical_bytes: int
    canonical_chars: int


def overlay(
    projection: Projection,
    detection: Detection | None,
    page_sizes: Sequence[tuple[float, float]] = (),
    image_url: Callable[[int], str] = str,
) -> Overlay:
    """The page's model. ``page_sizes`` (width, height per page, 1-based order) are the
    rendered document's pages; without them there are no pages to draw on."""
    data = projection.canonical_text.encode("utf-8")
    node_of_span = [span.node for span in projection.spans]
    ambiguities = [
        AmbiguityView(
            kind=str(a.kind),
            confidence=a.appliedCandidateConfidence,
            candidates=[
                Evidence(
                    label=c.label,
                    node=_at(node_of_span, c.spanRef),
                )
                for c in a.candidates
            ],
        )
        for a in (detection.ambiguities if detection else [])
    ]
    ambiguous = {c.node for a in ambiguities for c in a.candidates if c.node is not None}

    segments: list[Segment] = []
    spans: dict[int, SpanView] = {}
    position, chars = 0, 0
    for span in sorted(projection.spans, key=lambda s: s.start):
        if span.start < position:  # overlapping spans are not in the contract; skip them
            continue
        between = _decoded(data[position : span.start])
        inside = _decoded(data[span.start : span.end])
        if between:
            segments.append(Segment(text=between, node=None, ambiguous=False))
        chars += len(between)
        spans[span.node] = SpanView(
            kind=span.kind,
            start_byte=span.start,
            end_byte=span.end,
            start_char=chars,
            end_char=chars + len(inside),
        )
        segments.append(Segment(text=inside, node=span.node, ambiguous=span.node in ambiguous))
        chars += len(inside)
        position = span.end
    rest = _decoded(data[position:])
    if rest:
        segments.append(Segment(text=rest, node=None, ambiguous=False))

    children: dict[int, list[tuple[int, int]]] = {}
    for edge in projection.edges:
        children.setdefault(edge.src, []).append((edge.ord, edge.dst))
    nodes = [
        NodeView(
            id=node.id,
            label=str(node.label),
            text=_text(props := node.props.model_dump()),
            page=_int(props.get("page")),
            bbox=_bbox(props.get("bbox")),
            span=spans.get(node.id),
            ambiguous=node.id in ambiguous,
            children=[dst for _, dst in sorted(children.get(node.id, []))],
        )
        for node in projection.nodes
    ]
    pages = [
        PageView(
            number=number,
            width=width,
            height=height,
            image_url=image_url(number),
            boxes=[
                OverlayBox(
                    node=n.id,
                    label=n.label,
                    x=n.bbox[0],
                    y=n.bbox[1],
                    width=max(n.bbox[2] - n.bbox[0], 0.0),
                    height=max(n.bbox[3] - n.bbox[1], 0.0),
                    ambiguous=n.ambiguous,
                )
                for n in nodes
                if n.page == number and n.bbox is not None and n.label != NodeLabel.DOCUMENT
            ],
        )
        for number, (width, height) in enumerate(page_sizes, start=1)
    ]
    return Overlay(
        nodes=nodes,
        pages=pages,
        segments=segments,
        ambiguities=ambiguities,
        canonical_bytes=len(data),
        canonical_chars=len(projection.canonical_text),
    )


def _decoded(data: bytes) -> str:
    # A span boundary inside a character breaks the contract; show the rest anyway.
    return data.decode("utf-8", errors="replace")


def _at(values: Sequence[int], index: int | None) -> int | None:
    return values[index] if index is not None and 0 <= index < len(values) else None


def _text(props: dict[str, object]) -> str | None:
    for name in ("title", "text", "name"):
        value = props.get(name)
        if isinstance(value, str):
            return value
    return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bbox(value: object) -> tuple[float, float, float, float] | None:
    if not isinstance(value, list) or len(value) != 4:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return None
    x0, y0, x1, y1 = (float(v) for v in value)
    return x0, y0, x1, y1
