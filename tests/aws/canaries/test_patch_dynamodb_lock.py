"""Canary: every emulated DynamoDB request passes through one handler method
(patches.dynamodb_lock)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import dynamodb_lock


def test_dynamodb_dispatch_patch_point_handles_every_request() -> None:
    import moto.dynamodb.responses as responses

    assert dynamodb_lock.TARGET == "moto.dynamodb.responses.DynamoHandler.call_action"
    source = inspect.getsource(responses)
    assert "class DynamoHandler(BaseResponse):" in source
    assert "    def call_action(self) -> TYPE_RESPONSE:" in source
