"""Projections built straight from an outline of blocks (headings, paragraphs, tables),
nested by the projection's rules: a heading closes every open section of its level or
deeper, other blocks go to the innermost open section, rows to their table."""

from __future__ import annotations

from dataclasses import dataclass

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
    SectionNode,
    SectionProps,
    Span,
    SpanKind,
    TableNode,
    TableProps,
    TableRowNode,
    TableRowProps,
)

SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Heading:
    level: int
    title: str


@dataclass(frozen=True)
class Paragraph:
    text: str
    page: int | None = None


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


Block = Heading | Paragraph | Table


def outline(*blocks: Block, name: str = "outline.docx") -> Projection:
    nodes: list[Node] = [DocumentNode(id=0, props=DocumentProps(name=name))]
    edges: list[Edge] = []
    spans: list[Span] = []
    texts: list[str] = []
    children = [0]
    sections: list[tuple[int, int]] = []  # open (level, node id)
    offset = 0

    def add(node: Node, parent: int) -> int:
        nodes.append(node)
        children.append(0)
        edges.append(Edge(src=parent, dst=node.id, ord=children[parent]))
        children[parent] += 1
        return node.id

    def text_of(node_id: int, text: str, kind: SpanKind) -> None:
        nonlocal offset
        start = offset + (len(SEPARATOR) if texts else 0)
        offset = start + len(text.encode())
        texts.append(text)
        spans.append(Span(node=node_id, start=start, end=offset, kind=kind))

    for block in blocks:
        container = sections[-1][1] if sections else 0
        if isinstance(block, Heading):
            while sections and sections[-1][0] >= block.level:
                sections.pop()
            parent = sections[-1][1] if sections else 0
            props = SectionProps(title=block.title, level=block.level)
            section = add(SectionNode(id=len(nodes), props=props), parent)
            text_of(section, block.title, SpanKind.HEADING)
            sections.append((block.level, section))
        elif isinstance(block, Paragraph):
            props_ = ParagraphProps(text=block.text, page=block.page)
            text_of(
                add(ParagraphNode(id=len(nodes), props=props_), container),
                block.text,
                SpanKind.PARAGRAPH,
            )
        else:
            table_props = TableProps(columns=list(block.columns), header_rows=1)
            table = add(TableNode(id=len(nodes), props=table_props), container)
            for index, values in enumerate(block.rows, start=1):
                cells = dict(zip(block.columns, values, strict=True))
                text = " | ".join(f"{key}: {value}" for key, value in cells.items())
                row = TableRowProps(
                    cells=cells, row=index, text=text, page=1, bbox=[0, index, 9, index + 1]
                )
                text_of(
                    add(TableRowNode(id=len(nodes), props=row), table), text, SpanKind.TABLE_ROW
                )
    canonical = SEPARATOR.join(texts)
    return Projection(
        source=ProjectionSource(name=name),
        canonical_text=canonical,
        nodes=nodes,
        edges=edges,
        spans=spans,
        stats=ProjectionStats.of_graph(nodes, edges, spans, canonical),
    )
