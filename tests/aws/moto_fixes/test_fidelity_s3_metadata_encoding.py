"""moto_fixes.fidelity.s3_metadata_encoding: S3 stores a user metadata value's RFC 2047
encoded-words decoded and returns every non-ASCII value encoded (=?UTF-8?B?...?=).
Stock moto returns values as they came, a raw non-ASCII value raw."""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import boto3
import pytest
from botocore.handlers import validate_ascii_metadata
from richdoc_tools.local.moto_fixes.fidelity import s3_metadata_encoding

from tests.support.moto_fixes import moto_differs

TEXT = "Zoë & Café 東京"
ENCODED = "=?UTF-8?B?" + base64.b64encode(TEXT.encode()).decode() + "?="


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3")
    client.create_bucket(Bucket="meta-bucket")
    # botocore refuses non-ASCII metadata before sending; other clients send it raw.
    client.meta.events.unregister("before-parameter-build.s3.PutObject", validate_ascii_metadata)
    return client


@moto_differs("returns a non-ASCII metadata value raw")
def test_stock_moto_returns_a_non_ascii_value_encoded(s3: Any) -> None:
    s3.put_object(Bucket="meta-bucket", Key="k", Body=b"x", Metadata={"richdoc-owner": TEXT})
    assert s3.head_object(Bucket="meta-bucket", Key="k")["Metadata"]["richdoc-owner"] == ENCODED


def test_with_the_fix_non_ascii_values_come_back_encoded_as_s3_returns_them(s3: Any) -> None:
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
