"""Build projections for detection tests straight from block texts."""

from __future__ import annotations

from richdoc.contracts import SourceInfo
from richdoc.graph import Edge, Node, NodeLabel, Projection, Span


def layout(*blocks: str, separator: str = "\n\n") -> Projection:
    """A projection whose spans are ``blocks`` in order, joined by ``separator``.

    Span offsets are UTF-8 byte offsets, as in projection.json; span i belongs to
    PARAGRAPH node i + 1 under the DOCUMENT node 0.
    """
    spans: list[Span] = []
    offset = 0
    for index, block in enumerate(blocks):
        size = len(block.encode("utf-8"))
        spans.append(Span(node=index + 1, start=offset, end=offset + size, kind="paragraph"))
        offset += size + len(separator.encode("utf-8"))
    nodes = [Node(id=0, label=NodeLabel.DOCUMENT)] + [
        Node(id=index + 1, label=NodeLabel.PARAGRAPH, props={"text": block})
        for index, block in enumerate(blocks)
    ]
    return Projection(
        source=SourceInfo(name="test.docx"),
        canonical_text=separator.join(blocks),
        nodes=nodes,
        edges=[Edge(src=0, dst=index + 1, ord=index) for index in range(len(blocks))],
        spans=spans,
    )
