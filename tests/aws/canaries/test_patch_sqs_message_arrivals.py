"""Canary: every message that arrives on a queue, sent alone or in a batch or moved to a
dead-letter queue by a redrive policy, wakes the queues' pollers
(patches.sqs_message_arrivals)."""

from __future__ import annotations

import contextlib
import json

import boto3
from moto import mock_aws
from richdoc_tools.local.patches import sqs_message_arrivals
from richdoc_tools.local.runtime.sqs_messages import messages_sent


def test_every_message_that_arrives_on_a_queue_wakes_the_pollers() -> None:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        sqs_message_arrivals.install(exit_stack)
        sqs = boto3.client("sqs", region_name="us-east-1")
        dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])
        policy = {"deadLetterTargetArn": dlq_arn["Attributes"]["QueueArn"], "maxReceiveCount": 1}
        url = sqs.create_queue(
            QueueName="q",
            Attributes={"RedrivePolicy": json.dumps(policy), "VisibilityTimeout": "0"},
        )["QueueUrl"]
        seen = messages_sent.count
        sqs.send_message(QueueUrl=url, MessageBody="one")
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[{"Id": "a", "MessageBody": "two"}, {"Id": "b", "MessageBody": "three"}],
        )
        assert messages_sent.count == seen + 3
        messages_sent.wait_past(seen, timeout_s=0)  # returns at once: it moved
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert len(received) == 3
        assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        assert messages_sent.count == seen + 6  # received once each: moved to the DLQ
    # Without the patch, nothing is announced.
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        seen = messages_sent.count
        sqs.send_message(QueueUrl=url, MessageBody="one")
        assert messages_sent.count == seen
