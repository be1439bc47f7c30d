"""Canary: a request is signed with the credentials of the principal its thread acts as,
and carries its invocation (patches.request_signing)."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
from botocore.credentials import Credentials
from richdoc_tools.local.patches import request_signing
from richdoc_tools.local.requests import callers

ROLE_KEY = "ASIAROLEKEY000000001"


def _principal() -> callers.Principal:
    return callers.Principal(
        name="PlanFunction",
        role_arn="arn:aws:iam::123456789012:role/plan",
        session_arn="arn:aws:sts::123456789012:assumed-role/plan/fn",
        access_key_id=ROLE_KEY,
        credentials=Credentials(ROLE_KEY, "secret", "token"),
    )


def test_requests_are_signed_as_the_calling_threads_principal(aws: None) -> None:
    assert request_signing.TARGET == "botocore.signers.RequestSigner.sign"
    s3 = boto3.client("s3", region_name="us-east-1")
    sent: list[dict[str, Any]] = []

    def record(request: Any, **_: Any) -> None:
        sent.append(dict(request.headers))

    s3.meta.events.register("before-send.s3.ListBuckets", record)
    invocation = callers.Invocation(id="inv-1", stage="PlanFunction", key="k", pages="", attempt=1)
    with contextlib.ExitStack() as exit_stack:
        request_signing.install(exit_stack)
        s3.list_buckets()  # an operator: the client's own keys
        with callers.acting_as(callers.Caller(_principal(), invocation)):
            s3.list_buckets()
    operator, role = ({k: _text(v) for k, v in headers.items()} for headers in sent)
    assert ROLE_KEY not in operator["Authorization"]  # mock_aws's own keys
    assert callers.INVOCATION_HEADER not in operator
    assert f"Credential={ROLE_KEY}/" in role["Authorization"]
    assert role["X-Amz-Security-Token"] == "token"
    assert role[callers.INVOCATION_HEADER] == "inv-1"


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
