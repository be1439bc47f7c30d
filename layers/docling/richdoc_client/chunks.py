"""The model of a retrieval chunk: one line of ``chunks.jsonl`` (schema ``richdoc.chunk/v1``).

A chunk is one contiguous UTF-8 byte range of the projection's canonical text: whole
blocks of one section (or rows of one table), or one piece of a block too big for the
size limit. It says where it lies (heading path, nodes, spans, pages and boxes) and, for
table rows, the table's columns. ``richdoc_client.chunking`` builds them and fixes the
rules (docs/consumers.md, "Chunks").
"""

from __future__ import annotations

import json
from typing import Annotated, Final

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from richdoc_client.identity import DocumentId
from richdoc_client.projection import BBox, Confidence
from richdoc_client.versions import since
from richdoc_client.wire import AbsentOmitted, FrozenWireModel

SCHEMA: Final = "richdoc.chunk/v1"  # the JSON Schema of one line (lines carry no schema key)
VERSION: Final = "1.1"  # richdoc_client.versions: how it may change
CHUNK_ID_LENGTH = 32
ChunkId = Annotated[str, Field(pattern=rf"^[0-9a-f]{{{CHUNK_ID_LENGTH}}}$")]
Offset = Annotated[int, Field(ge=0)]


class ChunkSpan(AbsentOmitted, FrozenWireModel):
    """The part of one block (one projection span) a chunk holds: all of it, or a piece."""

    node: Offset
    span: Offset  # the block's spanRef: its index in projection.spans
    start: Offset  # UTF-8 byte offsets into canonical_text
    end: Offset
    # The span's ``ocr_confidence``: its block was read by OCR (absent otherwise).
    ocr_confidence: Confidence | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=since("1.1")
    )


class ChunkBox(FrozenWireModel):
    """Where a node of the chunk lies on its page (a split block's box is the whole block's)."""

    node: Offset
    page: Annotated[int, Field(ge=1)]
    bbox: BBox


class TableContext(FrozenWireModel):
    """The table a chunk of table rows belongs to, and what names its cells."""

    node: Offset  # the TABLE node
    columns: list[str]  # its column keys in column order (the keys of each row's cells)
    rows: list[Offset]  # the grid indices of the chunk's rows (TABLE_ROW ``row``)


class Chunk(AbsentOmitted, FrozenWireModel):
    id: ChunkId  # stable across runs for the same content at the same place: upsert by it
    document_id: DocumentId
    index: Offset  # position in the document's chunk sequence
    text: str  # canonical_text's bytes [start, end)
    start: Offset
    end: Offset
    heading_path: list[str]  # the titles of the sections it lies in, outermost first
    nodes: list[Offset]  # its blocks' nodes and the TABLE of its rows, in reading order
    spans: list[ChunkSpan]  # in order, tiling [start, end) with the separators between
    pages: list[Annotated[int, Field(ge=1)]]  # its nodes' pages, ascending, each once
    boxes: list[ChunkBox]  # its nodes' boxes, in node order
    table: TableContext | None  # set for table rows, null otherwise
    # The lowest ``ocr_confidence`` of its spans: some of its text was read by OCR from a
    # scan (absent when none was).
    ocr_confidence: Confidence | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=since("1.1")
    )

    @property
    def size(self) -> int:
        """The chunk's size in the unit of the limit: UTF-8 bytes of its text."""
        return self.end - self.start

    def to_json_line(self) -> str:
        """One line of chunks.jsonl: compact JSON, sorted keys, UTF-8, no newline."""
        data = self.model_dump(mode="json")
        return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
