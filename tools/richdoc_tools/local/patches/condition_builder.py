"""A condition expression builder per call of a boto3 DynamoDB resource.

A boto3 DynamoDB resource numbers expression placeholders with one builder per client,
shared by every thread using the resource; concurrent handlers (threads here, processes on
AWS) failed with "Query condition missed key schema element". Each call gets its own
builder.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "boto3.dynamodb.transform.TransformationInjector.inject_condition_expressions"
PATCHED = (TARGET,)


def with_own_builder(inject: Callable[..., Any]) -> Callable[..., Any]:
    from boto3.dynamodb.conditions import ConditionExpressionBuilder

    @functools.wraps(inject)
    def inject_with_own_builder(injector: Any, *args: Any, **kwargs: Any) -> Any:
        own = copy.copy(injector)
        own._condition_builder = ConditionExpressionBuilder()
        return inject(own, *args, **kwargs)

    return inject_with_own_builder


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, with_own_builder(original(TARGET)))
