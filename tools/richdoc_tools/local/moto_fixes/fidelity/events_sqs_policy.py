"""EventBridge delivers to an SQS queue only what the queue's policy allows.

What moto does: it sends every event a rule matches to every SQS queue target, whatever
the queue's policy says: a consumer that followed a guide without the queue policy saw
its events locally and none on AWS.

What AWS does: an SQS target receives an event only if the queue's resource-based policy
allows ``events.amazonaws.com`` to send to it for the rule (``aws:SourceArn``); otherwise
the event is dropped, silently ("Using resource-based policies for Amazon EventBridge",
SQS permissions:
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html).

The fix decides each delivery with the queue's policy (``strict.queue_policies``) and
drops a denied one; the count of them is kept (``dropped``) for tests to observe.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.strict.queue_policies import EVENTBRIDGE, service_may_send

if TYPE_CHECKING:
    from moto.events.models import Rule

TARGET = "moto.events.models.Rule._send_to_sqs_queue"
PATCHED = (TARGET,)

# Deliveries the queue policies refused, as (rule ARN, queue name).
dropped: list[tuple[str, str]] = []


# Rule._send_to_sqs_queue(resource_id, event, group_id): the event as the rule sends it.
SendToQueue = Callable[["Rule", str, dict[str, Any], "str | None"], None]


def policed(send: SendToQueue) -> SendToQueue:
    @functools.wraps(send)
    def send_if_allowed(
        self: Rule, resource_id: str, event: dict[str, Any], group_id: str | None = None
    ) -> None:
        from moto.sqs.models import sqs_backends

        queue = sqs_backends[self.account_id][self.region_name].get_queue(resource_id)
        if not service_may_send(
            queue.policy,
            service=EVENTBRIDGE,
            queue_arn=queue.queue_arn,
            source_arn=self.arn,
            source_account=self.account_id,
        ):
            dropped.append((self.arn, resource_id))
            return
        send(self, resource_id, event, group_id)

    return send_if_allowed


def install(exit_stack: contextlib.ExitStack) -> None:
    dropped.clear()
    replace(exit_stack, TARGET, policed(original(TARGET)))
