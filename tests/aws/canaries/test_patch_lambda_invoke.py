"""Canary: a function's invocation runs in the embedded stack's Lambda runtime, not in
moto's Docker (patches.lambda_invoke): the Invoke API and a state machine's Lambda task
both reach it (the Map state's iterations: tests/aws/test_map_state_canary.py)."""

from __future__ import annotations

import contextlib
import io
import json
import time
import zipfile
from typing import Any

import boto3
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.patches import lambda_invoke

ROLE_POLICY = "{}"


class Runtime:
    """Answers every invocation with what it was given, and records it."""

    def __init__(self) -> None:
        self.invoked: list[tuple[str, Any]] = []

    def invoke(self, fn: Any, event: Any) -> tuple[str, bool, str]:
        self.invoked.append((fn.function_name, event))
        return json.dumps({"echo": event}), False, ""


def _function() -> str:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("app.py", "")
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="fn", AssumeRolePolicyDocument=ROLE_POLICY)["Role"]["Arn"]
    created = boto3.client("lambda", region_name="us-east-1").create_function(
        FunctionName="fn",
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": archive.getvalue()},
    )
    return str(created["FunctionArn"])


def test_invoke_and_a_state_machine_task_run_in_the_stack_s_runtime(aws: None) -> None:
    runtime = Runtime()
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        lambda_invoke.install(exit_stack, runtime)  # type: ignore[arg-type]
        arn = _function()
        answer = boto3.client("lambda", region_name="us-east-1").invoke(
            FunctionName="fn", Payload=b'{"n": 1}'
        )
        assert json.load(answer["Payload"]) == {"echo": {"n": 1}}
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        definition = {
            "StartAt": "T",
            "States": {"T": {"Type": "Task", "Resource": arn, "End": True}},
        }
        machine = sfn.create_state_machine(
            name="m", definition=json.dumps(definition), roleArn="arn:aws:iam::123456789012:role/s"
        )["stateMachineArn"]
        execution = sfn.start_execution(stateMachineArn=machine, input='{"n": 2}')["executionArn"]
        deadline = time.monotonic() + 60
        while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == {"echo": {"n": 2}}
    assert runtime.invoked == [("fn", {"n": 1}), ("fn", {"n": 2})]
