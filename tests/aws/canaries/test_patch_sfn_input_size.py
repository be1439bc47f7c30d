"""Canary: StartExecution refuses an input over 256 KiB of UTF-8 with a
ValidationException (patches.sfn_input_size)."""

from __future__ import annotations

import contextlib
import json

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import sfn_input_size

from tests.support.aws import state_machine

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}


def test_an_execution_input_over_256_kib_is_refused(aws: None) -> None:
    arn = state_machine(PASS)
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    padding = sfn_input_size.MAX_INPUT_BYTES - len('{"x": ""}')
    with contextlib.ExitStack() as exit_stack:
        sfn_input_size.install(exit_stack)
        sfn.start_execution(
            stateMachineArn=arn, name="fits", input=json.dumps({"x": "a" * padding})
        )
        with pytest.raises(ClientError) as raised:
            sfn.start_execution(
                stateMachineArn=arn, name="over", input=json.dumps({"x": "é" * padding})
            )
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert "262144" in raised.value.response["Error"]["Message"]
