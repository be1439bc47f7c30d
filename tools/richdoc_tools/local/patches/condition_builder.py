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
from typing import TYPE_CHECKING, Concatenate, ParamSpec

if TYPE_CHECKING:
    from boto3.dynamodb.transform import TransformationInjector

from richdoc_tools.local.patch_targets import original, replace

TARGET = "boto3.dynamodb.transform.TransformationInjector.inject_condition_expressions"
PATCHED = (TARGET,)

P = ParamSpec("P")


def with_own_builder(
    inject: Callable[Concatenate[TransformationInjector, P], None],
) -> Callable[Concatenate[TransformationInjector, P], None]:
    from boto3.dynamodb.conditions import ConditionExpressionBuilder

    @functools.wraps(inject)
    def inject_with_own_builder(
        injector: TransformationInjector, /, *args: P.args, **kwargs: P.kwargs
    ) -> None:
        own = copy.copy(injector)
        # The builder is private state its __init__ sets (the stubs leave it out).
        own._condition_builder = ConditionExpressionBuilder()  # type: ignore[attr-defined]
        inject(own, *args, **kwargs)

    return inject_with_own_builder


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, with_own_builder(original(TARGET)))
