"""Canary: each execution runs, on its own thread, as the caller the stack gives for the
state machine's role and the execution's input, and says when it has ended
(patches.execution_caller)."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local import callers
from richdoc_tools.local.events import wait_until
from richdoc_tools.local.patches import execution_caller

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def test_an_execution_acts_as_its_state_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    invocation = callers.Invocation(id="x", stage="StateMachine", key="k", pages="", attempt=1)
    entered: list[tuple[str, Any, str]] = []
    left: list[callers.Caller] = []

    def enter(role_arn: str, execution_input: Any) -> callers.Caller:
        entered.append((role_arn, execution_input, threading.current_thread().name))
        return callers.Caller(None, invocation)

    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        iam = boto3.client("iam", region_name="us-east-1")
        role = iam.create_role(RoleName="sm", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        arn = sfn.create_state_machine(name="m", definition=json.dumps(PASS), roleArn=role)[
            "stateMachineArn"
        ]
        with contextlib.ExitStack() as exit_stack:
            execution_caller.install(exit_stack, enter, left.append)
            sfn.start_execution(stateMachineArn=arn, name="e", input='{"job_id": "j"}')
            assert wait_until(lambda: bool(left), 30)
    [(role_arn, execution_input, thread)] = entered
    assert role_arn == role
    assert execution_input == {"job_id": "j"}
    assert thread != threading.current_thread().name
    assert left == [callers.Caller(None, invocation)]
