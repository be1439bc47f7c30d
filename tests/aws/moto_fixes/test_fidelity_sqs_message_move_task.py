"""moto_fixes.fidelity.sqs_message_move_task: a message move task moves a dead-letter
queue's messages to the destination queue, on its own, as SQS runs one; tasks are listed
and cancelled as SQS lists and cancels them. Stock moto has none of the three calls (in
process it raises NotImplementedError; served, it answered HTTP 500)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import sqs_message_move_task
from richdoc_tools.local.patch_targets import original

from tests.support.moto_fixes import moto_differs

TERMINAL = ("COMPLETED", "CANCELLED", "FAILED")


@pytest.fixture
def queues(aws: None) -> dict[str, Any]:
    """An ingest queue whose dead-letter queue holds three messages (with attributes), and
    a queue that is no one's dead-letter queue."""
    sqs = boto3.client("sqs")
    urls, arns = {}, {}
    for name in ("dlq", "ingest", "other"):
        urls[name] = sqs.create_queue(QueueName=name)["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=urls[name], AttributeNames=["QueueArn"])
        arns[name] = attributes["Attributes"]["QueueArn"]
    policy = {"deadLetterTargetArn": arns["dlq"], "maxReceiveCount": 5}
    sqs.set_queue_attributes(
        QueueUrl=urls["ingest"], Attributes={"RedrivePolicy": json.dumps(policy)}
    )
    for n in range(3):
        sqs.send_message(
            QueueUrl=urls["dlq"],
            MessageBody=f"letter {n}",
            MessageAttributes={"n": {"DataType": "Number", "StringValue": str(n)}},
        )
    return {"sqs": sqs, "urls": urls, "arns": arns}


def _drain(sqs: Any, url: str) -> list[tuple[str, str, str]]:
    """Every message on the queue (id, body, attribute n), deleted."""
    found = []
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages"):
        for m in batch:
            found.append((m["MessageId"], m["Body"], m["MessageAttributes"]["n"]["StringValue"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return found


def _ended(sqs: Any, source_arn: str) -> dict[str, Any]:
    """The source queue's latest task, once it has ended (it runs on its own)."""
    deadline = time.monotonic() + 60
    while True:
        [task] = sqs.list_message_move_tasks(SourceArn=source_arn)["Results"]
        if task["Status"] in TERMINAL:
            return dict(task)
        assert time.monotonic() < deadline, f"the move task did not end: {task}"
        time.sleep(0.02)


def _redriven(queues: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """A move task from the dead-letter queue to the ingest queue, run to its end: what
    the ingest queue then holds (bodies and attributes) and how the task ended."""
    sqs, arns, urls = queues["sqs"], queues["arns"], queues["urls"]
    sqs.start_message_move_task(SourceArn=arns["dlq"], DestinationArn=arns["ingest"])
    task = _ended(sqs, arns["dlq"])
    moved = sorted((body, n) for _, body, n in _drain(sqs, urls["ingest"]))
    return moved, task


@moto_differs("has no SQS message move tasks", raises=NotImplementedError)
def test_stock_moto_moves_a_dead_letter_queue_s_messages(queues: dict[str, Any]) -> None:
    moved, task = _redriven(queues)
    assert moved == [("letter 0", "0"), ("letter 1", "1"), ("letter 2", "2")]
    assert task["Status"] == "COMPLETED"


@pytest.fixture
def fixed(queues: dict[str, Any]) -> Iterator[dict[str, Any]]:
    with contextlib.ExitStack() as exit_stack:
        sqs_message_move_task.install(exit_stack)
        yield queues
    for target in sqs_message_move_task.PATCHED:
        assert original(target) is None  # removed again with the stack


def test_with_the_fix_a_move_task_moves_every_message_as_a_new_one(fixed: dict[str, Any]) -> None:
    sqs, urls = fixed["sqs"], fixed["urls"]
    before = {
        m["MessageId"]
        for m in sqs.receive_message(
            QueueUrl=urls["dlq"], MaxNumberOfMessages=10, VisibilityTimeout=0
        )["Messages"]
    }
    moved, task = _redriven(fixed)
    assert moved == [("letter 0", "0"), ("letter 1", "1"), ("letter 2", "2")]
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 3)
    assert task["ApproximateNumberOfMessagesToMove"] == 3
    assert task["DestinationArn"] == fixed["arns"]["ingest"]
    assert "TaskHandle" not in task  # only while it runs
    assert _drain(sqs, urls["dlq"]) == []
    sqs.send_message(
        QueueUrl=urls["dlq"],
        MessageBody="later",
        MessageAttributes={"n": {"DataType": "Number", "StringValue": "9"}},
    )
    sqs.start_message_move_task(
        SourceArn=fixed["arns"]["dlq"], DestinationArn=fixed["arns"]["ingest"]
    )
    _ended(sqs, fixed["arns"]["dlq"])
    [(message_id, body, _)] = _drain(sqs, urls["ingest"])
    assert body == "later" and message_id not in before


def test_with_the_fix_tasks_are_listed_newest_first_and_refused_as_sqs_refuses(
    fixed: dict[str, Any],
) -> None:
    sqs, arns = fixed["sqs"], fixed["arns"]
    assert sqs.list_message_move_tasks(SourceArn=arns["dlq"])["Results"] == []
    sqs.start_message_move_task(SourceArn=arns["dlq"], DestinationArn=arns["ingest"])
    _ended(sqs, arns["dlq"])
    sqs.start_message_move_task(SourceArn=arns["dlq"])  # no destination: see the fix
    failed = _ended(sqs, arns["dlq"])
    assert (failed["Status"], failed["ApproximateNumberOfMessagesMoved"]) == ("FAILED", 0)
    assert "DestinationArn" in failed["FailureReason"]
    listed = sqs.list_message_move_tasks(SourceArn=arns["dlq"], MaxResults=10)["Results"]
    assert [t["Status"] for t in listed] == ["FAILED", "COMPLETED"]

    def refusal(call: Any) -> tuple[str, str]:
        with pytest.raises(ClientError) as refused:
            call()
        return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]

    assert refusal(lambda: sqs.start_message_move_task(SourceArn=arns["other"]))[0] == (
        "InvalidParameterValue"
    )
    missing = arns["other"].replace(":other", ":missing")
    assert refusal(lambda: sqs.start_message_move_task(SourceArn=missing))[0] == (
        "ResourceNotFoundException"
    )
    assert refusal(lambda: sqs.cancel_message_move_task(TaskHandle="not-a-task"))[0] == (
        "ResourceNotFoundException"
    )


def test_with_the_fix_a_running_task_is_cancelled_and_moves_nothing_more(
    fixed: dict[str, Any],
) -> None:
    from moto.sqs.models import sqs_backends

    sqs, arns, urls = fixed["sqs"], fixed["arns"], fixed["urls"]
    dlq = sqs_backends["123456789012"]["us-east-1"].get_queue("dlq")
    with dlq._messages_lock:  # the task cannot take a message: it runs until cancelled
        handle = sqs.start_message_move_task(SourceArn=arns["dlq"], DestinationArn=arns["ingest"])[
            "TaskHandle"
        ]
        [running] = sqs.list_message_move_tasks(SourceArn=arns["dlq"])["Results"]
        assert (running["Status"], running["TaskHandle"]) == ("RUNNING", handle)
        with pytest.raises(ClientError, match="already a task running"):
            sqs.start_message_move_task(SourceArn=arns["dlq"], DestinationArn=arns["ingest"])
        moved = sqs.cancel_message_move_task(TaskHandle=handle)["ApproximateNumberOfMessagesMoved"]
    task = _ended(sqs, arns["dlq"])
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"], moved) == ("CANCELLED", 0, 0)
    assert _drain(sqs, urls["ingest"]) == []
    assert len(_drain(sqs, urls["dlq"])) == 3
    with pytest.raises(ClientError, match="UnsupportedOperation"):
        sqs.cancel_message_move_task(TaskHandle=handle)
