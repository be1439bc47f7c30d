"""Canary: moto works out a backend's URL table on every request it routes (and reloads
moto.s3.urls for S3); the patch (moto_fixes.speed.backend_urls) keeps each table per backend class
and moto's URL settings, and routes every request as before."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from unittest import mock

import boto3
import pytest
from moto import mock_aws
from moto.backends import get_backend
from moto.core.base_backend import BaseBackend
from moto.core.models import DEFAULT_ACCOUNT_ID
from richdoc_tools.local.moto_fixes.speed import backend_urls

SERVICES = ("s3", "dynamodb", "dynamodbstreams", "sqs", "stepfunctions", "lambda", "events")


def _backend(service: str) -> BaseBackend:
    regions = get_backend(service)[DEFAULT_ACCOUNT_ID]  # type: ignore[call-overload]
    return regions["us-east-1"] if "us-east-1" in regions else regions["aws"]


def _table(backend: BaseBackend) -> dict[str, str]:
    return {url: handler.__qualname__ for url, handler in backend.urls.items()}


def test_moto_routes_each_request_by_a_url_table_it_works_out_anew() -> None:
    from moto.core import botocore_stubber
    from moto.s3.models import S3Backend

    assert backend_urls.TARGET == "moto.core.base_backend.BaseBackend.urls"
    assert isinstance(inspect.getattr_static(BaseBackend, "urls"), property)
    process = inspect.getsource(botocore_stubber.BotocoreStubber.process_request)
    assert "for url, method_to_execute in backend.urls.items():" in process
    # S3's table is rebuilt from a reloaded module, whose bases read the environment.
    assert "reload(backend_urls_module)" in inspect.getsource(S3Backend)
    assert "get_s3_custom_endpoints" in inspect.getsource(importlib.import_module("moto.s3.urls"))


def test_the_kept_tables_equal_moto_s_and_follow_its_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with mock_aws():
        with mock.patch("moto.s3.models.reload", wraps=importlib.reload) as reload:
            fresh = {service: _table(_backend(service)) for service in SERVICES}
        one_table = reload.call_count
        assert one_table > 0
        with contextlib.ExitStack() as exit_stack:
            backend_urls.install(exit_stack)
            with mock.patch("moto.s3.models.reload", wraps=importlib.reload) as reload:
                kept = {service: _table(_backend(service)) for service in SERVICES}
                again = {service: _table(_backend(service)) for service in SERVICES}
            assert kept == fresh and again == fresh
            assert reload.call_count == one_table  # S3's table worked out once, not twice
            monkeypatch.setenv("MOTO_S3_CUSTOM_ENDPOINTS", "http://objects.example.test")
            custom = _table(_backend("s3"))
            assert any("objects.example.test" in url for url in custom)
            assert custom != fresh["s3"]


def test_with_the_patch_requests_are_routed_as_before() -> None:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        backend_urls.install(exit_stack)
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="bucket")
        s3.put_object(Bucket="bucket", Key="a/b c.txt", Body=b"one")
        assert s3.get_object(Bucket="bucket", Key="a/b c.txt")["Body"].read() == b"one"
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="two")
        [message] = sqs.receive_message(QueueUrl=url)["Messages"]
        assert message["Body"] == "two"
