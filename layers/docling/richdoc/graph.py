"""The richdoc graph: the data model of ``projection.json`` (``richdoc.projection/v1``).

The contract is docs/projection.md.
It lives apart from ``richdoc.projection`` (which builds it from a DoclingDocument) so
that readers of a projection, the detect handler first, never import docling-core: that
import is most of a cold start.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from richdoc.contracts import SourceInfo

SCHEMA: Final = "richdoc.projection/v1"


class NodeLabel(StrEnum):
    DOCUMENT = "DOCUMENT"
    SECTION = "SECTION"
    PARAGRAPH = "PARAGRAPH"
    TABLE = "TABLE"
    TABLE_ROW = "TABLE_ROW"


class SpanKind(StrEnum):
    """What kind of block a span covers (the ``kind`` of a span)."""

    TITLE = "title"
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    CAPTION = "caption"
    CODE = "code"
    TABLE_ROW = "table_row"


class SkippedFeature(StrEnum):
    """Content the v1 feature matrix does not project (docs/projection.md, "Feature matrix v1").

    The value is both the key in ``stats.skipped_features`` and the feature tag of the
    ``UnsupportedFeature`` raised when such content is all a document has.
    """

    PICTURES = "pictures"
    FORMULAS = "formulas"
    FOOTNOTES = "footnotes"
    FORMS = "forms"


class NotProjected(StrEnum):
    """Deliberate omissions that are not features: counted in ``stats.not_projected``."""

    EMPTY_BLOCKS = "empty_blocks"  # text blocks whose text is empty or whitespace only
    EMPTY_ROWS = "empty_rows"  # table rows whose every cell is empty
    FURNITURE = "furniture"  # page headers/footers (furniture layer or label)
    NOTES = "notes"  # speaker notes, comments
    BACKGROUND = "background"  # watermarks
    INVISIBLE = "invisible"  # hidden text
    MARKERS = "markers"  # stand-alone list/footnote markers
    UNKNOWN = "unknown"  # item kinds this version does not know


class Node(BaseModel):
    id: int
    label: NodeLabel
    props: dict[str, Any] = Field(default_factory=dict)


class Edge(BaseModel):
    src: int
    dst: int
    label: Literal["CONTAINS"] = "CONTAINS"
    ord: int


class Span(BaseModel):
    node: int
    start: int  # UTF-8 byte offset into canonical_text
    end: int
    kind: str


class Projection(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["richdoc.projection/v1"] = Field(default=SCHEMA, alias="schema")
    source: SourceInfo
    canonical_text: str
    nodes: list[Node]
    edges: list[Edge]
    spans: list[Span]
    stats: dict[str, Any] = Field(default_factory=dict)

    def to_json_bytes(self) -> bytes:
        """Canonical serialization: sorted keys, UTF-8, fixed layout, trailing newline.

        Layout: one top-level member per line, and one node, edge or span per line (so
        golden files diff line by line); every other value is compact, as
        ``json.dumps(sort_keys=True, ensure_ascii=False)`` writes it. Built line by line
        because ``json.dumps(indent=...)`` falls back to the pure Python encoder, which
        alone took longer than the whole projection. Edges and spans hold only integers
        and one string, so they are formatted directly.
        """
        encode = _ENCODER.encode
        edges = (
            f'{{"dst": {e.dst}, "label": {_string(e.label)}, "ord": {e.ord}, "src": {e.src}}}'
            for e in self.edges
        )
        spans = (
            f'{{"end": {s.end}, "kind": {_string(s.kind)}, "node": {s.node}, "start": {s.start}}}'
            for s in self.spans
        )
        nodes = (
            f'{{"id": {n.id}, "label": {_string(n.label.value)}, "props": {encode(n.props)}}}'
            for n in self.nodes
        )
        members = {
            "canonical_text": _string(self.canonical_text),
            "edges": _json_array(edges),
            "nodes": _json_array(nodes),
            "schema": _string(self.schema_),
            "source": encode(self.source.model_dump(mode="json")),
            "spans": _json_array(spans),
            "stats": encode(self.stats),
        }
        lines = ",\n".join(f" {_string(key)}: {value}" for key, value in sorted(members.items()))
        return ("{\n" + lines + "\n}\n").encode("utf-8")


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)
_string = _ENCODER.encode  # a JSON string literal, exactly as inside any other value


def _json_array(items: Iterable[str]) -> str:
    body = ",\n  ".join(items)
    return f"[\n  {body}\n ]" if body else "[]"
