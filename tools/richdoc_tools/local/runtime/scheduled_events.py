"""EventBridge's scheduled rules: a "Scheduled Event" to their Lambda targets.

``ScheduledRules`` fires the rules with a ``rate(...)`` schedule expression (cron is not
emulated), every period, or when asked (``fire_all``, with any time); each event goes to
the rule's targets as EventBridge's asynchronous invocation (``async_invocations``).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from richdoc_tools.local.runtime.async_invocations import AsyncInvoker, event_time
from richdoc_tools.local.runtime.loops import EventLoop

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_events.type_defs import RuleTypeDef


def schedule_period_s(expression: str) -> float:
    """The period of a ``rate(N unit)`` schedule expression (cron is not emulated)."""
    match = re.fullmatch(r"rate\((\d+) (minutes?|hours?|days?)\)", expression.strip())
    if match is None:
        raise ValueError(f"schedule {expression!r}: only rate(...) expressions are emulated")
    unit = {"minute": 60, "hour": 3600, "day": 86400}[match[2].rstrip("s")]
    return int(match[1]) * unit


class ScheduledRules(EventLoop):
    def __init__(
        self, *, events: EventBridgeClient, invoker: AsyncInvoker, region: str, account: str
    ) -> None:
        # Rules are looked for again every minute (a rate is at least a minute); in
        # between, the loop sleeps until the next rule is due.
        super().__init__(name="event-schedules", interval_s=60.0)
        self.events = events
        self.invoker = invoker
        self.region = region
        self.account = account
        self.next_due: dict[str, float] = {}
        self._firing = threading.Lock()  # the loop and a test may fire at the same time

    def rules(self) -> list[RuleTypeDef]:
        rules = [
            rule
            for rule in self.events.list_rules()["Rules"]
            if rule.get("State") == "ENABLED" and "ScheduleExpression" in rule
        ]
        for rule in rules:
            schedule_period_s(rule["ScheduleExpression"])  # refuse what is not emulated
        return rules

    def tick(self) -> bool:
        now = time.monotonic()
        for rule in self.rules():
            period = schedule_period_s(rule["ScheduleExpression"])
            due = self.next_due.setdefault(rule["Name"], now + period)
            if now >= due:
                self.next_due[rule["Name"]] = now + period
                self.fire(rule)
        return False

    def idle_wait_s(self) -> float:
        if not self.next_due:
            return self.interval_s
        return min(self.interval_s, max(0.0, min(self.next_due.values()) - time.monotonic()))

    def fire_all(self, at: datetime | None = None) -> int:
        """Fire every schedule now, as if it were ``at`` (default: now); returns how many
        rules fired. Delivery is complete (retries, failure destination) on return."""
        rules = self.rules()
        for rule in rules:
            self.fire(rule, at)
        return len(rules)

    def fire(self, rule: RuleTypeDef, at: datetime | None = None) -> None:
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": self.account,
            "time": event_time(at or datetime.now(UTC)),
            "region": self.region,
            "resources": [rule["Arn"]],
            "detail": {},
        }
        with self._firing:
            for target in self.events.list_targets_by_rule(Rule=rule["Name"])["Targets"]:
                if ":lambda:" in target["Arn"]:
                    self.invoker.deliver(rule, target, event)
