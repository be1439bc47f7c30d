"""The golden chunks: ``chunks.jsonl`` of every golden projection, at the default size
limit, and at the smallest limit for the fixtures that need cutting.

``python -m tests.support.chunk_goldens`` rewrites them after an intended change (review
the diff); tests/unit/test_chunks.py holds the committed files to what the builder makes.
"""

from __future__ import annotations

from pathlib import Path

from richdoc_client.chunking import DEFAULT_MAX_BYTES, MIN_MAX_BYTES, build_chunks, chunks_jsonl
from richdoc_client.identity import document_id
from richdoc_client.projection import Projection
from tests.support.gen_fixtures import GOLDEN

# Fixtures with blocks or sections longer than the smallest limit: cut and split there too.
SMALL_LIMIT_FIXTURES = ("docx_nested_table", "docx_real", "pages_bbox", "table_duplicate_headers")
# The ingest bucket the golden documents are pretended to come from (their document ids).
BUCKET = "richdoc-golden"


def cases() -> list[tuple[str, int]]:
    fixtures = sorted(path.name for path in GOLDEN.iterdir() if path.is_dir())
    return [(name, DEFAULT_MAX_BYTES) for name in fixtures] + [
        (name, MIN_MAX_BYTES) for name in SMALL_LIMIT_FIXTURES
    ]


def expected_path(name: str, max_bytes: int) -> Path:
    suffix = "" if max_bytes == DEFAULT_MAX_BYTES else f"-{max_bytes}"
    return GOLDEN / name / f"chunks{suffix}.jsonl"


def render(name: str, max_bytes: int) -> bytes:
    projection = Projection.model_validate_json((GOLDEN / name / "projection.json").read_bytes())
    source_key = projection.source.name
    chunks = build_chunks(
        projection, document_id=document_id(BUCKET, f"{name}/{source_key}"), max_bytes=max_bytes
    )
    return chunks_jsonl(chunks)


def main() -> None:
    for name, max_bytes in cases():
        expected_path(name, max_bytes).write_bytes(render(name, max_bytes))


if __name__ == "__main__":
    main()
