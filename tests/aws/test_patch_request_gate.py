"""Canary: every request passes the gate's checks with its service, operation and
parameters, and a check's error is the service's error response, in JSON and in XML
(patches.request_gate)."""

from __future__ import annotations

import contextlib

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import request_gate
from richdoc_tools.local.service_errors import ServiceErrorResponse
from richdoc_tools.local.service_request import ServiceRequest


def test_the_gate_sees_every_request_and_answers_a_checks_error(aws: None) -> None:
    assert request_gate.TARGET == "moto.core.responses.BaseResponse.setup_class"
    seen: list[tuple[str, str, object]] = []
    refuse: set[str] = set()

    def check(request: ServiceRequest) -> None:
        seen.append((request.service, request.operation, request.params.get("TableName")))
        if request.operation in refuse:
            raise ServiceErrorResponse(request.service, 503, "SlowDown", "Please reduce")

    s3 = boto3.client("s3", region_name="us-east-1")
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    with contextlib.ExitStack() as exit_stack:
        request_gate.install(exit_stack, [check], lambda key, invocation: True)
        s3.create_bucket(Bucket="gated")
        dynamodb.list_tables()
        with pytest.raises(ClientError) as missing:
            dynamodb.describe_table(TableName="none")
        refuse.update({"GetObject", "DescribeTable"})
        s3_client = boto3.client("s3", region_name="us-east-1", config=_no_retries())
        with pytest.raises(ClientError) as slow:
            s3_client.get_object(Bucket="gated", Key="k")
        ddb_client = boto3.client("dynamodb", region_name="us-east-1", config=_no_retries())
        with pytest.raises(ClientError) as denied:
            ddb_client.describe_table(TableName="jobs")
    assert ("s3", "CreateBucket", None) in seen
    assert ("dynamodb", "DescribeTable", "none") in seen
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
    for error in (slow.value, denied.value):
        assert error.response["Error"]["Code"] == "SlowDown"
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert slow.value.response["Error"]["Message"] == "Please reduce"


def _no_retries() -> Config:
    return Config(retries={"max_attempts": 1, "mode": "standard"})
