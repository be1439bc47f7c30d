"""Canary: moto reads a response class's method names on every request, only to ask
whether the action is among them; the patch (moto_fixes.speed.response_methods) reads them once
per class."""

from __future__ import annotations

import contextlib
import inspect
import re
from unittest import mock

import boto3
from moto import mock_aws
from richdoc_tools.local.moto_fixes.speed import response_methods


def test_moto_reads_the_method_names_per_request_and_only_tests_membership() -> None:
    from moto.core import responses

    assert response_methods.TARGET == "moto.core.responses.method_names_from_class"
    source = inspect.getsource(responses.BaseResponse.call_action)
    assert "method_names = method_names_from_class(self.__class__)" in source
    assert "if action in method_names:" in source
    assert len(re.findall(r"\bmethod_names\b", source)) == 2  # read, then tested: no more


def test_with_the_patch_the_names_are_read_once_per_class_and_requests_still_work() -> None:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        response_methods.install(exit_stack)
        with mock.patch("inspect.getmembers", wraps=inspect.getmembers) as getmembers:
            sqs = boto3.client("sqs", region_name="us-east-1")
            url = sqs.create_queue(QueueName="q")["QueueUrl"]
            for body in ("one", "two", "three"):
                sqs.send_message(QueueUrl=url, MessageBody=body)
            received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert sorted(m["Body"] for m in received) == ["one", "three", "two"]
        from moto.sqs.responses import SQSResponse

        read = [c for c in getmembers.call_args_list if c.args and c.args[0] is SQSResponse]
        assert len(read) == 1
