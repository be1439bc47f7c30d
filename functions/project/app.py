"""Project step: DoclingDocument JSON in S3 -> projection.json in S3; returns keys and counts."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.projection
from richdoc.artifacts import projection_key
from richdoc.projection import SourceInfo
from richdoc.stage import StageEvent, clients, stage_handler


class ProjectEvent(StageEvent):
    docling_key: str
    source: SourceInfo


@stage_handler("project", ProjectEvent)
def handler(event: ProjectEvent, context: LambdaContext) -> dict[str, Any]:
    store = clients.artifacts
    doc = richdoc.projection.load_docling(store.get_bytes(event.docling_key))
    projection = richdoc.projection.project(doc, event.source)
    key = projection_key(event.job_id, event.run)
    store.put_bytes(key, projection.to_json_bytes())
    return {
        "projection_key": key,
        "counts": {
            "nodes": len(projection.nodes),
            "edges": len(projection.edges),
            "spans": len(projection.spans),
        },
    }
