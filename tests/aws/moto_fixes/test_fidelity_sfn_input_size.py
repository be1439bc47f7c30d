"""moto_fixes.fidelity.sfn_input_size: StartExecution refuses an input over 256 KiB of
UTF-8 with a ValidationException, as Step Functions does. Stock moto starts it."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import boto3
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import sfn_input_size

from tests.support.aws import state_machine
from tests.support.moto_fixes import moto_differs

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
PADDING = sfn_input_size.MAX_INPUT_BYTES - len('{"x": ""}')


def _refusal(sfn: Any, arn: str, name: str, execution_input: str) -> str | None:
    """The error StartExecution answers; None when it starts the execution."""
    try:
        sfn.start_execution(stateMachineArn=arn, name=name, input=execution_input)
    except ClientError as refused:
        return f"{refused.response['Error']['Code']}: {refused.response['Error']['Message']}"
    return None


@moto_differs("starts an execution whose input is over 256 KiB")
def test_stock_moto_refuses_an_execution_input_over_256_kib(aws: None) -> None:
    arn = state_machine(PASS)
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    over = json.dumps({"x": "é" * PADDING})  # 2 bytes a character
    refusal = _refusal(sfn, arn, "over", over)
    assert refusal is not None and refusal.startswith("ValidationException")


def test_with_the_fix_an_execution_input_over_256_kib_is_refused(aws: None) -> None:
    arn = state_machine(PASS)
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    with contextlib.ExitStack() as exit_stack:
        sfn_input_size.install(exit_stack)
        assert _refusal(sfn, arn, "fits", json.dumps({"x": "a" * PADDING})) is None
        refusal = _refusal(sfn, arn, "over", json.dumps({"x": "é" * PADDING}))
    assert refusal is not None and refusal.startswith("ValidationException")
    assert "262144" in refusal
