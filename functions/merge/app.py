"""Merge step: the page-range shards' DoclingDocuments in S3 -> the document's, in S3;
returns the parse step's output for it (contract: ``richdoc.contracts.MERGE``), so project
and detect read a sharded document as they read any. A thin adapter over
``richdoc.parse.merge_step.merge_request``; it needs only docling-core, so it is a zip
function on the layer rather than the parse image."""

from __future__ import annotations

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.parse.merge_step
from richdoc.contracts import MERGE, MergeInput, ParseOutput
from richdoc.stage import stage_handler
from richdoc.wiring import wiring


@stage_handler(MERGE)
def handler(event: MergeInput, context: LambdaContext) -> ParseOutput:
    return richdoc.parse.merge_step.merge_request(event, store=wiring.artifacts_of(event.job_id))
