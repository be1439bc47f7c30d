"""moto_fixes.fidelity.lambda_task_errors: a Lambda task whose Invoke call is refused
fails with ``Lambda.<error code>``, as Step Functions names it, so a definition's Retry
and Catch match it. Stock moto names it ``Exception`` when the task's Resource is the
function's ARN."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import lambda_task_errors

from tests.support.moto_fixes import moto_differs

ROLE = "arn:aws:iam::123456789012:role/sfn"
MISSING = "arn:aws:lambda:us-east-1:123456789012:function:not-there"
# One task on a function that does not exist: the Invoke call itself is refused (404).
DEFINITION = {
    "StartAt": "Call",
    "States": {"Call": {"Type": "Task", "Resource": MISSING, "End": True}},
}


@pytest.fixture
def sfn(aws: None) -> Any:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _failure(sfn: Any, name: str) -> tuple[str, str]:
    machine = sfn.create_state_machine(
        name=f"m-{name}", definition=json.dumps(DEFINITION), roleArn=ROLE
    )["stateMachineArn"]
    arn = sfn.start_execution(stateMachineArn=machine, name=name, input="{}")["executionArn"]
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert described["status"] == "FAILED"
    return described["error"], described["cause"]


@moto_differs("names a refused invocation of a function-ARN task Exception")
def test_stock_moto_names_a_refused_invocation_as_step_functions_does(sfn: Any) -> None:
    error, _ = _failure(sfn, "plain")
    assert error == "Lambda.ResourceNotFoundException"


def test_with_the_fix_a_refused_invocation_is_named_as_step_functions_does(sfn: Any) -> None:
    with contextlib.ExitStack() as patches:
        lambda_task_errors.install(patches)
        error, cause = _failure(sfn, "patched")
    assert error == "Lambda.ResourceNotFoundException"
    assert "(Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException" in cause
