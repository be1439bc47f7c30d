"""Lambda's payload quotas on Invoke requests.

What moto does: it takes an Invoke request of any size. (It already refuses a synchronous
response above about 6 MB, with ``Function.ResponseSizeTooLarge``.)

What AWS does: an invocation's request payload is at most 6 MB (6,291,456 bytes)
synchronous and 1 MB (1,048,576 bytes) asynchronous (``Event``); a larger one is refused
with 413 ``RequestTooLargeException`` (Invoke:
https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html; Lambda quotas:
https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).

The fix refuses an Invoke request over its quota before moto reads it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse

if TYPE_CHECKING:
    from moto.awslambda.responses import LambdaResponse
    from moto.core.common_types import TYPE_RESPONSE

TARGET = "moto.awslambda.responses.LambdaResponse.invoke"
PATCHED = (TARGET,)
SYNC_LIMIT = 6_291_456
ASYNC_LIMIT = 1_048_576


def limited(
    invoke: Callable[[LambdaResponse], TYPE_RESPONSE],
) -> Callable[[LambdaResponse], TYPE_RESPONSE]:
    @functools.wraps(invoke)
    def invoke_limited(self: LambdaResponse) -> TYPE_RESPONSE:
        asynchronous = self.headers.get("X-Amz-Invocation-Type") == "Event"
        limit = ASYNC_LIMIT if asynchronous else SYNC_LIMIT
        raw = self.raw_body or b""
        size = len(raw.encode() if isinstance(raw, str) else raw)
        if size > limit:
            raise ServiceErrorResponse(
                "lambda",
                413,
                "RequestTooLargeException",
                f"Request must be smaller than {limit} bytes for the InvokeFunction operation",
            )
        return invoke(self)

    return invoke_limited


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, limited(original(TARGET)))
