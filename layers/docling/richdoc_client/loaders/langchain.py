"""A document's current result as LangChain ``Document``s (``pip install
richdoc-client[langchain]``: langchain-core).

    from richdoc_client.loaders.langchain import RichdocLoader
    from richdoc_client.reader import ResultsReader

    loader = RichdocLoader(ResultsReader.s3("<ArtifactBucketName>"))
    for document in loader.lazy_load():  # one per chunk of each current result
        print(document.id, document.metadata["heading_path"], document.page_content[:60])

Each ``Document``'s ``page_content`` is the chunk's text, its ``id`` the chunk's upsert id,
its ``metadata`` ``richdoc_client.loaders.chunk_metadata`` (docs/consumers.md, "Loaders").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from richdoc_client.loaders import current_chunks
from richdoc_client.manifest import Manifest
from richdoc_client.reader import ResultsReader


class RichdocLoader(BaseLoader):
    """LangChain's document loader over richdoc's results: every document's current
    result, or those of ``manifests``."""

    def __init__(self, reader: ResultsReader, manifests: Iterable[Manifest] | None = None) -> None:
        self.reader = reader
        self.manifests = list(manifests) if manifests is not None else None

    def lazy_load(self) -> Iterator[Document]:
        for chunk in current_chunks(self.reader, self.manifests):
            yield Document(id=chunk.id, page_content=chunk.text, metadata=chunk.metadata)
