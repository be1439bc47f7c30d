"""Step Functions' "Execution Status Change" events, to the Lambda targets of the rules.

moto neither emits these events nor delivers to Lambda targets. ``ExecutionStatusEvents``
publishes the event of each finished execution of the stack's state machine to the
EventBridge rules whose pattern matches it and invokes their Lambda targets, as
EventBridge's asynchronous invocation (``async_invocations``). It sleeps until an
execution ends (``executions_ended``: moto's interpreter ended one, or StopExecution
aborted it) and, when idle for ``STATUS_LISTING_S``, lists the ended executions it may
have missed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.runtime.async_invocations import AsyncInvoker, event_time
from richdoc_tools.local.runtime.loops import EventLoop, Signal

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_events.type_defs import RuleTypeDef
    from types_boto3_stepfunctions import SFNClient
    from types_boto3_stepfunctions.literals import ExecutionStatusType

TERMINAL_STATUSES: tuple[ExecutionStatusType, ...] = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


class ExecutionEnds(Signal):
    """The executions that ended (as ARNs), for the status events' loop: notified when
    moto's interpreter ends one, or StopExecution aborts it (patches.execution_ends)."""

    def __init__(self) -> None:
        super().__init__()
        self._ended: list[str] = []
        self._lock = threading.Lock()

    def ended(self, execution_arn: str) -> None:
        with self._lock:
            self._ended.append(execution_arn)
        self.notify()

    def take(self) -> list[str]:
        """The executions that ended since the last call, in order."""
        with self._lock:
            taken, self._ended = self._ended, []
        return taken


executions_ended = ExecutionEnds()
# An execution that ends without passing either hook still gets its event: the loop lists
# the ended executions when it has been idle this long.
STATUS_LISTING_S = 5.0


class ExecutionStatusEvents(EventLoop):
    def __init__(
        self,
        *,
        sfn: SFNClient,
        events: EventBridgeClient,
        invoker: AsyncInvoker,
        state_machine_arn: str,
        region: str,
        account: str,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(
            name="sfn-status-events", interval_s=STATUS_LISTING_S, wakes_on=executions_ended
        )
        self.sfn = sfn
        self.events = events
        self.invoker = invoker
        self.state_machine_arn = state_machine_arn
        self.region = region
        self.account = account
        self.on_event = on_event
        self.seen_executions: set[str] = set()
        self.listed_at = -STATUS_LISTING_S  # the first tick lists what ended before it

    def tick(self) -> bool:
        """The status events of the executions that ended since the last tick; after an
        idle interval, of every ended execution not yet seen (listed)."""
        from moto.events.models import EventPattern

        rules = [
            (rule, EventPattern.load(rule["EventPattern"]))
            for rule in self.events.list_rules()["Rules"]
            if rule.get("State") == "ENABLED" and "EventPattern" in rule
        ]
        ended = executions_ended.take()
        if time.monotonic() - self.listed_at >= STATUS_LISTING_S:
            self.listed_at = time.monotonic()
            ended += self._listed(rules)
        delivered = False
        for arn in dict.fromkeys(ended):
            if arn in self.seen_executions:
                continue
            event = self._status_event(arn)
            if event is None:
                continue  # not this emulation's (another stack's, in the same process)
            detail = event["detail"]
            if detail["stateMachineArn"] != self.state_machine_arn:
                continue  # another state machine's
            if detail["status"] not in TERMINAL_STATUSES:
                continue  # announced, but not ended after all
            self.seen_executions.add(arn)
            delivered = self._deliver(event, rules) or delivered
        return delivered

    def _listed(self, rules: Sequence[tuple[RuleTypeDef, Any]]) -> list[str]:
        paginator = self.sfn.get_paginator("list_executions")
        return [
            summary["executionArn"]
            for status in self._statuses_to_list(rules)
            for page in paginator.paginate(
                stateMachineArn=self.state_machine_arn, statusFilter=status
            )
            for summary in page["executions"]
        ]

    def _deliver(self, event: dict[str, Any], rules: Sequence[tuple[RuleTypeDef, Any]]) -> bool:
        delivered = False
        for rule, pattern in rules:
            if not pattern.matches_event(event):
                continue
            for target in self.events.list_targets_by_rule(Rule=rule["Name"])["Targets"]:
                if ":lambda:" in target["Arn"]:
                    self.invoker.deliver(rule, target, event)
                    delivered = True
        if self.on_event:
            self.on_event(event)
        return delivered

    def _statuses_to_list(
        self, rules: Sequence[tuple[Mapping[str, Any], object]]
    ) -> list[ExecutionStatusType]:
        """The terminal statuses worth listing: those some rule can match (the stack's
        rule wants FAILED, TIMED_OUT and ABORTED), or all when a callback wants every event
        or a rule does not filter on a plain list of statuses. Listing every execution on
        every tick grew with the number of jobs a stack had run (bench/, item 5)."""
        if self.on_event:
            return list(TERMINAL_STATUSES)
        wanted: set[str] = set()
        for rule, _ in rules:
            status = json.loads(rule["EventPattern"]).get("detail", {}).get("status")
            if not (isinstance(status, list) and all(isinstance(s, str) for s in status)):
                return list(TERMINAL_STATUSES)
            wanted.update(status)
        return [s for s in TERMINAL_STATUSES if s in wanted]

    def _status_event(self, execution_arn: str) -> dict[str, Any] | None:
        try:
            execution = self.sfn.describe_execution(executionArn=execution_arn)
        except self.sfn.exceptions.ExecutionDoesNotExist:
            return None

        def millis(value: Any) -> int | None:
            return int(value.timestamp() * 1000) if value else None

        return {
            "version": "0",
            "id": execution_arn.rsplit(":", 1)[-1],
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": self.account,
            "time": event_time(datetime.now(UTC)),
            "region": self.region,
            "resources": [execution_arn],
            "detail": {
                "executionArn": execution_arn,
                "stateMachineArn": execution["stateMachineArn"],
                "name": execution["name"],
                "status": execution["status"],
                "startDate": millis(execution.get("startDate")),
                "stopDate": millis(execution.get("stopDate")),
                "input": execution.get("input"),
                "output": execution.get("output"),
                "error": execution.get("error"),
                "cause": execution.get("cause"),
            },
        }
