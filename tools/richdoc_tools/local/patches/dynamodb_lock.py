"""moto's DynamoDB backend, one request at a time.

The backend mutates items in place and serializes them without a lock; concurrent
invocations (threads here, processes on AWS) failed with "dictionary changed size during
iteration" under load. Every emulated DynamoDB request runs under one lock
(``emulation.DYNAMODB_LOCK``, which the stream's reader takes too).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.emulation import DYNAMODB_LOCK
from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.core.common_types import TYPE_RESPONSE
    from moto.dynamodb.responses import DynamoHandler

TARGET = "moto.dynamodb.responses.DynamoHandler.call_action"
PATCHED = (TARGET,)


def one_at_a_time(
    call_action: Callable[[DynamoHandler], TYPE_RESPONSE],
) -> Callable[[DynamoHandler], TYPE_RESPONSE]:
    @functools.wraps(call_action)
    def call_action_locked(handler: DynamoHandler) -> TYPE_RESPONSE:
        with DYNAMODB_LOCK:
            return call_action(handler)

    return call_action_locked


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, one_at_a_time(original(TARGET)))
