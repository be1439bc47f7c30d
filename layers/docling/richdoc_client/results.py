"""What a successful run left behind: the keys of its outputs in the results bucket and
their counts (the completion event and the manifest both carry them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from richdoc_client.wire import FrozenWireModel

Count = Annotated[int, Field(ge=0)]


class ResultKeys(FrozenWireModel):
    """Object keys in ``bucket`` (the stack's artifact bucket), one run's outputs."""

    bucket: str
    docling_key: str  # the DoclingDocument JSON
    projection_key: str  # projection.json
    detection_key: str  # detection.json
    chunks_key: str | None = None  # chunks.jsonl, for runs that wrote chunks


class ResultCounts(FrozenWireModel):
    nodes: Count
    edges: Count
    spans: Count
    ambiguities: Count
    ambiguities_suppressed: Count
    chunks: Count | None = None  # for runs that wrote chunks
