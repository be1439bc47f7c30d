"""A document's current result as LlamaIndex ``TextNode``s (``pip install
richdoc-client[llamaindex]``: llama-index-core).

    from richdoc_client.loaders.llamaindex import load_nodes
    from richdoc_client.reader import ResultsReader

    nodes = load_nodes(ResultsReader.s3("<ArtifactBucketName>"))
    index = VectorStoreIndex(nodes)  # the chunks are the nodes: no splitter needed

Each ``TextNode``'s ``text`` is the chunk's text, its ``id_`` the chunk's upsert id, its
``metadata`` ``richdoc_client.loaders.chunk_metadata`` (docs/consumers.md, "Loaders"); its
``SOURCE`` relationship is the document id, and ``PREVIOUS`` and ``NEXT`` link the chunks of
one document in order. The identifiers and locations (``RETRIEVAL_ONLY_KEYS``: the
document id, the source's bucket, version and hash, the run, the chunk's id and index, its
boxes and nodes) stay out of the text the embedding and the language model see.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby, pairwise

from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from richdoc_client.loaders import RETRIEVAL_ONLY_KEYS, current_chunks
from richdoc_client.manifest import Manifest
from richdoc_client.reader import ResultsReader


def load_nodes(
    reader: ResultsReader, manifests: Iterable[Manifest] | None = None
) -> list[TextNode]:
    """One node per chunk of every document's current result (or of ``manifests``)."""
    nodes: list[TextNode] = []
    for document_id, chunks in groupby(
        current_chunks(reader, manifests), key=lambda chunk: chunk.document_id
    ):
        document = [
            TextNode(
                id_=chunk.id,
                text=chunk.text,
                metadata=chunk.metadata,
                excluded_embed_metadata_keys=list(RETRIEVAL_ONLY_KEYS),
                excluded_llm_metadata_keys=list(RETRIEVAL_ONLY_KEYS),
            )
            for chunk in chunks
        ]
        for before, after in pairwise(document):
            before.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id=after.id_)
            after.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id=before.id_)
        for node in document:
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=document_id)
        nodes.extend(document)
    return nodes
