"""Canary: moto names a Lambda task's refused invocation ``Exception`` when the task's
Resource is the function's ARN; the patch (patches.lambda_task_errors) names it
``Lambda.<error code>``, as Step Functions does, so the definition's Retry and Catch
match it."""

from __future__ import annotations

import contextlib
import inspect
import json
import time
from typing import Any

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.patches import lambda_task_errors
from richdoc_tools.local.patches.target import owner

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


def test_the_patch_points_exist_with_the_expected_shape() -> None:
    cls, attribute = owner(lambda_task_errors.TARGET)
    source = inspect.getsource(getattr(cls, attribute))
    assert "if isinstance(ex, ClientError):" in source
    assert 'error = "Exception"' in source
    naming, name = owner(lambda_task_errors.NAMING)
    assert isinstance(vars(naming)[name], staticmethod)


def test_moto_names_a_refused_invocation_exception(sfn: Any) -> None:
    error, _ = _failure(sfn, "plain")
    assert error == "Exception"


def test_the_patch_names_it_as_step_functions_does(sfn: Any) -> None:
    with contextlib.ExitStack() as patches:
        lambda_task_errors.install(patches)
        error, cause = _failure(sfn, "patched")
    assert error == "Lambda.ResourceNotFoundException"
    assert "(Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException" in cause
