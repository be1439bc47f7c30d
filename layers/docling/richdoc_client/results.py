"""What a successful run left behind: the keys of its outputs in the results bucket and
their counts (the completion event and the manifest both carry them), and which run it
was (``ResultRef``: how an event and a manifest name a document's current result).

The Markdown, the table CSVs and their count came in version 1.1: they are null in the
outputs of runs that did not write them, and absent from documents written before."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from richdoc_client.versions import since
from richdoc_client.wire import AbsentOmitted, FrozenWireModel

Count = Annotated[int, Field(ge=0)]
PageNumber = Annotated[int, Field(ge=1)]


class ResultKeys(FrozenWireModel):
    """Object keys in ``bucket`` (the stack's artifact bucket), one run's outputs."""

    bucket: str
    docling_key: str  # the DoclingDocument JSON
    projection_key: str  # projection.json
    detection_key: str  # detection.json
    chunks_key: str | None = None  # chunks.jsonl, for runs that wrote chunks
    # document.md, for runs that wrote it
    markdown_key: str | None = Field(default=None, json_schema_extra=since("1.1"))
    # The folder of the table CSVs, ``<prefix>table-<node id>.csv`` for each TABLE node
    # (richdoc_client.tables), for runs that wrote them
    tables_prefix: str | None = Field(default=None, json_schema_extra=since("1.1"))


class ResultCounts(AbsentOmitted, FrozenWireModel):
    nodes: Count
    edges: Count
    spans: Count
    ambiguities: Count
    ambiguities_suppressed: Count
    chunks: Count | None = None  # for runs that wrote chunks
    # The CSVs under tables_prefix, for runs that wrote them
    tables: Count | None = Field(default=None, json_schema_extra=since("1.1"))
    # How many pages OCR read (a scan's), and the pages without a text layer left unread
    # because OCR is off (OcrMode), ascending: absent where the document had none of either.
    ocr_page_count: Count | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=since("1.1")
    )
    unread_pages: list[PageNumber] | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=since("1.1")
    )


class ResultRef(FrozenWireModel):
    """One run's result: the job (one version of the document) and its run. A document's
    current result is the one its manifest names; an index that holds a document's
    chunks remembers which result they came from by it."""

    job_id: str
    run: Annotated[int, Field(ge=1)]
