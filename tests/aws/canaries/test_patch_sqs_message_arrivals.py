"""Canary: every SendMessage, single or in a batch, passes one backend method, and the
patch point announces each message to the queues' pollers (patches.sqs_message_arrivals)."""

from __future__ import annotations

import contextlib
import inspect

import boto3
from moto import mock_aws
from richdoc_tools.local.patches import sqs_message_arrivals
from richdoc_tools.local.runtime.sqs_messages import messages_sent


def test_sqs_arrivals_patch_point_is_where_single_and_batch_sends_go() -> None:
    import moto.sqs.models as models

    assert sqs_message_arrivals.TARGET == "moto.sqs.models.SQSBackend.send_message"
    batch = inspect.getsource(models.SQSBackend.send_message_batch)
    assert "message = self.send_message(" in batch  # each entry through the single send


def test_with_the_patch_every_message_sent_wakes_the_pollers() -> None:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        sqs_message_arrivals.install(exit_stack)
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        seen = messages_sent.count
        sqs.send_message(QueueUrl=url, MessageBody="one")
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[{"Id": "a", "MessageBody": "two"}, {"Id": "b", "MessageBody": "three"}],
        )
        assert messages_sent.count == seen + 3
        messages_sent.wait_past(seen, timeout_s=0)  # returns at once: it moved
    # Without the patch, nothing is announced.
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        seen = messages_sent.count
        sqs.send_message(QueueUrl=url, MessageBody="one")
        assert messages_sent.count == seen
