"""Canary: each call of a boto3 DynamoDB resource builds its condition expressions with a
builder of its own, never the one its client's injector shares with every thread that
uses the resource (patches.condition_builder)."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
from boto3.dynamodb.conditions import Attr, Key
from boto3.dynamodb.transform import TransformationInjector
from richdoc_tools.local.patches import condition_builder


def _injected() -> tuple[Any, dict[str, Any]]:
    """A Query's conditions as a resource's injector makes them into expressions."""
    model = boto3.client("dynamodb", region_name="us-east-1").meta.service_model
    injector: Any = TransformationInjector()  # its builder is private: not in the stubs
    params: dict[str, Any] = {
        "TableName": "t",
        "KeyConditionExpression": Key("pk").eq("a"),
        "FilterExpression": Attr("n").eq(1),
    }
    injector.inject_condition_expressions(params, model.operation_model("Query"))
    return injector, params


def test_with_the_patch_the_shared_builder_is_never_used() -> None:
    with contextlib.ExitStack() as exit_stack:
        condition_builder.install(exit_stack)
        injector, params = _injected()
    assert injector._condition_builder._name_count == 0
    names = params["ExpressionAttributeNames"]
    assert sorted(names.values()) == ["n", "pk"]  # the conditions were built all the same
    assert params["KeyConditionExpression"].startswith(
        next(k for k, v in names.items() if v == "pk")
    )


def test_without_the_patch_every_call_numbers_with_the_shared_builder() -> None:
    injector, _ = _injected()
    assert injector._condition_builder._name_count > 0
