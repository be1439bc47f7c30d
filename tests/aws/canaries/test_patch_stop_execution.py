"""Canary: moto's StopExecution drops the error and cause and leaves the execution RUNNING
until its interpreter next looks; the patch (patches.stop_execution) aborts it at once
with both, as Step Functions does."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.patches import stop_execution

# A long Wait: the execution is running when it is stopped.
DEFINITION = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 600, "End": True}}}
ROLE = "arn:aws:iam::123456789012:role/sfn"


@pytest.fixture
def sfn(aws: None) -> Any:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _running(sfn: Any, name: str) -> str:
    machine = sfn.create_state_machine(
        name=f"m-{name}", definition=json.dumps(DEFINITION), roleArn=ROLE
    )["stateMachineArn"]
    arn: str = sfn.start_execution(stateMachineArn=machine, name=name, input="{}")["executionArn"]
    # moto's interpreter starts on a thread of its own; stopping it before it has entered
    # the Wait state crashes unpatched moto (no environment yet) instead of showing what
    # this canary is about. Await the observable condition, however slow the machine.
    deadline = time.monotonic() + 60
    while not any(
        event["type"] == "WaitStateEntered"
        for event in sfn.get_execution_history(executionArn=arn)["events"]
    ):
        assert time.monotonic() < deadline, "the execution never entered its Wait state"
        time.sleep(0.02)
    return arn


def _ended(sfn: Any, arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return dict(described)


def test_moto_still_drops_the_stops_error_and_cause(sfn: Any) -> None:
    arn = _running(sfn, "plain")
    sfn.stop_execution(executionArn=arn, error="richdoc.Cancelled", cause="by ops")
    described = _ended(sfn, arn)
    assert described["status"] == "ABORTED"
    assert "error" not in described and "cause" not in described


def test_the_patch_aborts_at_once_with_the_error_and_cause(sfn: Any) -> None:
    with contextlib.ExitStack() as patches:
        stop_execution.install(patches)
        arn = _running(sfn, "patched")
        stopped = sfn.stop_execution(executionArn=arn, error="richdoc.Cancelled", cause="by ops")
        described = sfn.describe_execution(executionArn=arn)  # no waiting
        assert (described["status"], described["error"], described["cause"]) == (
            "ABORTED",
            "richdoc.Cancelled",
            "by ops",
        )
        assert stopped["stopDate"] is not None
        assert _ended(sfn, arn)["status"] == "ABORTED"  # and stays so when moto ends it
        # Stopping an execution that has ended changes nothing.
        sfn.stop_execution(executionArn=arn, error="other")
        assert sfn.describe_execution(executionArn=arn)["error"] == "richdoc.Cancelled"
        with pytest.raises(sfn.exceptions.ExecutionDoesNotExist):
            sfn.stop_execution(executionArn=arn.rsplit(":", 1)[0] + ":nothing")


def test_a_stopped_execution_stays_aborted_however_its_last_task_ends() -> None:
    from types import SimpleNamespace

    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    comm = BaseExecutionWorkerCommunication.__new__(BaseExecutionWorkerCommunication)
    comm.execution = SimpleNamespace(exec_status=ExecutionStatus.ABORTED)  # type: ignore[assignment]
    with contextlib.ExitStack() as patches:
        stop_execution.install(patches)
        comm._reflect_execution_status()  # moto would read the program's error here
    assert comm.execution.exec_status == ExecutionStatus.ABORTED
    with pytest.raises(AttributeError):  # unpatched: moto reads the program state
        comm._reflect_execution_status()


def test_every_end_is_announced_once_to_the_status_events_loop(sfn: Any) -> None:
    """A stop when it is made, a natural end when moto's interpreter reflects it. (The
    announcements are the process's: other tests' executions may end meanwhile.)"""
    from richdoc_tools.local.runtime.status_events import executions_ended

    with contextlib.ExitStack() as patches:
        stop_execution.install(patches)
        executions_ended.take()
        stopped = _running(sfn, "stopped")
        sfn.stop_execution(executionArn=stopped, error="richdoc.Cancelled")
        assert stopped in executions_ended.take()  # at once, before the task returns
        _ended(sfn, stopped)
        machine = sfn.create_state_machine(
            name="m-quick",
            definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}),
            roleArn=ROLE,
        )["stateMachineArn"]
        quick = sfn.start_execution(stateMachineArn=machine, name="quick")["executionArn"]
        assert _ended(sfn, quick)["status"] == "SUCCEEDED"
        announced = executions_ended.take()
        assert quick in announced and stopped not in announced  # a stop is announced once
