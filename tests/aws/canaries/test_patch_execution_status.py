"""Canary: moto creates an execution before it has a status, and ``status`` then fails;
the patch (patches.execution_status) reports it RUNNING, and a listing in that window
works."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from moto.stepfunctions.parser.backend.execution import Execution
from richdoc_tools.local.patches import execution_status


def _starting() -> Any:
    execution = Execution.__new__(Execution)
    execution.exec_status = None  # what moto's constructor sets, before start()
    return execution


def test_moto_still_has_no_status_for_an_execution_it_is_starting() -> None:
    with pytest.raises(AttributeError):
        _ = _starting().status


def test_an_execution_being_started_is_reported_running() -> None:
    from moto.stepfunctions.parser.api import ExecutionStatus

    with contextlib.ExitStack() as patches:
        execution_status.install(patches)
        assert _starting().status == "RUNNING"
        finished = _starting()
        finished.exec_status = ExecutionStatus.SUCCEEDED
        assert finished.status == "SUCCEEDED"
    with pytest.raises(AttributeError):  # undone with the stack
        _ = _starting().status
