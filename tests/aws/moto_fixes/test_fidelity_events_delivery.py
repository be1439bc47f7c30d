"""moto_fixes.fidelity.events_delivery: a rule's target that does not transform its input
receives the event whole and as put, as EventBridge delivers it. Stock moto builds every
delivery from a string template that leaves ``account`` out and replaces placeholder
names inside the detail."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import boto3
from richdoc_tools.local.moto_fixes.fidelity import events_delivery

from tests.support.moto_fixes import moto_differs

DETAIL = {"key": "<region> <source> <time>.pdf"}
MEMBERS = {"version", "id", "detail-type", "source", "account", "time", "region", "resources"}


def _delivered() -> dict[str, Any]:
    """An event put on the default bus, as a rule's SQS target receives it."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="q")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    events = boto3.client("events", region_name="us-east-1")
    events.put_rule(Name="r", EventPattern='{"source": ["richdoc"]}')
    events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn["Attributes"]["QueueArn"]}])
    events.put_events(
        Entries=[{"Source": "richdoc", "DetailType": "Job Finished", "Detail": json.dumps(DETAIL)}]
    )
    [message] = sqs.receive_message(QueueUrl=queue)["Messages"]
    delivered: dict[str, Any] = json.loads(message["Body"])
    return delivered


@moto_differs("delivers an event without its account, placeholders in its detail replaced")
def test_stock_moto_delivers_the_event_whole_and_as_put(aws: None) -> None:
    event = _delivered()
    assert event["detail"] == DETAIL
    assert set(event) >= MEMBERS


def test_with_the_fix_a_target_gets_the_event_whole_and_as_put(aws: None) -> None:
    with contextlib.ExitStack() as exit_stack:
        events_delivery.install(exit_stack)
        event = _delivered()
    assert event["account"] == "123456789012"
    assert event["detail"] == DETAIL
    assert set(event) == set(events_delivery.EVENT_MEMBERS)
