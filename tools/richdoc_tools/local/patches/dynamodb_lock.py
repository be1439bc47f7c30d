"""moto's DynamoDB backend, one request at a time.

The backend mutates items in place and serializes them without a lock; concurrent
invocations (threads here, processes on AWS) failed with "dictionary changed size during
iteration" under load. Every emulated DynamoDB request runs under one lock
(``emulation.DYNAMODB_LOCK``, which the stream's reader takes too).
"""

from __future__ import annotations

import contextlib

from richdoc_tools.local.emulation import DYNAMODB_LOCK
from richdoc_tools.local.patches.target import locked, original, replace

TARGET = "moto.dynamodb.responses.DynamoHandler.call_action"
PATCHED = (TARGET,)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, locked(original(TARGET), DYNAMODB_LOCK))
