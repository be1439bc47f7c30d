"""StartExecution refuses an input over 256 KiB.

What moto does: it starts the execution. (Each state's input and output moto holds to
the same limit itself, failing the execution with ``States.DataLimitExceeded``:
tests/aws/test_aws_limits.py.)

What AWS does: an execution's input is at most 262,144 bytes of UTF-8 ("Maximum input or
output size for a task, state, or execution": 256 KiB, Step Functions quotas:
https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html; StartExecution's
``input`` length constraint); a larger one is refused with 400 ``ValidationException``.

The fix refuses such an input before moto starts the execution.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.stepfunctions.responses import StepFunctionResponse

TARGET = "moto.stepfunctions.responses.StepFunctionResponse.start_execution"
PATCHED = (TARGET,)
MAX_INPUT_BYTES = 262_144


def limited(
    start: Callable[[StepFunctionResponse], ActionResult],
) -> Callable[[StepFunctionResponse], ActionResult]:
    @functools.wraps(start)
    def start_limited(self: StepFunctionResponse) -> ActionResult:
        execution_input = self._get_param("input") or ""
        if len(str(execution_input).encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
            raise ServiceErrorResponse(
                "stepfunctions",
                400,
                "ValidationException",
                "1 validation error detected: Value at 'input' failed to satisfy constraint: "
                f"Member must have length less than or equal to {MAX_INPUT_BYTES}",
            )
        return start(self)

    return start_limited


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, limited(original(TARGET)))
