"""What docs/consumers.md prints for consumers, taken from the page as printed (its
``<!-- consumer-example:NAME -->`` blocks), and the subscription it describes: a queue of
the consumer's own, with the page's queue policy, target of a rule of its own."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "consumers.md"


def documented(name: str) -> str:
    """The code block printed right after ``<!-- consumer-example:NAME -->``."""
    match = re.search(
        rf"<!-- consumer-example:{re.escape(name)} -->\n```[a-z]*\n(.*?)```",
        PAGE.read_text(),
        flags=re.DOTALL,
    )
    assert match is not None, f"docs/consumers.md prints no consumer-example:{name}"
    return match.group(1)


def queue_policy(queue_arn: str, rule_arn: str) -> str:
    """The page's queue policy for this queue and rule (checked to be JSON)."""
    text = documented("queue-policy").replace("QUEUE_ARN", queue_arn).replace("RULE_ARN", rule_arn)
    return json.dumps(json.loads(text))


def subscribe(sqs: Any, events: Any, bus: str, name: str, pattern: str) -> str:
    """A queue named ``name``, target of rule ``name`` on ``bus``, under the page's queue
    policy; the queue's URL."""
    url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule = events.put_rule(Name=name, EventBusName=bus, EventPattern=pattern)["RuleArn"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": queue_policy(arn, rule)})
    events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "queue", "Arn": arn}])
    return url
