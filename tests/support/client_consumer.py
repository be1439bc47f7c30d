"""A consumer of richdoc's results, run by the client's tests inside a fresh environment
that has only the richdoc-client wheel and its dependencies (pydantic, boto3).

    python client_consumer.py s3 BUCKET      (AWS_ENDPOINT_URL names the S3 endpoint)
    python client_consumer.py directory ROOT

Prints one JSON object: what it found for each document, read through the reader.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys

from richdoc_client.chunking import chunks_jsonl
from richdoc_client.reader import NoSuccessfulRun, ResultNotFound, ResultsReader


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(mode: str, where: str) -> None:
    reader = ResultsReader.s3(where) if mode == "s3" else ResultsReader.directory(where)
    absent = [m for m in ("docling", "docling_core", "richdoc", "richdoc_tools", "moto")
              if importlib.util.find_spec(m) is not None]  # fmt: skip
    documents = {}
    for manifest in reader.documents():
        found: dict[str, object] = {"status": manifest.status.value, "source": manifest.source.key}
        try:
            projection = reader.projection(manifest)
            found["projection"] = _digest(projection.to_json_bytes())
            found["detection"] = _digest(reader.detection(manifest).to_json_bytes())
            chunks = list(reader.chunks(manifest))
            found["chunks"] = _digest(chunks_jsonl(chunks))
            found["markdown"] = _digest(reader.markdown(manifest).encode())
            found["tables"] = {
                table.key.rsplit("/", 1)[1]: reader.table(table).records()
                for table in reader.tables(manifest)
            }
            found["chunk_texts_slice"] = all(
                projection.canonical_text.encode()[c.start : c.end].decode() == c.text
                for c in chunks
            )
        except NoSuccessfulRun as exc:
            found["error"] = type(exc).__name__
        documents[manifest.document_id] = found
    try:
        reader.manifest("0" * 32)
        unknown = "found"
    except ResultNotFound:
        unknown = "ResultNotFound"
    by_key = reader.manifest_of(
        *next(iter(reader.documents())).source.model_dump(include={"bucket", "key"}).values()
    )
    print(json.dumps({
        "importable": absent, "documents": documents, "unknown": unknown,
        "by_key": by_key.document_id,
    }))  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:])
