"""The Project state: a run's DoclingDocument in S3 -> its outputs beside it, and their
keys and counts (contract: ``richdoc.contracts.PROJECT``).

The document is projected into its graph (``projection.json``: ``richdoc.projection``);
from the graph come its retrieval chunks (``chunks.jsonl``: ``richdoc_client.chunking``)
and one CSV per table (``tables/``: ``richdoc_client.tables``), and from the document its
Markdown (``document.md``: ``richdoc.markdown``). Each output is written by its own
function, which imports what it needs when it builds it (the chunker, docling-core's
Markdown serializer): the handler's cold start pays for the projection and the stores
(docs/benchmarks.md, item 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from richdoc.artifacts import (
    ArtifactStore,
    chunks_key,
    markdown_key,
    projection_key,
    tables_prefix,
)
from richdoc.contracts import ProjectCounts, ProjectInput, ProjectOutput
from richdoc.projection import load_docling, project
from richdoc_client.identity import document_id
from richdoc_client.projection import ProjectionSource

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument

    from richdoc.graph import Projection

# The media types of RFC 7763 and RFC 4180, with the charset both files are written in.
MARKDOWN = "text/markdown; charset=utf-8"
CSV = "text/csv; charset=utf-8; header=present"
NDJSON = "application/x-ndjson"


def project_request(
    event: ProjectInput, *, store: ArtifactStore, chunk_max_bytes: int | None = None
) -> ProjectOutput:
    """Project the run's parse and write every output; ``chunk_max_bytes`` limits a
    chunk's text (None: the chunker's default)."""
    source = event.source
    doc = load_docling(store.get_bytes(event.docling_key))
    projection = project(
        doc, ProjectionSource(name=source.key, sha256=event.sha256, pipeline=event.pipeline)
    )
    key = projection_key(event.job_id, event.run)
    store.put_bytes(key, projection.to_json_bytes())
    chunks = _write_chunks(store, event, projection, chunk_max_bytes)
    markdown_at = _write_markdown(store, event, doc)
    tables = _write_tables(store, event, projection)
    ocr = projection.stats.ocr
    return ProjectOutput(
        projection_key=key,
        chunks_key=chunks_key(event.job_id, event.run),
        markdown_key=markdown_at,
        tables_prefix=tables_prefix(event.job_id, event.run),
        counts=ProjectCounts(
            nodes=len(projection.nodes),
            edges=len(projection.edges),
            spans=len(projection.spans),
            chunks=chunks,
            tables=tables,
            ocr_page_count=None if ocr is None else len(ocr.ocr_pages),
            unread_pages=None if ocr is None else list(ocr.unread_pages),
        ),
    )


def _write_chunks(
    store: ArtifactStore, event: ProjectInput, projection: Projection, max_bytes: int | None
) -> int:
    """The graph's retrieval chunks, one JSON line each; how many."""
    from richdoc_client.chunking import DEFAULT_MAX_BYTES, build_chunks, chunks_jsonl

    chunks = build_chunks(
        projection,
        document_id=document_id(event.source.bucket, event.source.key),
        max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
    )
    store.put_bytes(chunks_key(event.job_id, event.run), chunks_jsonl(chunks), content_type=NDJSON)
    return len(chunks)


def _write_markdown(store: ArtifactStore, event: ProjectInput, doc: DoclingDocument) -> str:
    """The document as Markdown; its key."""
    from richdoc.markdown import render_markdown

    key = markdown_key(event.job_id, event.run)
    store.put_bytes(key, render_markdown(doc), content_type=MARKDOWN)
    return key


def _write_tables(store: ArtifactStore, event: ProjectInput, projection: Projection) -> int:
    """One CSV per TABLE node of the graph; how many."""
    from richdoc_client.tables import table_csv_name, table_csvs

    prefix = tables_prefix(event.job_id, event.run)
    tables = table_csvs(projection)
    for node, data in tables.items():
        store.put_bytes(prefix + table_csv_name(node), data, content_type=CSV)
    return len(tables)
