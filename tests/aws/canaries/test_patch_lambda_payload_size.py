"""Canary: an Invoke request over Lambda's payload quota, 6 MB synchronous or 1 MB
asynchronous, is refused with 413 RequestTooLargeException before anything runs
(patches.lambda_payload_size)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import lambda_payload_size

if TYPE_CHECKING:
    from types_boto3_lambda.literals import InvocationTypeType


@pytest.mark.parametrize(
    ("invocation_type", "size"),
    [
        ("RequestResponse", lambda_payload_size.SYNC_LIMIT),
        ("Event", lambda_payload_size.ASYNC_LIMIT),
    ],
)
def test_invoke_payloads_over_the_quota_are_refused(
    aws: None, invocation_type: InvocationTypeType, size: int
) -> None:
    client = boto3.client("lambda", region_name="us-east-1")
    payload = b'"' + b"x" * (size - 1) + b'"'  # one byte over
    with contextlib.ExitStack() as exit_stack:
        lambda_payload_size.install(exit_stack)
        with pytest.raises(ClientError) as over:
            client.invoke(FunctionName="any", InvocationType=invocation_type, Payload=payload)
        with pytest.raises(ClientError) as within:  # passes on: no such function here
            client.invoke(FunctionName="any", InvocationType=invocation_type, Payload=payload[1:])
    assert over.value.response["Error"]["Code"] == "RequestTooLargeException"
    assert over.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413
    assert within.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_moto_itself_refuses_a_synchronous_response_over_about_6_mb(aws: None) -> None:
    import io
    import json
    import zipfile

    from richdoc_tools.local.patches import lambda_invoke

    class Runtime:
        """Answers every invocation with a payload of the size the event asks for."""

        def invoke(self, fn: object, event: object) -> tuple[str, bool, str]:
            assert isinstance(event, int)  # moto hands over the decoded event
            return json.dumps("x" * event), False, ""

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("app.py", "")
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="fn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    client = boto3.client("lambda", region_name="us-east-1")
    client.create_function(
        FunctionName="big",
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": archive.getvalue()},
    )
    with contextlib.ExitStack() as exit_stack:
        lambda_invoke.install(exit_stack, Runtime())  # type: ignore[arg-type]
        small = client.invoke(FunctionName="big", Payload=b"1000")
        large = client.invoke(FunctionName="big", Payload=b"6300000")
    assert "FunctionError" not in small
    assert large["FunctionError"] == "Unhandled"
    assert json.load(large["Payload"])["errorType"] == "Function.ResponseSizeTooLarge"
