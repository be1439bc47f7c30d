"""Canary: moto builds every event a rule's target receives from an input template, which
leaves ``account`` out and replaces placeholders inside the detail
(patches.events_delivery passes untransformed events whole)."""

from __future__ import annotations

import contextlib
import inspect
import json

import boto3
from moto import mock_aws
from richdoc_tools.local.patches import events_delivery

REGION = "us-east-1"


def test_events_delivery_patch_point_builds_every_target_input_from_a_template() -> None:
    from moto.events import models
    from moto.events.utils import EventTemplateParser

    assert events_delivery.TARGET == "moto.events.utils.EventTemplateParser.parse"
    assert '"account"' not in EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE
    assert "event = EventTemplateParser.parse(" in inspect.getsource(models.Rule.send_to_targets)


def _delivered(patched: bool) -> dict[str, object]:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        if patched:
            events_delivery.install(exit_stack)
        sqs = boto3.client("sqs", region_name=REGION)
        queue = sqs.create_queue(QueueName="q")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
        events = boto3.client("events", region_name=REGION)
        events.put_rule(Name="r", EventPattern='{"source": ["richdoc"]}')
        events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn["Attributes"]["QueueArn"]}])
        detail = {"key": "<region> <source> <time>.pdf"}
        events.put_events(
            Entries=[
                {"Source": "richdoc", "DetailType": "Job Finished", "Detail": json.dumps(detail)}
            ]
        )
        [message] = sqs.receive_message(QueueUrl=queue)["Messages"]
        delivered: dict[str, object] = json.loads(message["Body"])
        return delivered


def test_without_the_patch_a_target_gets_no_account_and_an_altered_detail() -> None:
    event = _delivered(patched=False)
    assert "account" not in event
    assert event["detail"] != {"key": "<region> <source> <time>.pdf"}


def test_with_the_patch_a_target_gets_the_event_whole_and_as_put() -> None:
    event = _delivered(patched=True)
    assert event["account"] == "123456789012"
    assert event["detail"] == {"key": "<region> <source> <time>.pdf"}
    assert set(event) == set(events_delivery.EVENT_MEMBERS)
