"""Canary: each execution runs, on its own thread, as the caller the stack gives for the
state machine's role and the execution's input, and says when it has ended
(patches.execution_caller)."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import boto3
import pytest
from richdoc_tools.local.patches import execution_caller
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime.loops import wait_until

from tests.support.aws import executing_state_machines, state_machine

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def test_an_execution_acts_as_its_state_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    invocation = callers.Invocation(id="x", stage="StateMachine", key="k", pages="", attempt=1)
    entered: list[tuple[str, Any, str]] = []
    left: list[callers.Caller] = []

    def enter(role_arn: str, execution_input: Any) -> callers.Caller:
        entered.append((role_arn, execution_input, threading.current_thread().name))
        return callers.Caller(None, invocation)

    with executing_state_machines(monkeypatch):
        arn = state_machine(PASS)
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        role = sfn.describe_state_machine(stateMachineArn=arn)["roleArn"]
        with contextlib.ExitStack() as exit_stack:
            execution_caller.install(exit_stack, enter, left.append)
            sfn.start_execution(stateMachineArn=arn, name="e", input='{"job_id": "j"}')
            assert wait_until(lambda: bool(left), 30)
    [(role_arn, execution_input, thread)] = entered
    assert role_arn == role
    assert execution_input == {"job_id": "j"}
    assert thread != threading.current_thread().name
    assert left == [callers.Caller(None, invocation)]
