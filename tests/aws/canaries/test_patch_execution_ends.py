"""Canary: every end of an execution is announced once to the status events' loop
(patches.execution_ends): a natural end when moto's interpreter reflects it, a stop when
the execution leaves RUNNING (at once with moto_fixes.fidelity.stop_execution, when the
interpreter next looks with stock moto)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import stop_execution
from richdoc_tools.local.patches import execution_ends
from richdoc_tools.local.runtime.status_events import executions_ended

ROLE = "arn:aws:iam::123456789012:role/sfn"
WAIT = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 600, "End": True}}}
PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


@pytest.fixture
def sfn(aws: None) -> Iterator[Any]:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _started(sfn: Any, name: str, definition: dict[str, Any]) -> str:
    machine = sfn.create_state_machine(
        name=f"m-{name}", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    arn: str = sfn.start_execution(stateMachineArn=machine, name=name, input="{}")["executionArn"]
    return arn


def _entered_wait(sfn: Any, arn: str) -> None:
    """Await the observable condition (stopping before the Wait is entered crashes moto's
    interpreter, which has no environment yet)."""
    deadline = time.monotonic() + 60
    while not any(
        event["type"] == "WaitStateEntered"
        for event in sfn.get_execution_history(executionArn=arn)["events"]
    ):
        assert time.monotonic() < deadline, "the execution never entered its Wait state"
        time.sleep(0.02)


def _ended(sfn: Any, arn: str) -> str:
    deadline = time.monotonic() + 30
    while (status := sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return str(status)


def test_a_stop_that_aborts_at_once_is_announced_then_and_never_again(sfn: Any) -> None:
    """The announcements are the process's: other tests' executions may end meanwhile."""
    with contextlib.ExitStack() as patches:
        stop_execution.install(patches)
        execution_ends.install(patches)
        executions_ended.take()
        stopped = _started(sfn, "stopped", WAIT)
        _entered_wait(sfn, stopped)
        sfn.stop_execution(executionArn=stopped, error="richdoc.Cancelled")
        assert stopped in executions_ended.take()  # at once, before the task returns
        assert _ended(sfn, stopped) == "ABORTED"
        quick = _started(sfn, "quick", PASS)
        assert _ended(sfn, quick) == "SUCCEEDED"
        announced = executions_ended.take()
        assert quick in announced and stopped not in announced  # a stop is announced once


def test_with_stock_moto_a_stop_is_announced_when_the_interpreter_ends_it(sfn: Any) -> None:
    with contextlib.ExitStack() as patches:
        execution_ends.install(patches)
        executions_ended.take()
        stopped = _started(sfn, "stopped", WAIT)
        _entered_wait(sfn, stopped)
        sfn.stop_execution(executionArn=stopped)
        assert _ended(sfn, stopped) == "ABORTED"
        deadline = time.monotonic() + 30
        announced: list[str] = []
        while stopped not in announced:
            assert time.monotonic() < deadline, "the end was never announced"
            announced += executions_ended.take()
            time.sleep(0.02)
        assert stopped not in executions_ended.take()  # once
