"""moto_fixes.fidelity.s3_key_length: S3 refuses a key over 1,024 bytes of UTF-8 with 400
KeyTooLongError, for a put and a multipart upload. Stock moto stores any length."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import boto3
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import s3_key_length

from tests.support.moto_fixes import moto_differs

LONGEST = "k" * 1022 + "é"  # 1,024 bytes
TOO_LONG = "k" * 1023 + "é"  # 1,025 bytes, 1,024 characters


def _refusal(call: Callable[[], Any]) -> tuple[str, int] | None:
    """The error code and HTTP status ``call`` is refused with; None when it succeeds."""
    try:
        call()
    except ClientError as refused:
        return (
            refused.response["Error"]["Code"],
            refused.response["ResponseMetadata"]["HTTPStatusCode"],
        )
    return None


def _bucket() -> Any:
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="keys")
    return s3


@moto_differs("stores a key of any length")
def test_stock_moto_refuses_a_key_over_1024_utf8_bytes(aws: None) -> None:
    s3 = _bucket()
    assert _refusal(lambda: s3.put_object(Bucket="keys", Key=TOO_LONG, Body=b"x")) == (
        "KeyTooLongError",
        400,
    )


def test_with_the_fix_keys_over_1024_utf8_bytes_are_refused(aws: None) -> None:
    s3 = _bucket()
    with contextlib.ExitStack() as exit_stack:
        s3_key_length.install(exit_stack)
        assert _refusal(lambda: s3.put_object(Bucket="keys", Key=LONGEST, Body=b"x")) is None
        for call in (
            lambda: s3.put_object(Bucket="keys", Key=TOO_LONG, Body=b"x"),
            lambda: s3.create_multipart_upload(Bucket="keys", Key=TOO_LONG),
            lambda: s3.copy_object(
                Bucket="keys", Key=TOO_LONG, CopySource={"Bucket": "keys", "Key": LONGEST}
            ),
        ):
            assert _refusal(call) == ("KeyTooLongError", 400)
