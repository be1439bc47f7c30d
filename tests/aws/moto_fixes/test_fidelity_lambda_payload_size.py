"""moto_fixes.fidelity.lambda_payload_size: an Invoke request over Lambda's payload quota,
6 MB synchronous or 1 MB asynchronous, is refused with 413 RequestTooLargeException
before anything runs. Stock moto takes any size (here: it goes on to look for the
function)."""

from __future__ import annotations

import contextlib
import io
import json
import zipfile
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import lambda_payload_size

from tests.support.moto_fixes import moto_differs

if TYPE_CHECKING:
    from types_boto3_lambda.literals import InvocationTypeType

QUOTAS = [
    ("RequestResponse", lambda_payload_size.SYNC_LIMIT),
    ("Event", lambda_payload_size.ASYNC_LIMIT),
]


def _answer(invocation_type: InvocationTypeType, size: int) -> tuple[str, int]:
    """The error code and HTTP status Invoke answers for a payload of ``size`` bytes (to a
    function that does not exist: a request within the quota is then refused as such)."""
    client = boto3.client("lambda", region_name="us-east-1")
    payload = b'"' + b"x" * (size - 2) + b'"'
    with pytest.raises(ClientError) as refused:
        client.invoke(FunctionName="any", InvocationType=invocation_type, Payload=payload)
    return (
        refused.value.response["Error"]["Code"],
        refused.value.response["ResponseMetadata"]["HTTPStatusCode"],
    )


@moto_differs("takes an Invoke payload of any size")
@pytest.mark.parametrize(("invocation_type", "quota"), QUOTAS)
def test_stock_moto_refuses_a_payload_over_the_quota(
    aws: None, invocation_type: InvocationTypeType, quota: int
) -> None:
    assert _answer(invocation_type, quota + 1) == ("RequestTooLargeException", 413)


@pytest.mark.parametrize(("invocation_type", "quota"), QUOTAS)
def test_with_the_fix_payloads_over_the_quota_are_refused(
    aws: None, invocation_type: InvocationTypeType, quota: int
) -> None:
    with contextlib.ExitStack() as exit_stack:
        lambda_payload_size.install(exit_stack)
        assert _answer(invocation_type, quota + 1) == ("RequestTooLargeException", 413)
        assert _answer(invocation_type, quota)[0] == "ResourceNotFoundException"


def test_moto_itself_refuses_a_synchronous_response_over_about_6_mb(aws: None) -> None:
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
        large: Any = client.invoke(FunctionName="big", Payload=b"6300000")
    assert "FunctionError" not in small
    assert large["FunctionError"] == "Unhandled"
    assert json.load(large["Payload"])["errorType"] == "Function.ResponseSizeTooLarge"
