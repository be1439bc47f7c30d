"""Every delivery the emulation has to drive itself, for a deployed stack.

``EventDelivery`` runs a loop for each: Lambda's SQS event sources (``sqs_messages``) and
DynamoDB stream event sources (``streams``), one poller per event source mapping the
template enables; the execution status events of its state machine (``status_events``);
its scheduled rules (``scheduled_events``) and the buckets' lifecycle rules
(``s3_lifecycle``), both on their own schedule only when asked. The events EventBridge
hands to Lambda targets go through one asynchronous invoker (``async_invocations``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from richdoc_tools.local.faults.injected import FaultInjector
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime.async_invocations import AsyncInvoker, queue_url
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.loops import EventLoop
from richdoc_tools.local.runtime.s3_lifecycle import Lifecycle, LifecycleLoop
from richdoc_tools.local.runtime.scheduled_events import ScheduledRules
from richdoc_tools.local.runtime.shard_reader import ShardReader
from richdoc_tools.local.runtime.sqs_messages import SqsPoller, messages_sent
from richdoc_tools.local.runtime.status_events import ExecutionStatusEvents
from richdoc_tools.local.runtime.streams import StreamPoller

if TYPE_CHECKING:
    from types_boto3_lambda.type_defs import EventSourceMappingConfigurationTypeDef

    from richdoc_tools.local.clients import Clients
    from richdoc_tools.local.strict.access import AccessControl


class EventDelivery:
    def __init__(
        self,
        clients: Clients,
        *,
        state_machine_arn: str,
        region: str,
        account: str,
        retry_visibility_s: int,
        schedules: bool,
        roles: Mapping[str, callers.Principal] | None = None,
        access: AccessControl | None = None,
        injector: FaultInjector | None = None,
        clock: StackClock | None = None,
        lifecycle: Lifecycle | None = None,
        disabled_mappings: Iterable[str] = (),
    ) -> None:
        """``roles``: function ARN -> its execution role, and ``access`` its decisions (a
        strict stack's); ``clock`` ages stream records; ``lifecycle`` is applied on a loop
        with ``schedules``; ``disabled_mappings``: the UUIDs of the event source mappings
        the template does not enable (never polled)."""
        self.clients = clients
        self.region = region
        self.retry_visibility_s = retry_visibility_s
        self.access = access
        self.clock = clock
        self.roles = dict(roles or {})
        self.loops: list[EventLoop] = []
        self.pollers: dict[str, SqsPoller | StreamPoller] = {}  # mapping UUID -> its poller
        self._started = False
        self._queues_paused = False
        self.invoker = AsyncInvoker(
            lambda_client=clients("lambda"), sqs=clients("sqs"), roles=roles, injector=injector
        )
        self.refresh(self.roles, disabled_mappings)
        self.status_events = ExecutionStatusEvents(
            sfn=clients("stepfunctions"),
            events=clients("events"),
            invoker=self.invoker,
            state_machine_arn=state_machine_arn,
            region=region,
            account=account,
        )
        self.loops.append(self.status_events)
        self.schedules = ScheduledRules(
            events=clients("events"), invoker=self.invoker, region=region, account=account
        )
        self.schedules.rules()  # refuse schedule expressions that are not emulated
        if schedules:
            self.loops.append(self.schedules)
            if lifecycle is not None:
                self.loops.append(LifecycleLoop(lifecycle))

    def refresh(self, roles: Mapping[str, callers.Principal], disabled: Iterable[str]) -> None:
        """The event source mappings as deployed now (after a stack update): a poller for
        each new one the template enables, each changed one's settings applied to its
        poller (which goes on from where it is), the pollers of the mappings gone or
        disabled stopped; the functions' roles as deployed now."""
        self.roles = dict(roles)
        self.invoker.roles = dict(roles)
        mappings = {
            m["UUID"]: m
            for m in self.clients("lambda").list_event_source_mappings()["EventSourceMappings"]
            if m["UUID"] not in set(disabled)
        }
        for mapping_id, poller in list(self.pollers.items()):
            if mapping_id not in mappings:
                poller.stop()
                poller.join(timeout=5)
                self.loops.remove(poller)
                del self.pollers[mapping_id]
        for mapping_id, mapping in mappings.items():
            if mapping_id in self.pollers:
                self.pollers[mapping_id].configure(mapping)
                continue
            poller = self._poller(mapping)
            if isinstance(poller, SqsPoller) and self._queues_paused:
                poller.paused.set()
            self.pollers[mapping_id] = poller
            self.loops.append(poller)
            if self._started:
                poller.start()

    def _poller(self, mapping: EventSourceMappingConfigurationTypeDef) -> SqsPoller | StreamPoller:
        role = self.roles.get(mapping["FunctionArn"])
        if ":dynamodb:" in mapping["EventSourceArn"]:
            return StreamPoller(
                reader=ShardReader(mapping["EventSourceArn"], role=role, access=self.access),
                lambda_client=self.clients("lambda"),
                sqs=self.clients("sqs"),
                mapping=mapping,
                role=role,
                s3=self.clients("s3"),
                clock=self.clock,
                retry_wait_s=max(0.05, self.retry_visibility_s / 5),
            )
        sqs = self.clients("sqs")
        return SqsPoller(
            sqs=sqs,
            lambda_client=self.clients("lambda"),
            mapping=mapping,
            queue_url=queue_url(sqs, mapping["EventSourceArn"]),
            region=self.region,
            retry_visibility_s=self.retry_visibility_s,
            role=role,
        )

    def start(self) -> None:
        self._started = True
        for loop in self.loops:
            loop.start()

    def stop(self) -> None:
        for loop in self.loops:
            loop.stop()
        for loop in self.loops:
            loop.join(timeout=5)
        self.loops.clear()
        self.pollers.clear()

    @property
    def errors(self) -> list[BaseException]:
        """What the loops raised (each keeps delivering): jobs may be unable to progress."""
        return [error for loop in self.loops for error in loop.errors]

    def fire_schedules(self, at: datetime | None = None) -> int:
        return self.schedules.fire_all(at)

    def streams_caught_up(self) -> bool:
        """Every stream event source has handled every record written so far."""
        return all(loop.caught_up() for loop in self.loops if isinstance(loop, StreamPoller))

    def pause_queues(self, paused: bool) -> None:
        """Stop (or resume) every SQS event source mapping's polling; a batch being
        handled is finished."""
        self._queues_paused = paused
        for loop in self.loops:
            if isinstance(loop, SqsPoller):
                if paused:
                    loop.paused.set()
                    with loop.receiving:  # a receive already under way ends first
                        pass
                else:
                    loop.paused.clear()
                    messages_sent.notify()  # what waited on the queues is there to take
