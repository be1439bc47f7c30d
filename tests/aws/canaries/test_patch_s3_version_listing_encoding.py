"""Canary: moto's ListObjectVersions ignores ``EncodingType=url`` (its ListObjects
honours it) and answers 500 for a key XML cannot carry; with the patch
(patches.s3_version_listing_encoding) boto3 gets the keys back as they were written."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.patches import s3_version_listing_encoding

ESCAPED = "reports/\x1b[31mred\x1b[0m.md"
PLAIN = "reports/plain name.md"


def test_moto_encodes_keys_for_list_objects_but_not_for_list_object_versions() -> None:
    from moto.s3.responses import S3Response

    assert s3_version_listing_encoding.TARGET == (
        "moto.s3.responses.S3Response.list_object_versions"
    )
    assert "encoding" not in inspect.getsource(S3Response.list_object_versions)
    assert "key.safe_name(encoding_type)" in inspect.getsource(S3Response.list_objects)


def _bucket() -> Any:
    s3 = boto3.client("s3", region_name="us-east-1", config=CLIENT_CONFIG)
    s3.create_bucket(Bucket="versions")
    s3.put_bucket_versioning(Bucket="versions", VersioningConfiguration={"Status": "Enabled"})
    for key in (ESCAPED, PLAIN, ESCAPED):
        s3.put_object(Bucket="versions", Key=key, Body=b"x")
    s3.delete_object(Bucket="versions", Key=PLAIN)
    return s3


def test_without_the_patch_a_key_with_a_control_character_cannot_be_listed() -> None:
    with mock_aws(config=MOTO_CONFIG):
        s3 = _bucket()
        with pytest.raises(ClientError):
            s3.list_object_versions(Bucket="versions", Prefix=ESCAPED)


def test_with_the_patch_keys_prefixes_and_markers_come_back_as_written() -> None:
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        s3_version_listing_encoding.install(exit_stack)
        s3 = _bucket()
        listed = s3.list_object_versions(Bucket="versions", Prefix=ESCAPED)
        assert listed["Prefix"] == ESCAPED
        assert [v["Key"] for v in listed["Versions"]] == [ESCAPED, ESCAPED]
        everything = s3.list_object_versions(Bucket="versions", Delimiter="/")
        assert [p["Prefix"] for p in everything["CommonPrefixes"]] == ["reports/"]
        paged = s3.list_object_versions(Bucket="versions", Prefix="reports/", MaxKeys=1)
        assert paged["IsTruncated"] and paged["NextKeyMarker"] == ESCAPED
        rest = s3.list_object_versions(
            Bucket="versions",
            Prefix="reports/",
            KeyMarker=paged["NextKeyMarker"],
            VersionIdMarker=paged["NextVersionIdMarker"],
        )
        keys = [v["Key"] for v in rest["Versions"]] + [m["Key"] for m in rest["DeleteMarkers"]]
        assert set(keys) == {ESCAPED, PLAIN}
