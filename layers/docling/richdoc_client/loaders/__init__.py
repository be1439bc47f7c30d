"""Loaders: a document's current result as the documents of the frameworks applications
build with, from the results bucket through the reader (no docling).

* ``richdoc_client.loaders.langchain``: LangChain ``Document``s (``richdoc-client[langchain]``);
* ``richdoc_client.loaders.llamaindex``: LlamaIndex ``TextNode``s (``richdoc-client[llamaindex]``).

Both take the same thing from the same place: each document's manifest (its current
result: the newest version's latest successful run), then that run's chunks in order, one
framework document per chunk, its text the chunk's text, its id the chunk's upsert id
(stable across runs for the same content at the same place), and its metadata
``chunk_metadata`` (docs/consumers.md, "Loaders"). A document whose newest version has no
successful run gives nothing. This module imports neither framework.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from richdoc_client.chunks import Chunk
from richdoc_client.manifest import Manifest
from richdoc_client.reader import ResultsReader

# Metadata a retriever filters and cites by, but that means nothing to an embedding model
# or a language model (identifiers, hashes, positions): the loaders keep them out of the
# text those see. The source's key, the heading path and the pages stay in it.
RETRIEVAL_ONLY_KEYS = (
    "document_id",
    "source_bucket",
    "version_id",
    "sha256",
    "job_id",
    "run",
    "chunk_id",
    "chunk_index",
    "bboxes",
    "nodes",
    "table_node",
)


@dataclass(frozen=True)
class LoadedChunk:
    """One chunk of a document's current result, as both loaders build on it."""

    id: str  # the chunk's upsert id
    text: str
    metadata: dict[str, Any]
    document_id: str


def chunk_metadata(manifest: Manifest, chunk: Chunk) -> dict[str, Any]:
    """A chunk's metadata: plain JSON values (strings, numbers, lists, objects).

    ``document_id``; the source version (``source_bucket``, ``source_key``,
    ``version_id``, ``sha256``); the run (``job_id``, ``run``); the chunk's place
    (``chunk_id``, ``chunk_index``, ``heading_path``, ``pages``, ``bboxes`` as
    ``{node, page, bbox}`` with top-left-origin page coordinates, ``nodes``, and
    ``table_node`` for table rows); ``ocr_confidence`` when some of its text was read by
    OCR; and the source's allow-listed user metadata and tags (``source_metadata``).
    """
    if manifest.result is None:
        raise ValueError(f"document {manifest.document_id} has no current result")
    metadata: dict[str, Any] = {
        "document_id": manifest.document_id,
        "source_bucket": manifest.source.bucket,
        "source_key": manifest.source.key,
        "version_id": manifest.source.version_id,
        "sha256": manifest.source.sha256,
        "job_id": manifest.job_id,
        "run": manifest.result.run,
        "chunk_id": chunk.id,
        "chunk_index": chunk.index,
        "heading_path": list(chunk.heading_path),
        "pages": list(chunk.pages),
        "bboxes": [box.model_dump(mode="json") for box in chunk.boxes],
        "nodes": list(chunk.nodes),
        "table_node": chunk.table.node if chunk.table is not None else None,
        "source_metadata": dict(manifest.metadata),
    }
    # Chunks of runs that read text by OCR say how sure it was (absent otherwise).
    if chunk.ocr_confidence is not None:
        metadata["ocr_confidence"] = chunk.ocr_confidence
    return metadata


def current_chunks(
    reader: ResultsReader, manifests: Iterable[Manifest] | None = None
) -> Iterator[LoadedChunk]:
    """The chunks of each document's current result, document by document (every
    document of the reader's store, in document id order, unless ``manifests`` says which)."""
    for manifest in reader.documents() if manifests is None else manifests:
        if manifest.result is None:
            continue  # the newest version has no successful run: nothing current to load
        for chunk in reader.chunks(manifest):
            yield LoadedChunk(
                id=chunk.id,
                text=chunk.text,
                metadata=chunk_metadata(manifest, chunk),
                document_id=manifest.document_id,
            )
