"""What a successful run left behind: the keys of its outputs in the results bucket and
their counts (the completion event and the manifest both carry them).

The Markdown, the table CSVs and their count came after the first runs: they are absent
(never null) from the outputs of runs that did not write them, so documents written
before them still meet the schema.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.json_schema import SkipJsonSchema

from richdoc_client.wire import FrozenWireModel

Count = Annotated[int, Field(ge=0)]


def _omit_unwritten(data: dict[str, Any], members: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None or key not in members}


class ResultKeys(FrozenWireModel):
    """Object keys in ``bucket`` (the stack's artifact bucket), one run's outputs."""

    bucket: str
    docling_key: str  # the DoclingDocument JSON
    projection_key: str  # projection.json
    detection_key: str  # detection.json
    chunks_key: str | None = None  # chunks.jsonl, for runs that wrote chunks
    markdown_key: str | SkipJsonSchema[None] = None  # document.md
    # The folder of the table CSVs, ``<prefix>table-<node id>.csv`` for each TABLE node
    # (richdoc_client.tables)
    tables_prefix: str | SkipJsonSchema[None] = None

    @model_serializer(mode="wrap")
    def _absent_when_unwritten(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_unwritten(handler(self), ("markdown_key", "tables_prefix"))


class ResultCounts(FrozenWireModel):
    nodes: Count
    edges: Count
    spans: Count
    ambiguities: Count
    ambiguities_suppressed: Count
    chunks: Count | None = None  # for runs that wrote chunks
    tables: Count | SkipJsonSchema[None] = None  # the CSVs under tables_prefix

    @model_serializer(mode="wrap")
    def _absent_when_unwritten(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_unwritten(handler(self), ("tables",))
