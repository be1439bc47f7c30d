"""``StopExecution`` as Step Functions does it: the execution is ABORTED at once, with the
error and cause the caller gave.

moto drops the request's ``error`` and ``cause``, and its interpreter only notes the stop:
the execution stays RUNNING until the task it is in returns (it checks between states).
On AWS the execution is ABORTED when the call returns (its status event goes out then)
while the Lambda invocation it was waiting for runs on to its end, unheard. A cancelled
run's backstop depends on that order (the reconciler closes the attempts still running
while their handlers are busy), so the embedded stack keeps it: the replacement stops
the interpreter as moto does, and marks the execution ABORTED, with its error and cause,
in the same call. When the interpreter then ends the execution, it stays ABORTED
(``REFLECT``): moto would report the error a task raised after the stop (a Map
iteration that failed on its way out) as FAILED.

Both are where an execution ends, so both announce it to the status events' loop
(``runtime.status_events.executions_ended``), which then sends its status change event at once,
as Step Functions does, rather than finding it by listing executions.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from richdoc_tools.local.patches.target import original, replace
from richdoc_tools.local.runtime.status_events import executions_ended

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
        executions_ended.ended(arn)
    return ActionResult({"stopDate": execution.stop_date})


def _stays_aborted(reflect: Reflect) -> Reflect:
    def reflect_status(comm: BaseExecutionWorkerCommunication) -> None:
        from moto.stepfunctions.parser.api import ExecutionStatus

        if comm.execution.exec_status == ExecutionStatus.ABORTED:
            return  # stopped (and announced then): how its last task ended is not heard
        reflect(comm)
        executions_ended.ended(comm.execution.exec_arn)

    return reflect_status


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, _stop_execution)
    replace(exit_stack, REFLECT, _stays_aborted(original(REFLECT)))
