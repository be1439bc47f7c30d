"""Project step: DoclingDocument JSON in S3 -> projection.json, its retrieval chunks
(chunks.jsonl), the document as Markdown (document.md) and one CSV per table (tables/) in
S3; returns their keys and counts (contract: ``richdoc.contracts.PROJECT``)."""

from __future__ import annotations

import os

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.projection
from richdoc.artifacts import chunks_key, markdown_key, projection_key, tables_prefix
from richdoc.contracts import PROJECT, ProjectCounts, ProjectInput, ProjectOutput
from richdoc.markdown import render_markdown
from richdoc.stage import stage_handler
from richdoc.wiring import wiring
from richdoc_client.chunking import DEFAULT_MAX_BYTES, build_chunks, chunks_jsonl
from richdoc_client.identity import document_id
from richdoc_client.projection import ProjectionSource
from richdoc_client.tables import table_csv_name, table_csvs

# The chunks' size limit in UTF-8 bytes of text (template parameter ChunkMaxBytes).
CHUNK_MAX_BYTES = int(os.environ.get("RICHDOC_CHUNK_MAX_BYTES") or DEFAULT_MAX_BYTES)
# The media types of RFC 7763 and RFC 4180, with the charset both files are written in.
MARKDOWN = "text/markdown; charset=utf-8"
CSV = "text/csv; charset=utf-8; header=present"


@stage_handler(PROJECT)
def handler(event: ProjectInput, context: LambdaContext) -> ProjectOutput:
    store = wiring.artifacts
    source = event.source
    doc = richdoc.projection.load_docling(store.get_bytes(event.docling_key))
    projection = richdoc.projection.project(
        doc, ProjectionSource(name=source.key, sha256=event.sha256, pipeline=event.pipeline)
    )
    chunks = build_chunks(
        projection,
        document_id=document_id(source.bucket, source.key),
        max_bytes=CHUNK_MAX_BYTES,
    )
    key = projection_key(event.job_id, event.run)
    store.put_bytes(key, projection.to_json_bytes())
    chunks_at = chunks_key(event.job_id, event.run)
    store.put_bytes(chunks_at, chunks_jsonl(chunks), content_type="application/x-ndjson")
    ocr = projection.stats.ocr
    markdown_at = markdown_key(event.job_id, event.run)
    store.put_bytes(markdown_at, render_markdown(doc), content_type=MARKDOWN)
    tables_at = tables_prefix(event.job_id, event.run)
    tables = table_csvs(projection)
    for node, data in tables.items():
        store.put_bytes(tables_at + table_csv_name(node), data, content_type=CSV)
    return ProjectOutput(
        projection_key=key,
        chunks_key=chunks_at,
        markdown_key=markdown_at,
        tables_prefix=tables_at,
        counts=ProjectCounts(
            nodes=len(projection.nodes),
            edges=len(projection.edges),
            spans=len(projection.spans),
            chunks=len(chunks),
            tables=len(tables),
            ocr_page_count=None if ocr is None else len(ocr.ocr_pages),
            unread_pages=None if ocr is None else list(ocr.unread_pages),
        ),
    )
