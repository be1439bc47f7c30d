"""Build projections for detection tests straight from block texts."""

from __future__ import annotations

from richdoc_client.projection import (
    DocumentNode,
    DocumentProps,
    Edge,
    Node,
    ParagraphNode,
    ParagraphProps,
    Projection,
    ProjectionSource,
    ProjectionStats,
    Span,
    SpanKind,
)


def layout(*blocks: str, separator: str = "\n\n") -> Projection:
    """A projection whose spans are ``blocks`` in order, joined by ``separator``.

    Span offsets are UTF-8 byte offsets, as in projection.json; span i belongs to
    PARAGRAPH node i + 1 under the DOCUMENT node 0.
    """
    spans: list[Span] = []
    offset = 0
    for index, block in enumerate(blocks):
        size = len(block.encode("utf-8"))
        spans.append(Span(node=index + 1, start=offset, end=offset + size, kind=SpanKind.PARAGRAPH))
        offset += size + len(separator.encode("utf-8"))
    nodes: list[Node] = [DocumentNode(id=0, props=DocumentProps(name="test.docx"))]
    nodes += [
        ParagraphNode(id=index + 1, props=ParagraphProps(text=block))
        for index, block in enumerate(blocks)
    ]
    edges = [Edge(src=0, dst=index + 1, ord=index) for index in range(len(blocks))]
    text = separator.join(blocks)
    return Projection(
        source=ProjectionSource(name="test.docx"),
        canonical_text=text,
        nodes=nodes,
        edges=edges,
        spans=spans,
        stats=ProjectionStats.of_graph(nodes, edges, spans, text),
    )
