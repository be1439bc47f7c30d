"""Canary: S3 refuses a key over 1,024 bytes of UTF-8 with KeyTooLongError, for a put and
a multipart upload (patches.s3_key_length)."""

from __future__ import annotations

import contextlib

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import s3_key_length


def test_keys_over_1024_utf8_bytes_are_refused(aws: None) -> None:
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="keys")
    longest = "k" * 1022 + "é"  # 1,024 bytes
    too_long = "k" * 1023 + "é"  # 1,025 bytes, 1,024 characters
    with contextlib.ExitStack() as exit_stack:
        s3_key_length.install(exit_stack)
        s3.put_object(Bucket="keys", Key=longest, Body=b"x")
        for call in (
            lambda: s3.put_object(Bucket="keys", Key=too_long, Body=b"x"),
            lambda: s3.create_multipart_upload(Bucket="keys", Key=too_long),
        ):
            with pytest.raises(ClientError) as raised:
                call()
            assert raised.value.response["Error"]["Code"] == "KeyTooLongError"
            assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    s3.put_object(Bucket="keys", Key=too_long, Body=b"x")  # moto alone takes it
