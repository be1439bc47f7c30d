"""moto_fixes.fidelity.events_sqs_policy: EventBridge delivers a rule's events to an SQS
queue only when the queue's policy allows events.amazonaws.com for the rule, and a queue
without such a policy receives nothing, silently. Stock moto delivers to every queue
target whatever its policy says."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import boto3
import pytest
from richdoc_tools.local.moto_fixes.fidelity import events_sqs_policy

from tests.support.moto_fixes import moto_differs

BUS = "bus"


def _subscribed(policy: dict[str, Any] | None, name: str) -> tuple[Any, str, str]:
    """A queue (with ``policy``, when given) subscribed to rule ``name`` on the bus."""
    sqs, events = boto3.client("sqs"), boto3.client("events")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule = events.put_rule(Name=name, EventBusName=BUS, EventPattern='{"source": ["richdoc"]}')
    if policy is not None:
        document = json.dumps(policy).replace("QUEUE", arn).replace("RULE", rule["RuleArn"])
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": document})
    events.put_targets(Rule=name, EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])
    return sqs, url, rule["RuleArn"]


def _allow(condition: dict[str, Any] | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": "QUEUE",
    }
    if condition:
        statement["Condition"] = condition
    return {"Version": "2012-10-17", "Statement": [statement]}


def _publish() -> None:
    boto3.client("events").put_events(
        Entries=[
            {"Source": "richdoc", "DetailType": "Job Finished", "Detail": "{}", "EventBusName": BUS}
        ]
    )


def _received(sqs: Any, url: str) -> int:
    return len(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []))


@pytest.fixture
def bus(aws: None) -> None:
    boto3.client("events").create_event_bus(Name=BUS)


@moto_differs("delivers to a queue whose policy does not let EventBridge send to it")
def test_stock_moto_delivers_nothing_to_a_queue_without_a_policy(bus: None) -> None:
    sqs, url, _ = _subscribed(None, "no-policy")
    _publish()
    assert _received(sqs, url) == 0


def test_with_the_fix_only_a_queue_whose_policy_allows_the_rule_receives(bus: None) -> None:
    with contextlib.ExitStack() as exit_stack:
        events_sqs_policy.install(exit_stack)
        cases = {
            "no-policy": None,
            "for-the-rule": _allow({"ArnEquals": {"aws:SourceArn": "RULE"}}),
            "any-rule": _allow(),
            "another-rule": _allow({"ArnEquals": {"aws:SourceArn": "RULE-of-someone-else"}}),
            "denied": {
                "Statement": [
                    *_allow()["Statement"],
                    {**_allow()["Statement"][0], "Effect": "Deny"},
                ]
            },
            "for-s3": {
                "Statement": [
                    {**_allow()["Statement"][0], "Principal": {"Service": "s3.amazonaws.com"}}
                ]
            },
        }
        queues = {name: _subscribed(policy, name) for name, policy in cases.items()}
        _publish()
        got = {name: _received(sqs, url) for name, (sqs, url, _) in queues.items()}
        assert got == {
            "no-policy": 0,
            "for-the-rule": 1,
            "any-rule": 1,
            "another-rule": 0,
            "denied": 0,
            "for-s3": 0,
        }
        dropped = {queue for _, queue in events_sqs_policy.dropped}
        assert dropped == {"no-policy", "another-rule", "denied", "for-s3"}
