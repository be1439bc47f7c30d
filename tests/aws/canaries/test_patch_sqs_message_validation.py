"""Canary: SendMessage refuses what SQS refuses, characters outside its set in the body or
a String attribute, and a message over the queue's MaximumMessageSize in UTF-8 bytes with
its attributes, whoever sends (patches.sqs_message_validation)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import sqs_message_validation

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import (
        MessageAttributeValueTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )


def _error(call: Callable[[], object]) -> str:
    with pytest.raises(ClientError) as raised:
        call()
    return str(raised.value.response["Error"]["Code"])


def test_sqs_refuses_invalid_characters_and_oversized_messages(aws: None) -> None:
    assert sqs_message_validation.TARGET == "moto.sqs.models.SQSBackend.send_message"
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(QueueName="q", Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    attribute: MessageAttributeValueTypeDef = {
        "DataType": "String",
        "StringValue": "reason: key a\x01b",
    }
    with contextlib.ExitStack() as exit_stack:
        sqs_message_validation.install(exit_stack)
        sqs.send_message(QueueUrl=url, MessageBody="ok \t\n\r é \U0001f600")
        assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="a\x01b")) == (
            "InvalidMessageContents"
        )
        assert _error(
            lambda: sqs.send_message(
                QueueUrl=url, MessageBody="{}", MessageAttributes={"richdoc.reason": attribute}
            )
        ) == ("InvalidMessageContents")
        # 400 characters, 1,200 bytes of UTF-8: over the queue's 1,024 bytes.
        assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="€" * 400)) == (
            "InvalidParameterValue"
        )
        sized: dict[str, MessageAttributeValueTypeDef] = {
            "a": {"DataType": "String", "StringValue": "x" * 1000}
        }
        assert (
            _error(
                lambda: sqs.send_message(
                    QueueUrl=url, MessageBody="x" * 20, MessageAttributes=sized
                )
            )
            == "InvalidParameterValue"
        )
        entries: list[SendMessageBatchRequestEntryTypeDef] = [
            {"Id": "good", "MessageBody": "fine"},
            {"Id": "bad", "MessageBody": "\x02"},
        ]
        assert _error(lambda: sqs.send_message_batch(QueueUrl=url, Entries=entries)) == (
            "InvalidMessageContents"
        )
    sqs.send_message(QueueUrl=url, MessageBody="a\x01b")  # patch removed: moto's leniency


def test_the_size_counts_utf8_bytes_of_the_body_and_every_attribute_part() -> None:
    attributes = {"name": {"DataType": "String", "StringValue": "vé"}}
    assert sqs_message_validation.message_size("€", attributes) == 3 + 4 + 6 + 3
