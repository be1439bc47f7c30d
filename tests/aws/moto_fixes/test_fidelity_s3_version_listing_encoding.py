"""moto_fixes.fidelity.s3_version_listing_encoding: ListObjectVersions answers
``EncodingType=url`` (which botocore always asks for) with its keys, prefixes and markers
URL-encoded, as S3 does, so boto3 gets a key back as it was written, a control character
included. Stock moto ignores the parameter there (its ListObjects honours it) and
answers 500 for a key XML cannot carry."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import s3_version_listing_encoding

from tests.support.moto_fixes import moto_differs

ESCAPED = "reports/\x1b[31mred\x1b[0m.md"
PLAIN = "reports/plain name.md"


def _bucket() -> Any:
    s3 = boto3.client("s3", region_name="us-east-1", config=CLIENT_CONFIG)
    s3.create_bucket(Bucket="versions")
    s3.put_bucket_versioning(Bucket="versions", VersioningConfiguration={"Status": "Enabled"})
    for key in (ESCAPED, PLAIN, ESCAPED):
        s3.put_object(Bucket="versions", Key=key, Body=b"x")
    s3.delete_object(Bucket="versions", Key=PLAIN)
    return s3


@moto_differs("answers 500 to a listing of a key XML cannot carry", raises=ClientError)
def test_stock_moto_lists_a_key_with_a_control_character_as_written() -> None:
    with mock_aws(config=MOTO_CONFIG):
        s3 = _bucket()
        listed = s3.list_object_versions(Bucket="versions", Prefix=ESCAPED)
        assert [v["Key"] for v in listed["Versions"]] == [ESCAPED, ESCAPED]


def test_with_the_fix_keys_prefixes_and_markers_come_back_as_written() -> None:
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
