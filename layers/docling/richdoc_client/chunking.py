"""Retrieval chunks from a projection: pure and deterministic (docs/consumers.md, "Chunks").

The blocks (spans) are taken in reading order and gathered into chunks:

* a chunk holds blocks of one section only (a section's own blocks: its heading and the
  content before its first subsection), or rows of one table only, so its heading path
  is exact and a table's rows stay with their columns;
* headings with nothing of their own before the next heading inside them (a title right
  above its first section) stay with what follows, so no chunk is a lone heading unless
  its section is empty;
* a chunk grows while it fits the size limit: at most ``max_bytes`` UTF-8 bytes of
  canonical text from its first byte to its last, the separators between blocks
  included;
* a block bigger than the limit alone is cut into pieces that tile it, each a chunk of its
  own: each cut falls after the last whitespace in the second half of the piece's window,
  or where there is none at the last character boundary that fits.

A chunk's id is the first 32 hex digits of SHA-256 over the JSON array
``[document_id, heading_path, text, occurrence]``, where ``occurrence`` counts the earlier
chunks of the document with the same heading path and text: the same content at the same
place gets the same id in every run, and ids are unique within a document.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from richdoc_client.chunks import CHUNK_ID_LENGTH, Chunk, ChunkBox, ChunkSpan, TableContext
from richdoc_client.projection import (
    DocumentNode,
    Node,
    ParagraphNode,
    Projection,
    SectionNode,
    SpanKind,
    TableNode,
    TableRowNode,
)

#: The default size limit, in UTF-8 bytes of chunk text (about 500 tokens of English).
DEFAULT_MAX_BYTES: Final = 2048
#: The smallest limit accepted: every cut must leave room for a whole character.
MIN_MAX_BYTES: Final = 64
_HEADINGS = frozenset({SpanKind.TITLE, SpanKind.HEADING})
_WHITESPACE = (b" ", b"\n", b"\t")


@dataclass(frozen=True, slots=True)
class _Piece:
    span: int  # the block's spanRef
    node: int
    start: int
    end: int
    section: int  # the section it lies in (0: the DOCUMENT)
    table: int | None  # the TABLE of a row
    heading: bool
    whole: bool  # all of its block (not a piece of a block too big for the limit)


class _Outline:
    """Each node's section and each section's heading path, from the CONTAINS edges."""

    def __init__(self, projection: Projection) -> None:
        self.nodes = projection.nodes
        self.spans = projection.spans
        for index, node in enumerate(self.nodes):
            if node.id != index:
                raise ValueError(f"node ids are not consecutive: node {index} has id {node.id}")
        self.parent: list[int | None] = [None] * len(self.nodes)
        for edge in projection.edges:
            self.parent[edge.dst] = edge.src
        self._paths: dict[int, tuple[str, ...]] = {0: ()}

    def section_of(self, node_id: int) -> int:
        """The innermost SECTION that is or contains the node (0 when none)."""
        current: int | None = node_id
        while current is not None and current != 0:
            if isinstance(self.nodes[current], SectionNode):
                return current
            current = self.parent[current]
        return 0

    def enclosing(self, section: int) -> int:
        parent = self.parent[section]
        return 0 if section == 0 or parent is None else self.section_of(parent)

    def within(self, section: int, outer: int) -> bool:
        while True:
            if section == outer:
                return True
            if section == 0:
                return False
            section = self.enclosing(section)

    def path(self, section: int) -> tuple[str, ...]:
        known = self._paths.get(section)
        if known is None:
            node = self.nodes[section]
            assert isinstance(node, SectionNode)
            known = (*self.path(self.enclosing(section)), node.props.title)
            self._paths[section] = known
        return known


def build_chunks(
    projection: Projection, *, document_id: str, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[Chunk]:
    """The chunks of one projection, in reading order (the rules are the module's)."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_MAX_BYTES}, not {max_bytes}")
    data = projection.canonical_text.encode("utf-8")
    outline = _Outline(projection)
    groups: list[list[_Piece]] = []
    current: list[_Piece] = []
    for piece in _pieces(projection, outline, data, max_bytes):
        if current and not _joins(current, piece, outline, max_bytes):
            groups.append(current)
            current = []
        current.append(piece)
    if current:
        groups.append(current)
    chunks: list[Chunk] = []
    seen: dict[tuple[tuple[str, ...], str], int] = {}
    for index, group in enumerate(groups):
        path = outline.path(group[-1].section)
        text = data[group[0].start : group[-1].end].decode("utf-8")
        occurrence = seen.get((path, text), 0)
        seen[(path, text)] = occurrence + 1
        chunks.append(
            _chunk(
                group,
                outline,
                document_id,
                index,
                path,
                text,
                _chunk_id(document_id, path, text, occurrence),
            )
        )
    return chunks


def chunks_jsonl(chunks: Iterable[Chunk]) -> bytes:
    """``chunks.jsonl``: one chunk per line, each line ending in LF (no chunks: empty)."""
    return "".join(chunk.to_json_line() + "\n" for chunk in chunks).encode("utf-8")


def _pieces(
    projection: Projection, outline: _Outline, data: bytes, max_bytes: int
) -> Iterable[_Piece]:
    for index, span in enumerate(projection.spans):
        node = outline.nodes[span.node]
        if not isinstance(node, SectionNode | ParagraphNode | TableRowNode):
            raise ValueError(f"span {index} covers a {node.label} node, which has no text")
        table = outline.parent[span.node] if isinstance(node, TableRowNode) else None
        section = outline.section_of(span.node if table is None else table)
        cuts = _cuts(data, span.start, span.end, max_bytes)
        for start, end in cuts:
            yield _Piece(
                index,
                span.node,
                start,
                end,
                section,
                table,
                heading=span.kind in _HEADINGS,
                whole=len(cuts) == 1,
            )


def _joins(current: list[_Piece], piece: _Piece, outline: _Outline, max_bytes: int) -> bool:
    """Whether ``piece`` goes into the chunk being gathered, after ``current``."""
    last = current[-1]
    if not (piece.whole and last.whole) or piece.end - current[0].start > max_bytes:
        return False
    if (piece.section, piece.table) == (last.section, last.table):
        return True
    # Only headings so far: they stay with content inside their (last) section.
    return all(p.heading for p in current) and outline.within(piece.section, last.section)


def _cuts(data: bytes, start: int, end: int, max_bytes: int) -> list[tuple[int, int]]:
    """[start, end) as consecutive ranges of at most ``max_bytes`` bytes (module rules)."""
    cuts: list[tuple[int, int]] = []
    while end - start > max_bytes:
        limit = start + max_bytes
        space = max(data.rfind(ws, start + max_bytes // 2, limit) for ws in _WHITESPACE)
        cut = space + 1 if space >= 0 else limit
        while (data[cut] & 0xC0) == 0x80:  # a UTF-8 continuation byte: not a boundary
            cut -= 1
        cuts.append((start, cut))
        start = cut
    cuts.append((start, end))
    return cuts


def _chunk_id(document_id: str, path: tuple[str, ...], text: str, occurrence: int) -> str:
    key = json.dumps([document_id, list(path), text, occurrence], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:CHUNK_ID_LENGTH]


def _location(node: Node) -> tuple[int | None, list[float] | None]:
    if isinstance(node, DocumentNode):
        return None, None
    return node.props.page, node.props.bbox


def _chunk(
    group: list[_Piece],
    outline: _Outline,
    document_id: str,
    index: int,
    path: tuple[str, ...],
    text: str,
    chunk_id: str,
) -> Chunk:
    tables = list(dict.fromkeys(p.table for p in group if p.table is not None))
    node_ids = sorted({*tables, *(p.node for p in group)})  # ids are reading order
    pages: set[int] = set()
    boxes: list[ChunkBox] = []
    for node_id in node_ids:
        page, bbox = _location(outline.nodes[node_id])
        if page is not None:
            pages.add(page)
            if bbox is not None:
                boxes.append(ChunkBox(node=node_id, page=page, bbox=bbox))
    table: TableContext | None = None
    if tables:
        table_node = outline.nodes[tables[0]]
        assert isinstance(table_node, TableNode)
        rows = [outline.nodes[p.node] for p in group if p.table is not None]
        table = TableContext(
            node=table_node.id,
            columns=table_node.props.columns,
            rows=list(dict.fromkeys(r.props.row for r in rows if isinstance(r, TableRowNode))),
        )
    spans = [
        ChunkSpan(
            node=p.node,
            span=p.span,
            start=p.start,
            end=p.end,
            ocr_confidence=outline.spans[p.span].ocr_confidence,
        )
        for p in group
    ]
    confidences = [s.ocr_confidence for s in spans if s.ocr_confidence is not None]
    return Chunk(
        id=chunk_id,
        document_id=document_id,
        index=index,
        text=text,
        start=group[0].start,
        end=group[-1].end,
        heading_path=list(path),
        nodes=node_ids,
        spans=spans,
        pages=sorted(pages),
        boxes=boxes,
        table=table,
        ocr_confidence=min(confidences, default=None),
    )
