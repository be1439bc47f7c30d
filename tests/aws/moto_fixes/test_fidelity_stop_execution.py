"""moto_fixes.fidelity.stop_execution: StopExecution aborts the execution at once, with the
error and cause it was given, as Step Functions does. Stock moto drops both and leaves
the execution RUNNING until its interpreter next looks."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import stop_execution

from tests.support.moto_fixes import moto_differs

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


def _stopped_at_once(sfn: Any, arn: str) -> tuple[str, str | None, str | None]:
    """StopExecution with an error and a cause, then the execution as DescribeExecution
    answers right after (no waiting)."""
    sfn.stop_execution(executionArn=arn, error="richdoc.Cancelled", cause="by ops")
    described = sfn.describe_execution(executionArn=arn)
    return described["status"], described.get("error"), described.get("cause")


@moto_differs("leaves a stopped execution RUNNING, then ends it without its error and cause")
def test_stock_moto_aborts_at_once_with_the_error_and_cause(sfn: Any) -> None:
    arn = _running(sfn, "plain")
    stopped = _stopped_at_once(sfn, arn)
    _ended(sfn, arn)
    assert stopped == ("ABORTED", "richdoc.Cancelled", "by ops")


def test_with_the_fix_a_stop_aborts_at_once_with_the_error_and_cause(sfn: Any) -> None:
    with contextlib.ExitStack() as patches:
        stop_execution.install(patches)
        arn = _running(sfn, "patched")
        assert _stopped_at_once(sfn, arn) == ("ABORTED", "richdoc.Cancelled", "by ops")
        assert sfn.describe_execution(executionArn=arn)["stopDate"] is not None
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
