"""Canary: every request passes the gate's checks with its service, operation and
parameters, and a check's error is the service's error response, in JSON and in XML
(patches.request_gate)."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from richdoc_tools.local import patch_targets
from richdoc_tools.local.patches import request_gate
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse
from richdoc_tools.local.requests.service_request import ServiceRequest


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


@pytest.mark.parametrize("key", ["plain.pdf", "a/b c+d.md", "é/ü €.docx", "x%2Fy?.txt"])
def test_the_gates_short_cut_names_requests_as_the_router_does(aws: None, key: str) -> None:
    from richdoc_tools.local.requests.service_request import from_moto, routed

    pairs: list[tuple[object, object]] = []
    original = patch_targets.original(request_gate.TARGET)

    def compare(self: Any, request: Any, *args: Any, **kwargs: Any) -> None:
        original(self, request, *args, **kwargs)
        fast = from_moto(self)
        pairs.append(
            ((fast.operation, dict(fast.uri_params)) if fast else None, routed(self, request))
        )

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="named")
    with contextlib.ExitStack() as exit_stack:
        patch_targets.replace(exit_stack, request_gate.TARGET, compare)
        s3.put_object(Bucket="named", Key=key, Body=b"x")
        s3.head_object(Bucket="named", Key=key)
        s3.get_object(Bucket="named", Key=key)
        s3.delete_object(Bucket="named", Key=key)
        s3.list_objects_v2(Bucket="named")
    assert len(pairs) == 5
    for fast, router in pairs:
        assert fast == router
