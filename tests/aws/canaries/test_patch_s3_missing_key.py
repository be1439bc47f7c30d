"""Canary: a GET or HEAD of a missing key answers 403 AccessDenied to a caller the access
control denies s3:ListBucket, 404 to one it allows, and a missing bucket stays 404
(patches.s3_missing_key)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import s3_missing_key
from richdoc_tools.local.strict.access import AccessDenied


def _code(call: Callable[[], object]) -> tuple[str, int]:
    with pytest.raises(ClientError) as raised:
        call()
    error = raised.value.response
    return str(error["Error"]["Code"]), int(error["ResponseMetadata"]["HTTPStatusCode"])


def test_a_missing_key_is_403_without_list_bucket_and_404_with_it(aws: None) -> None:
    assert s3_missing_key.TARGET == "moto.s3.responses.S3Response.key_response"
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="sources")
    s3.put_object(Bucket="sources", Key="there", Body=b"x")
    may_list = {"yes": False}

    def denial_for(access_key: str, bucket: str) -> AccessDenied | None:
        return None if may_list["yes"] else AccessDenied("s3", f"no s3:ListBucket on {bucket}")

    with contextlib.ExitStack() as exit_stack:
        s3_missing_key.install(exit_stack, denial_for)
        assert s3.get_object(Bucket="sources", Key="there")["Body"].read() == b"x"
        assert _code(lambda: s3.get_object(Bucket="sources", Key="gone")) == ("AccessDenied", 403)
        assert _code(lambda: s3.head_object(Bucket="sources", Key="gone")) == ("403", 403)
        assert _code(lambda: s3.get_object(Bucket="no-such-bucket", Key="k"))[1] == 404
        may_list["yes"] = True
        assert _code(lambda: s3.get_object(Bucket="sources", Key="gone")) == ("NoSuchKey", 404)
        assert _code(lambda: s3.head_object(Bucket="sources", Key="gone")) == ("404", 404)
