"""Canary: a scripted SendMessage failure fails the send to its queue, alone or in a
batch, whoever sends; SQS's own moves to a dead-letter queue are not sends and are never
failed (patches.sqs_send_failures)."""

from __future__ import annotations

import contextlib
import json

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.faults.scripted import ServiceError
from richdoc_tools.local.patches import sqs_send_failures


def test_a_scripted_failure_fails_sends_to_its_queue_and_not_sqs_s_own_moves(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])
    policy = {"deadLetterTargetArn": dlq_arn["Attributes"]["QueueArn"], "maxReceiveCount": 1}
    url = sqs.create_queue(
        QueueName="q", Attributes={"RedrivePolicy": json.dumps(policy), "VisibilityTimeout": "0"}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="moved later")
    failing = {"dlq": ServiceError("KmsThrottled", "throttled")}
    with contextlib.ExitStack() as exit_stack:
        sqs_send_failures.install(exit_stack, failing.get)
        with pytest.raises(ClientError, match="KmsThrottled"):
            sqs.send_message(QueueUrl=dlq, MessageBody="sent")
        with pytest.raises(ClientError, match="KmsThrottled"):
            sqs.send_message_batch(QueueUrl=dlq, Entries=[{"Id": "a", "MessageBody": "sent"}])
        sqs.send_message(QueueUrl=url, MessageBody="another queue")  # not failed
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)  # moves both to the DLQ
        moved = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10)["Messages"]
    assert sorted(m["Body"] for m in moved) == ["another queue", "moved later"]
