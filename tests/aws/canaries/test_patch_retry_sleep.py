"""Canary: a Retry's interval in moto's interpreter is slept scaled (patches.retry_sleep):
at scale 0 a retrier of an hour's interval retries at once."""

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
from richdoc_tools.local.patches import retry_sleep

MISSING = "arn:aws:lambda:us-east-1:123456789012:function:not-there"
# A task that always fails (its function does not exist), retried after an hour.
DEFINITION = {
    "StartAt": "Call",
    "States": {
        "Call": {
            "Type": "Task",
            "Resource": MISSING,
            "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 3600, "MaxAttempts": 2}],
            "End": True,
        }
    },
}


@pytest.fixture
def sfn(aws: None) -> Iterator[Any]:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def test_with_the_patch_at_scale_0_retries_do_not_wait_their_interval(sfn: Any) -> None:
    with contextlib.ExitStack() as exit_stack:
        retry_sleep.install(exit_stack, 0.0)
        machine = sfn.create_state_machine(
            name="m", definition=json.dumps(DEFINITION), roleArn="arn:aws:iam::123456789012:role/s"
        )["stateMachineArn"]
        arn = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
        # Unscaled, the first retry alone would wait an hour.
        deadline = time.monotonic() + 120
        while (status := sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
            assert time.monotonic() < deadline, "a retry waited its interval"
            time.sleep(0.05)
        history = sfn.get_execution_history(executionArn=arn)["events"]
    assert status == "FAILED"
    assert sum(e["type"] == "TaskStateEntered" for e in history) == 1
    assert sum(e["type"].endswith("Failed") and "lambda" in e["type"].lower() for e in history) >= 3
