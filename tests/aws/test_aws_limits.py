"""Canaries for the AWS limits moto already enforces itself, so the embedded stack needs
no patch for them (docs/embedded-stack.md): a state's output over 256 KiB fails the
execution with States.DataLimitExceeded, and a DynamoDB item over 400 KB is refused."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.runtime.loops import wait_until

from tests.support.aws import executing_state_machines, state_machine

# Doubling a 140,000-byte input makes a 280,000-byte output (over 262,144).
DOUBLING = {
    "StartAt": "Double",
    "States": {"Double": {"Type": "Pass", "Parameters": {"a.$": "$", "b.$": "$"}, "End": True}},
}


def test_a_state_output_over_256_kib_fails_the_execution_with_data_limit_exceeded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with executing_state_machines(monkeypatch):
        arn = state_machine(DOUBLING)
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        described: dict[str, Any] = {}
        for name, size in (("small", 1_000), ("large", 140_000)):
            execution = sfn.start_execution(
                stateMachineArn=arn, name=name, input=json.dumps({"x": "a" * size})
            )["executionArn"]
            assert wait_until(
                lambda e=execution: sfn.describe_execution(executionArn=e)["status"] != "RUNNING",  # type: ignore[misc]
                30,
            )
            described[name] = sfn.describe_execution(executionArn=execution)
    assert described["small"]["status"] == "SUCCEEDED"
    assert described["large"]["status"] == "FAILED"
    assert described["large"]["error"] == "States.DataLimitExceeded"


def test_a_dynamodb_item_over_400_kb_is_refused(jobs_table: Any) -> None:
    item = {"pk": "JOB#big", "sk": "JOB"}
    jobs_table.put_item(Item={**item, "v": "x" * 300_000})
    with pytest.raises(ClientError) as raised:
        jobs_table.put_item(Item={**item, "v": "x" * 409_600})
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert "maximum allowed size" in raised.value.response["Error"]["Message"]
