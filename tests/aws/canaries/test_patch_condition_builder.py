"""Canary: boto3's DynamoDB resource shares one condition builder per client
(patches.condition_builder)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import condition_builder


def test_condition_builder_patch_point_builds_with_the_injectors_builder() -> None:
    import boto3.dynamodb.transform as transform

    assert condition_builder.TARGET.endswith("TransformationInjector.inject_condition_expressions")
    source = inspect.getsource(transform.TransformationInjector)
    assert "self._condition_builder = ConditionExpressionBuilder()" in source
    assert "self._condition_builder.reset()" in source
