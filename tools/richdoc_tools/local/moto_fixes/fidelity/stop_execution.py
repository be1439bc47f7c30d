"""``StopExecution`` aborts the execution at once, with the error and cause the caller gave.

What moto does: its ``StopExecution`` drops the request's ``error`` and ``cause``
(``StateMachine.stop_execution`` stops with empty ones), and its interpreter only notes
the stop: the execution stays RUNNING until the task it is in returns (the interpreter
checks between states), and is then ABORTED without them. An execution stopped while its
last task fails on its way out (a Map iteration raising after the stop) ends FAILED.

What AWS does: StopExecution stops the execution with the ``error`` ("The error code of
the failure") and ``cause`` it is given (StopExecution:
https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html):
when the call returns the execution is ABORTED (DescribeExecution shows the status, the
error and the cause, and its status change event goes out then), while the Lambda
invocation it was waiting for runs on to its end, unheard. A cancelled run's backstop
depends on that order (the reconciler closes the attempts still running while their
handlers are busy).

The fix stops the interpreter as moto does and marks the execution ABORTED, with its
error and cause, in the same call; when the interpreter later ends the execution, it
stays ABORTED (its status is not reflected again).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.stepfunctions.parser.backend.execution import (
        BaseExecutionWorkerCommunication,
        Execution,
    )
    from moto.stepfunctions.responses import StepFunctionResponse

    Reflect = Callable[[BaseExecutionWorkerCommunication], None]

TARGET = "moto.stepfunctions.responses.StepFunctionResponse.stop_execution"
REFLECT = (
    "moto.stepfunctions.parser.backend.execution."
    "BaseExecutionWorkerCommunication._reflect_execution_status"
)
PATCHED = (TARGET, REFLECT)


def _stop_execution(self: StepFunctionResponse) -> ActionResult:
    from moto.core.responses import ActionResult
    from moto.stepfunctions.parser.api import ExecutionStatus

    arn = self._get_param("executionArn")
    error, cause = self._get_param("error"), self._get_param("cause")
    # The embedded stack runs moto's interpreter (the parser backend): its own Execution.
    described = self.stepfunction_backend.describe_execution(arn)  # or ExecutionDoesNotExist
    execution = cast("Execution", described)
    if execution.status == ExecutionStatus.RUNNING:
        stopped = datetime.datetime.now(tz=datetime.UTC)
        execution.stop(stop_date=stopped, error=error, cause=cause)
        execution.exec_status = ExecutionStatus.ABORTED
        execution.stop_date, execution.error, execution.cause = stopped, error, cause
    return ActionResult({"stopDate": execution.stop_date})


def _stays_aborted(reflect: Reflect) -> Reflect:
    @functools.wraps(reflect)
    def reflect_status(comm: BaseExecutionWorkerCommunication) -> None:
        from moto.stepfunctions.parser.api import ExecutionStatus

        if comm.execution.exec_status == ExecutionStatus.ABORTED:
            return  # stopped: how its last task ended is not heard
        reflect(comm)

    return reflect_status


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, _stop_execution)
    replace(exit_stack, REFLECT, _stays_aborted(original(REFLECT)))
