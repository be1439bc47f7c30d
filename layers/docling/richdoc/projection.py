"""Projection of a DoclingDocument into the richdoc graph (``richdoc.projection/v1``).

The data model below is the contract of ``projection.json`` (see ../shared/design.md,
"Projection JSON"). The projection function itself is deterministic: it reads only the
document content, never the clock, randomness, or hash ordering.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from docling_core.types.doc import DoclingDocument
from pydantic import BaseModel, ConfigDict, Field

SCHEMA = "richdoc.projection/v1"


class NodeLabel(StrEnum):
    DOCUMENT = "DOCUMENT"
    SECTION = "SECTION"
    PARAGRAPH = "PARAGRAPH"
    TABLE = "TABLE"
    TABLE_ROW = "TABLE_ROW"


class SourceInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    sha256: str | None = None
    pipeline: str | None = None

    @classmethod
    def for_document(
        cls,
        doc: DoclingDocument,
        *,
        name: str | None = None,
        sha256: str | None = None,
        pipeline: str | None = None,
    ) -> SourceInfo:
        """Fill what the caller does not know from the document's own origin."""
        if name is None:
            name = doc.origin.filename if doc.origin is not None else doc.name
        return cls(name=name, sha256=sha256, pipeline=pipeline)


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

    schema_: Literal["richdoc.projection/v1"] = Field(
        default="richdoc.projection/v1", alias="schema"
    )
    source: SourceInfo
    canonical_text: str
    nodes: list[Node]
    edges: list[Edge]
    spans: list[Span]
    stats: dict[str, Any] = Field(default_factory=dict)

    def to_json_bytes(self) -> bytes:
        """Canonical serialization: sorted keys, UTF-8, fixed layout, trailing newline."""
        data = self.model_dump(mode="json", by_alias=True)
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1)
        return (text + "\n").encode("utf-8")
