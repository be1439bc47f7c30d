"""richdoc's results as applications consume them (the ``richdoc-client`` distribution).

One definition of every published document: the models of ``projection.json``,
``detection.json``, the retrieval chunks (``chunks.jsonl``), the per-document manifest and
the completion event, from which the JSON Schemas under ``schemas/`` are generated; and a
reader over the results bucket (``richdoc_client.reader``). The pipeline's own package
(``richdoc``) writes these same models, so producer and consumer cannot drift apart.

It needs pydantic (and boto3 for the reader) and nothing else: no docling, no docling-core.
docs/consumers.md describes the documents, the layout and the reader.
"""
