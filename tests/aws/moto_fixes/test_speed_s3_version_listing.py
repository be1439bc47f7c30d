"""Canary: moto's ListObjectVersions deep-copies every version of every key before it
filters by prefix; the patch (moto_fixes.speed.s3_version_listing) lets a first page see only the
keys under its prefix, and every listing, page by page, answers what moto answers."""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import re
from typing import Any
from unittest import mock

import boto3
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.speed import s3_version_listing
from richdoc_tools.local.patches.target import original

KEYS = ["a", "a/b", "a/b/c", "a/c", "ab", "b/x", "b/y/z", "documents/1/run-001/x.json", "zz"]
PREFIXES = ["", "a", "a/", "a/b", "b", "documents/1/", "q"]


def test_moto_reads_only_get_bucket_and_the_key_lists_and_copies_them_all() -> None:
    from moto.s3.models import S3Backend

    assert s3_version_listing.TARGET == "moto.s3.models.S3Backend.list_object_versions"
    source = inspect.getsource(S3Backend.list_object_versions)
    assert set(re.findall(r"\bself\.\w+", source)) == {"self.get_bucket"}
    assert set(re.findall(r"\bbucket\.[\w.]+", source)) == {"bucket.keys.iterlists"}
    assert "copy.deepcopy(version_key)" in source
    assert "if not name.startswith(prefix):" in source


def _listings(s3: Any) -> list[Any]:
    answers = []
    for prefix, delimiter, max_keys in itertools.product(PREFIXES, [None, "/"], [1, 2, 1000]):
        kwargs: dict[str, Any] = {"Bucket": "listing", "Prefix": prefix, "MaxKeys": max_keys}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        while True:
            page = s3.list_object_versions(**kwargs)
            page.pop("ResponseMetadata")
            answers.append(page)
            if not page.get("IsTruncated"):
                break
            kwargs["KeyMarker"] = page["NextKeyMarker"]
            if page.get("NextVersionIdMarker"):
                kwargs["VersionIdMarker"] = page["NextVersionIdMarker"]
    return answers


def test_every_listing_page_is_what_moto_answers() -> None:
    with mock_aws(config=MOTO_CONFIG):
        s3 = boto3.client("s3", region_name="us-east-1", config=CLIENT_CONFIG)
        s3.create_bucket(Bucket="listing")
        s3.put_bucket_versioning(Bucket="listing", VersioningConfiguration={"Status": "Enabled"})
        for round_ in range(2):
            for key in KEYS:
                s3.put_object(Bucket="listing", Key=key, Body=f"{key} {round_}".encode())
        s3.delete_object(Bucket="listing", Key="a/c")
        s3.delete_object(Bucket="listing", Key="b/x")
        plain = _listings(s3)
        with contextlib.ExitStack() as exit_stack:
            s3_version_listing.install(exit_stack)
            assert isinstance(
                original(s3_version_listing.TARGET), s3_version_listing.FirstPagesUnderPrefix
            )
            patched = _listings(s3)
            with mock.patch("moto.s3.models.copy.deepcopy", wraps=copy.deepcopy) as copies:
                s3.list_object_versions(Bucket="listing", Prefix="documents/1/")
            assert copies.call_count == 1  # one key's versions, not the bucket's nine
    assert len(plain) > len(PREFIXES) * 6  # some listings took several pages
    assert patched == plain
