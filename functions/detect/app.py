"""Detect step: projection.json in S3 -> detection.json in S3; returns its key and counts
(contract: ``richdoc.contracts.DETECT``)."""

from __future__ import annotations

from aws_lambda_powertools.utilities.typing import LambdaContext

import richdoc.detection
from richdoc.artifacts import detection_key
from richdoc.contracts import DETECT, DetectCounts, DetectInput, DetectOutput
from richdoc.detection.ruleset import detection_rules_setting
from richdoc.graph import Projection
from richdoc.stage import stage_handler
from richdoc.wiring import wiring


@stage_handler(DETECT)
def handler(event: DetectInput, context: LambdaContext) -> DetectOutput:
    store = wiring.artifacts
    projection = Projection.model_validate_json(store.get_bytes(event.projection_key))
    rules = detection_rules_setting()  # the deployment's DetectionRules
    detection = richdoc.detection.detect(projection, clarify=event.clarify, rules=rules)
    key = detection_key(event.job_id, event.run)
    store.put_bytes(key, detection.to_json_bytes())
    return DetectOutput(
        detection_key=key,
        rules=rules.value,
        counts=DetectCounts(
            ambiguities=detection.stats.ambiguities,
            ambiguities_suppressed=detection.stats.ambiguities_suppressed,
        ),
    )
