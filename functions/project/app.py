"""Project step: DoclingDocument JSON in S3 -> projection.json, its retrieval chunks
(chunks.jsonl), the document as Markdown (document.md) and one CSV per table (tables/) in
S3; returns their keys and counts (contract: ``richdoc.contracts.PROJECT``). A thin
adapter over ``richdoc.project_step.project_request``."""

from __future__ import annotations

import gc
import os

import docling_core.types.doc  # noqa: F401  (first, and frozen: below)

# docling-core's model classes (about 86,000 objects) live as long as the process. Frozen
# before the other imports, the full collection those imports set off does not walk them
# again: about 40 ms of the Init (bench item 4).
gc.freeze()

from aws_lambda_powertools.utilities.typing import LambdaContext  # noqa: E402

import richdoc.project_step  # noqa: E402
from richdoc.contracts import PROJECT, ProjectInput, ProjectOutput  # noqa: E402
from richdoc.stage import stage_handler  # noqa: E402
from richdoc.wiring import wiring  # noqa: E402

# The chunks' size limit in UTF-8 bytes of text (template parameter ChunkMaxBytes; unset:
# the chunker's default).
_CHUNK_MAX_BYTES = os.environ.get("RICHDOC_CHUNK_MAX_BYTES")
CHUNK_MAX_BYTES = int(_CHUNK_MAX_BYTES) if _CHUNK_MAX_BYTES else None


@stage_handler(PROJECT)
def handler(event: ProjectInput, context: LambdaContext) -> ProjectOutput:
    return richdoc.project_step.project_request(
        event, store=wiring.artifacts, chunk_max_bytes=CHUNK_MAX_BYTES
    )
