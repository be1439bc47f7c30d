"""Project step: DoclingDocument JSON in S3 -> projection.json in S3; returns its key and counts
(contract: ``richdoc.contracts.PROJECT``)."""

from __future__ import annotations

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.projection
from richdoc.artifacts import projection_key
from richdoc.contracts import PROJECT, ProjectCounts, ProjectInput, ProjectOutput
from richdoc.stage import stage_handler
from richdoc.wiring import wiring


@stage_handler(PROJECT)
def handler(event: ProjectInput, context: LambdaContext) -> ProjectOutput:
    store = wiring.artifacts
    doc = richdoc.projection.load_docling(store.get_bytes(event.docling_key))
    projection = richdoc.projection.project(doc, event.source)
    key = projection_key(event.job_id, event.run)
    store.put_bytes(key, projection.to_json_bytes())
    return ProjectOutput(
        projection_key=key,
        counts=ProjectCounts(
            nodes=len(projection.nodes), edges=len(projection.edges), spans=len(projection.spans)
        ),
    )
