"""Canary: moto has no SQS message move tasks (in process it raised NotImplementedError;
richdoc local serve answered a bare HTTP 500 after the CLI's retries); the patch
(patches.sqs_message_move_task) refuses starting or cancelling one with a 400 that names
richdoc dlq redrive, and lists none."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import sqs_message_move_task
from richdoc_tools.local.patches.target import original


@pytest.fixture
def queues(aws: None) -> tuple[Any, str, str]:
    sqs = boto3.client("sqs")
    arns = []
    for name in ("dlq", "ingest"):
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        arns.append(attributes["Attributes"]["QueueArn"])
    return sqs, arns[0], arns[1]


def test_moto_still_lacks_message_move_tasks(queues: tuple[Any, str, str]) -> None:
    sqs, dlq, ingest = queues
    for target in sqs_message_move_task.PATCHED:
        assert original(target) is None, target
    with pytest.raises(NotImplementedError):
        sqs.start_message_move_task(SourceArn=dlq, DestinationArn=ingest)


def test_a_move_task_is_refused_with_a_4xx_naming_the_command(
    queues: tuple[Any, str, str],
) -> None:
    sqs, dlq, ingest = queues
    with contextlib.ExitStack() as exit_stack:
        sqs_message_move_task.install(exit_stack)
        for call in (
            lambda: sqs.start_message_move_task(SourceArn=dlq, DestinationArn=ingest),
            lambda: sqs.cancel_message_move_task(TaskHandle="any"),
        ):
            with pytest.raises(ClientError) as refused:
                call()
            error = refused.value.response["Error"]
            assert error["Code"] == "UnsupportedOperation"
            assert "richdoc dlq redrive" in error["Message"]
            assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert sqs.list_message_move_tasks(SourceArn=dlq)["Results"] == []
    for target in sqs_message_move_task.PATCHED:
        assert original(target) is None  # removed again with the stack
