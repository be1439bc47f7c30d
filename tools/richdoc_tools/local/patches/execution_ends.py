"""Every end of an execution announced to the status events' loop
(``runtime.status_events.executions_ended``), which then sends its status change event at once,
as Step Functions does, rather than finding the end by listing executions.

An execution ends where moto's interpreter reflects its program's end on it
(``BaseExecutionWorkerCommunication._reflect_execution_status``) or where StopExecution
stops it (``StepFunctionResponse.stop_execution``). Each is wrapped to announce the
execution the call took out of RUNNING, so an end is announced once: a stop that aborts
at once (``moto_fixes.fidelity.stop_execution``) when it is made, and not again when the
interpreter later reflects it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.runtime.status_events import executions_ended

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication
    from moto.stepfunctions.responses import StepFunctionResponse

STOP = "moto.stepfunctions.responses.StepFunctionResponse.stop_execution"
REFLECT = (
    "moto.stepfunctions.parser.backend.execution."
    "BaseExecutionWorkerCommunication._reflect_execution_status"
)
PATCHED = (STOP, REFLECT)

RUNNING = "RUNNING"


def _status(execution: Any) -> str | None:
    status = execution.exec_status  # None while moto is still starting it
    return None if status is None else str(status.value)


def announcing_stops(
    stop: Callable[[StepFunctionResponse], ActionResult],
) -> Callable[[StepFunctionResponse], ActionResult]:
    @functools.wraps(stop)
    def stop_execution(self: StepFunctionResponse) -> ActionResult:
        arn = self._get_param("executionArn")
        execution = self.stepfunction_backend.describe_execution(arn)  # or ExecutionDoesNotExist
        before = _status(execution)
        answer = stop(self)
        if before in (None, RUNNING) and _status(execution) not in (None, RUNNING):
            executions_ended.ended(arn)
        return answer

    return stop_execution


def announcing_ends(
    reflect: Callable[[BaseExecutionWorkerCommunication], None],
) -> Callable[[BaseExecutionWorkerCommunication], None]:
    @functools.wraps(reflect)
    def reflect_status(comm: BaseExecutionWorkerCommunication) -> None:
        before = _status(comm.execution)
        reflect(comm)
        if before in (None, RUNNING):
            executions_ended.ended(comm.execution.exec_arn)

    return reflect_status


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, STOP, announcing_stops(original(STOP)))
    replace(exit_stack, REFLECT, announcing_ends(original(REFLECT)))
