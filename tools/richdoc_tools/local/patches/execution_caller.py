"""Each execution's task calls are the state machine's: its role's session, as Step
Functions calls a task's API with the state machine's role.

moto's interpreter runs an execution on a thread of its own
(``ExecutionWorker._execution_logic``), started by whoever called StartExecution (the
starter's handler); the thread, and the Map iterations' threads it starts, act as the
state machine instead (``callers``), so its Lambda invocations, SendMessage and other
integrations are checked against the state machine's role.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests import callers

if TYPE_CHECKING:
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

TARGET = "moto.stepfunctions.parser.backend.execution_worker.ExecutionWorker._execution_logic"
PATCHED = (TARGET,)

# (the state machine's role ARN, the execution's input) -> the caller its tasks act as
Enter = Callable[[str, Any], callers.Caller]
Leave = Callable[[callers.Caller], None]  # the execution has ended


def as_state_machine(
    logic: Callable[[ExecutionWorker], None], enter: Enter, leave: Leave
) -> Callable[[ExecutionWorker], None]:
    @functools.wraps(logic)
    def execution_logic(worker: ExecutionWorker) -> None:
        details = worker._evaluation_details
        caller = enter(details.aws_execution_details.role_arn, details.execution_details.inpt)
        try:
            with callers.acting_as(caller):
                logic(worker)
        finally:
            leave(caller)

    return execution_logic


def install(exit_stack: contextlib.ExitStack, enter: Enter, leave: Leave) -> None:
    replace(exit_stack, TARGET, as_state_machine(original(TARGET), enter, leave))
