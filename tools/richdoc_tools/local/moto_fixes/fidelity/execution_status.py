"""An execution that StartExecution is still starting is listed RUNNING.

What moto does: its StartExecution creates the execution, lists it with the state
machine's executions, and sets its status RUNNING a moment later, from the starting
thread. ListExecutions (and its status filter) reads every execution's status, so a
listing that lands in between fails with ``AttributeError: 'NoneType' object has no
attribute 'value'`` (the stack lists executions all the time: the status events' loop,
the console; under load the window is wide enough to hit).

What AWS does: an execution exists, RUNNING, from the moment StartExecution creates it
(ListExecutions: "Lists all executions of a state machine", each with its status;
https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html).

The fix reads an execution that has no status yet as RUNNING.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import replace

if TYPE_CHECKING:
    from moto.stepfunctions.parser.backend.execution import Execution

TARGET = "moto.stepfunctions.parser.backend.execution.Execution.status"
PATCHED = (TARGET,)


def _status(execution: Execution) -> str:
    from moto.stepfunctions.parser.api import ExecutionStatus

    status = execution.exec_status or ExecutionStatus.RUNNING
    return str(status.value)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, property(_status))
