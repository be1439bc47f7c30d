"""Detect step: projection.json in S3 -> detection.json in S3; returns keys and counts."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.detection
from richdoc.artifacts import detection_key
from richdoc.projection import Projection
from richdoc.stage import StageEvent, clients, stage_handler


class DetectEvent(StageEvent):
    projection_key: str
    clarify: bool = False


@stage_handler("detect", DetectEvent)
def handler(event: DetectEvent, context: LambdaContext) -> dict[str, Any]:
    store = clients.artifacts
    projection = Projection.model_validate_json(store.get_bytes(event.projection_key))
    detection = richdoc.detection.detect(projection, clarify=event.clarify)
    key = detection_key(event.job_id, event.run)
    store.put_bytes(key, detection.to_json_bytes())
    return {
        "detection_key": key,
        "counts": {
            "ambiguities": detection.stats.ambiguities,
            "ambiguities_suppressed": detection.stats.ambiguities_suppressed,
        },
    }
