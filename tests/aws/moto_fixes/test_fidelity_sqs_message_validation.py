"""moto_fixes.fidelity.sqs_message_validation: SendMessage refuses what SQS refuses,
characters outside its set in the body or a String attribute, and a message over the
queue's MaximumMessageSize in UTF-8 bytes with its attributes, whoever sends. Stock moto
takes any character and counts the body's characters only."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import sqs_message_validation

from tests.support.moto_fixes import moto_differs

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import (
        MessageAttributeValueTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )


def _error(call: Callable[[], object]) -> str | None:
    """The error code ``call`` is refused with; None when it succeeds."""
    try:
        call()
    except ClientError as refused:
        return str(refused.response["Error"]["Code"])
    return None


def _queue() -> tuple[Any, str]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(QueueName="q", Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    return sqs, url


@moto_differs("takes a message body holding a character outside SQS's set")
def test_stock_moto_refuses_a_control_character_in_a_body(aws: None) -> None:
    sqs, url = _queue()
    assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="a\x01b")) == (
        "InvalidMessageContents"
    )


@moto_differs("counts a message's characters, not its UTF-8 bytes")
def test_stock_moto_counts_a_message_s_size_in_utf8_bytes(aws: None) -> None:
    sqs, url = _queue()
    # 400 characters, 1,200 bytes of UTF-8: over the queue's 1,024 bytes.
    assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="€" * 400)) == (
        "InvalidParameterValue"
    )


def test_with_the_fix_sqs_s_refusals_are_made(aws: None) -> None:
    sqs, url = _queue()
    attribute: MessageAttributeValueTypeDef = {
        "DataType": "String",
        "StringValue": "reason: key a\x01b",
    }
    sized: dict[str, MessageAttributeValueTypeDef] = {
        "a": {"DataType": "String", "StringValue": "x" * 1000}
    }
    entries: list[SendMessageBatchRequestEntryTypeDef] = [
        {"Id": "good", "MessageBody": "fine"},
        {"Id": "bad", "MessageBody": "\x02"},
    ]
    with contextlib.ExitStack() as exit_stack:
        sqs_message_validation.install(exit_stack)
        assert (
            _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="ok \t\n\r é \U0001f600"))
            is None
        )
        assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="a\x01b")) == (
            "InvalidMessageContents"
        )
        assert _error(
            lambda: sqs.send_message(
                QueueUrl=url, MessageBody="{}", MessageAttributes={"richdoc.reason": attribute}
            )
        ) == ("InvalidMessageContents")
        assert _error(lambda: sqs.send_message(QueueUrl=url, MessageBody="€" * 400)) == (
            "InvalidParameterValue"
        )
        assert _error(
            lambda: sqs.send_message(QueueUrl=url, MessageBody="x" * 20, MessageAttributes=sized)
        ) == ("InvalidParameterValue")
        assert _error(lambda: sqs.send_message_batch(QueueUrl=url, Entries=entries)) == (
            "InvalidMessageContents"
        )


def test_the_size_counts_utf8_bytes_of_the_body_and_every_attribute_part() -> None:
    attributes = {"name": {"DataType": "String", "StringValue": "vé"}}
    assert sqs_message_validation.message_size("€", attributes) == 3 + 4 + 6 + 3
