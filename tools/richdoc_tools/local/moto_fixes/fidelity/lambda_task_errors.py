"""A Lambda task whose Invoke call is refused fails with ``Lambda.<error code>``.

What moto does: its interpreter names such a failure ``Lambda.<code>`` for the
``arn:aws:states:::lambda:invoke`` integration, but for a task whose ``Resource`` is the
function's ARN (every task of this definition) it names it ``Exception``, which only
``States.ALL`` catches.

What AWS does: when the Lambda API refuses a task's invocation (a throttle: HTTP 429
``TooManyRequestsException``; a missing function), Step Functions fails the task with the
error ``Lambda.<code>`` and the cause ``<message> (Service: AWSLambda; Status Code: ...;
Error Code: ...; Request ID: ...)``, which a definition's Retry and Catch match ("Handle
transient Lambda service exceptions":
https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html;
the definition's throttle retrier names ``Lambda.TooManyRequestsException``).

The fix gives those tasks the integration's naming (moto's own
``StateTaskServiceLambda._error_cause_from_client_error``); a function's own errors (its
error envelope) keep theirs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEvent,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task_lambda import (
        StateTaskLambda,
    )
    from moto.stepfunctions.parser.asl.eval.environment import Environment
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

TARGET = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task_lambda"
    ".StateTaskLambda._from_error"
)
# The integration's naming of a refused invocation, which the replacement reuses.
NAMING = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service"
    ".state_task_service_lambda.StateTaskServiceLambda._error_cause_from_client_error"
)
PATCHED = (TARGET,)


def _from_error(
    moto_from_error: Callable[[StateTaskLambda, Environment, Exception], FailureEvent],
) -> Callable[[StateTaskLambda, Environment, Exception], FailureEvent]:
    def from_error(task: StateTaskLambda, env: Environment, ex: Exception) -> FailureEvent:
        from botocore.exceptions import ClientError
        from moto.stepfunctions.parser.api import (
            HistoryEventType,
            LambdaFunctionFailedEventDetails,
        )
        from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import (
            CustomErrorName,
        )
        from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
            FailureEvent,
        )

        if not isinstance(ex, ClientError):
            return moto_from_error(task, env, ex)
        naming: Any = original(NAMING)
        error, cause = naming.__func__(ex)  # a staticmethod, as its class stores it
        return FailureEvent(
            env=env,
            error_name=CustomErrorName(error),
            event_type=HistoryEventType.LambdaFunctionFailed,
            event_details=cast(
                "EventDetails",
                {
                    "lambdaFunctionFailedEventDetails": LambdaFunctionFailedEventDetails(
                        error=error, cause=cause
                    )
                },
            ),
        )

    return from_error


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, _from_error(original(TARGET)))
