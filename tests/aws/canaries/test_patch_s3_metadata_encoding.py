"""Canary: moto returns user metadata as it came, a raw non-ASCII value raw; S3 stores a
value's RFC 2047 encoded-words decoded and returns every non-ASCII value encoded
(=?UTF-8?B?...?=). The patch (patches.s3_metadata_encoding) does what S3 does."""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import boto3
import pytest
from botocore.handlers import validate_ascii_metadata
from richdoc_tools.local.patches import s3_metadata_encoding

TEXT = "Zoë & Café 東京"
ENCODED = "=?UTF-8?B?" + base64.b64encode(TEXT.encode()).decode() + "?="


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3")
    client.create_bucket(Bucket="meta-bucket")
    # botocore refuses non-ASCII metadata before sending; other clients send it raw.
    client.meta.events.unregister("before-parameter-build.s3.PutObject", validate_ascii_metadata)
    return client


def test_moto_alone_returns_a_raw_value_raw(s3: Any) -> None:
    s3.put_object(Bucket="meta-bucket", Key="k", Body=b"x", Metadata={"richdoc-owner": TEXT})
    assert s3.head_object(Bucket="meta-bucket", Key="k")["Metadata"]["richdoc-owner"] != ENCODED


def test_non_ascii_values_come_back_encoded_as_s3_returns_them(s3: Any) -> None:
    with contextlib.ExitStack() as exit_stack:
        s3_metadata_encoding.install(exit_stack)
        s3.put_object(Bucket="meta-bucket", Key="raw", Body=b"x", Metadata={"richdoc-owner": TEXT})
        s3.put_object(
            Bucket="meta-bucket", Key="sent", Body=b"x", Metadata={"richdoc-owner": ENCODED}
        )
        s3.put_object(
            Bucket="meta-bucket", Key="ascii", Body=b"x", Metadata={"richdoc-owner": "acme"}
        )
        for key in ("raw", "sent"):
            head = s3.head_object(Bucket="meta-bucket", Key=key)["Metadata"]
            got = s3.get_object(Bucket="meta-bucket", Key=key)["Metadata"]
            assert head == got == {"richdoc-owner": ENCODED}, key
        assert s3.head_object(Bucket="meta-bucket", Key="ascii")["Metadata"] == {
            "richdoc-owner": "acme"
        }
        s3.copy_object(
            Bucket="meta-bucket", Key="copy", CopySource={"Bucket": "meta-bucket", "Key": "raw"}
        )
        assert s3.head_object(Bucket="meta-bucket", Key="copy")["Metadata"] == {
            "richdoc-owner": ENCODED
        }
    assert s3_metadata_encoding.decoded(ENCODED) == TEXT
