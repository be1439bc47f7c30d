"""An application's retrieval side, run by the loaders' tests inside a fresh environment
that has the richdoc-client wheel with its ``langchain`` and ``llamaindex`` extras and
nothing of docling:

    python loader_consumer.py BUCKET      (AWS_ENDPOINT_URL names the S3 endpoint)

Prints one JSON object: what each framework's loader made of every current result, and
which of the modules that must not be there are importable.
"""

from __future__ import annotations

import importlib.util
import json
import sys

from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode

from richdoc_client.loaders.langchain import RichdocLoader
from richdoc_client.loaders.llamaindex import load_nodes
from richdoc_client.reader import ResultsReader


def _related(node: TextNode, relation: NodeRelationship) -> str:
    related = node.relationships[relation]
    assert isinstance(related, RelatedNodeInfo)
    return related.node_id


def main(bucket: str) -> None:
    reader = ResultsReader.s3(bucket)
    documents = RichdocLoader(reader).load()
    nodes = load_nodes(reader)
    assert all(isinstance(d, Document) for d in documents)
    assert all(isinstance(n, TextNode) for n in nodes)
    absent = [m for m in ("docling", "docling_core", "richdoc", "richdoc_tools", "moto")
              if importlib.util.find_spec(m) is not None]  # fmt: skip
    print(json.dumps({
        "importable": absent,
        "langchain": [
            {"id": d.id, "text": d.page_content, "metadata": d.metadata} for d in documents
        ],
        "llamaindex": [
            {
                "id": n.id_, "text": n.text, "metadata": n.metadata,
                "source": _related(n, NodeRelationship.SOURCE),
                "previous": getattr(n.prev_node, "node_id", None),
                "next": getattr(n.next_node, "node_id", None),
                "embedded": n.get_content(metadata_mode=MetadataMode.EMBED),
            }
            for n in nodes
        ],
    }))  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:])
