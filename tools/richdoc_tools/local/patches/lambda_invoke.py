"""moto runs function code in Docker; here the embedded stack's Lambda runtime runs it.

Every moto path that executes a function (the Invoke API, Step Functions tasks, event
sources, S3 notifications, server mode) goes through ``LambdaFunction._invoke_lambda``,
which returns ``(payload, errored, logs)``. It is replaced by the runtime's dispatcher
(``richdoc_tools.local.runtime.lambdas.LambdaRuntime.invoke``), which runs the repository's
handlers in this process.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import replace

if TYPE_CHECKING:
    from moto.awslambda.models import LambdaFunction

    from richdoc_tools.local.runtime.lambdas import LambdaRuntime

TARGET = "moto.awslambda.models.LambdaFunction._invoke_lambda"
PATCHED = (TARGET,)


def install(exit_stack: contextlib.ExitStack, runtime: LambdaRuntime) -> None:
    def _invoke_lambda(fn: LambdaFunction, event: str | None = None) -> tuple[str, bool, str]:
        return runtime.invoke(fn, event)

    replace(exit_stack, TARGET, _invoke_lambda)
