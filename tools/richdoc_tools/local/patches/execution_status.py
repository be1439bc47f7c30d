"""An execution's status while moto is still starting it.

moto's interpreter creates an execution with no status and sets RUNNING a moment later,
from the starting thread. ``ListExecutions`` (and its status filter) reads ``status`` on
every execution of the state machine, so a listing that lands in that window fails with
``AttributeError: 'NoneType' object has no attribute 'value'``. The stack lists executions
all the time (the status-event loop, the console), and under load the window is wide
enough to hit: such an execution is reported RUNNING, as Step Functions reports an
execution from the moment StartExecution returns.
"""

from __future__ import annotations

import contextlib
from typing import Any

from richdoc_tools.local.patches.target import replace

TARGET = "moto.stepfunctions.parser.backend.execution.Execution.status"
PATCHED = (TARGET,)


def _status(execution: Any) -> str:
    from moto.stepfunctions.parser.api import ExecutionStatus

    status = execution.exec_status or ExecutionStatus.RUNNING
    return str(status.value)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, property(_status))
