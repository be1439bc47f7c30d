"""moto_fixes.fidelity.redrive_execution: RedriveExecution is answered as Step Functions
answers an execution it will not redrive: HTTP 400, ExecutionNotRedrivable. Stock moto
has no RedriveExecution (in process it raises NotImplementedError; served, it answered a
bare HTTP 500). The served stack's answer is checked end to end in
tests/e2e/test_local_serve.py."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import redrive_execution
from richdoc_tools.local.patch_targets import original

from tests.support.moto_fixes import moto_differs

DEFINITION = {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}
ROLE = "arn:aws:iam::123456789012:role/sfn"


@pytest.fixture
def sfn(aws: None) -> Any:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _succeeded_execution(sfn: Any) -> str:
    machine = sfn.create_state_machine(name="m", definition=json.dumps(DEFINITION), roleArn=ROLE)[
        "stateMachineArn"
    ]
    arn: str = sfn.start_execution(stateMachineArn=machine, name="e", input="{}")["executionArn"]
    deadline = time.monotonic() + 30
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return arn


@moto_differs("has no RedriveExecution", raises=NotImplementedError)
def test_stock_moto_refuses_to_redrive_a_succeeded_execution(sfn: Any) -> None:
    arn = _succeeded_execution(sfn)
    with pytest.raises(ClientError) as refused:
        sfn.redrive_execution(executionArn=arn)
    assert refused.value.response["Error"]["Code"] == "ExecutionNotRedrivable"


def test_with_the_fix_a_redrive_is_refused_as_step_functions_refuses_it(sfn: Any) -> None:
    arn = _succeeded_execution(sfn)
    with contextlib.ExitStack() as patches:
        redrive_execution.install(patches)
        with pytest.raises(ClientError) as refused:
            sfn.redrive_execution(executionArn=arn)
        error = refused.value.response
        assert error["Error"]["Code"] == "ExecutionNotRedrivable"
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert error["Error"]["Message"] == "Execution is SUCCEEDED and cannot be redriven."
        with pytest.raises(ClientError) as missing:
            sfn.redrive_execution(executionArn=arn.rsplit(":", 1)[0] + ":nothing")
        assert missing.value.response["Error"]["Code"] == "ExecutionDoesNotExist"
    assert original(redrive_execution.TARGET) is None  # removed with the stack


def test_an_ended_execution_is_refused_with_what_to_do_instead() -> None:
    arn = "arn:aws:states:us-east-1:123456789012:execution:richdoc:0123abcd-r2"
    said = redrive_execution.refusal("FAILED", arn)
    assert said.startswith("Execution is FAILED: the embedded stack cannot redrive")
    assert said.endswith("richdoc jobs redrive 0123abcd")
    assert redrive_execution.refusal("RUNNING", arn) == (
        "Execution is RUNNING and cannot be redriven."
    )
