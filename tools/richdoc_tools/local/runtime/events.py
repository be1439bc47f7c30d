"""Event delivery the emulation has to drive itself.

* ``SqsPoller`` is Lambda's SQS poller for one event source mapping: it receives batches
  with the mapping's batch size, invokes the function with the Lambda SQS event shape,
  deletes what succeeded, and leaves ``batchItemFailures`` (or the whole batch, if the
  function errored or was throttled) on the queue for redelivery; the queue's redrive policy moves
  messages past ``maxReceiveCount`` to the dead-letter queue, as on AWS.
* ``ExecutionStatusEvents`` publishes "Step Functions Execution Status Change" events for
  finished executions to the EventBridge rules of the stack and invokes their Lambda
  targets (moto neither emits these events nor delivers to Lambda targets).
* ``ScheduledRules`` fires the rules with a ``rate(...)`` schedule expression ("Scheduled
  Event" to their targets), every period, or when asked (``fire_all``, with any time).
* ``AsyncInvoker`` is how EventBridge invokes a Lambda target: asynchronously. A failed
  invocation is retried ``MaximumRetryAttempts`` times (the function's EventInvokeConfig;
  2 by default) and then recorded on its ``OnFailure`` destination queue (a throttle is
  no attempt: Lambda's queue keeps the event until the function has room); an event that
  cannot be delivered at all goes to the target's ``DeadLetterConfig`` queue. AWS waits
  about one and two minutes before the retries; here they follow at once, on the
  delivering thread, so the event has been fully handled when delivery returns.
* ``EventDelivery`` runs them all for a deployed stack, with a
  ``richdoc_tools.local.runtime.streams.StreamPoller`` for each DynamoDB stream event source.

The services act as AWS's do: the poller receives and deletes with the function's
execution role (Lambda's event source mapping uses it: the role needs
``sqs:ReceiveMessage``, ``DeleteMessage``, ``GetQueueAttributes``), and invokes as the
Lambda service; an asynchronous invocation's failure record is sent to the ``OnFailure``
queue with the function's role (which needs ``sqs:SendMessage`` there); EventBridge
invokes its targets and sends to a target's dead-letter queue as the service, unchecked
(resource-based policies are not evaluated: docs/embedded-stack.md).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from richdoc_tools.local.faults.injected import FaultInjector
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime import concurrency
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.loops import EventLoop, Signal
from richdoc_tools.local.runtime.s3_lifecycle import Lifecycle, LifecycleLoop
from richdoc_tools.local.runtime.shard_reader import ShardReader
from richdoc_tools.local.runtime.streams import StreamPoller

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_events.type_defs import RuleTypeDef, TargetOutputTypeDef
    from types_boto3_lambda import LambdaClient
    from types_boto3_lambda.type_defs import (
        EventSourceMappingConfigurationTypeDef,
        InvocationResponseTypeDef,
    )
    from types_boto3_sqs import SQSClient
    from types_boto3_sqs.type_defs import MessageTypeDef
    from types_boto3_stepfunctions import SFNClient
    from types_boto3_stepfunctions.literals import ExecutionStatusType

    from richdoc_tools.local.clients import Clients
    from richdoc_tools.local.strict.access import AccessControl

TERMINAL_STATUSES: tuple[ExecutionStatusType, ...] = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")

# Notified by the patch point that sees every SendMessage (patches.sqs_message_arrivals):
# the queues' pollers wake on it.
messages_sent = Signal()


class ExecutionEnds(Signal):
    """The executions that ended (as ARNs), for the status events' loop: notified when
    moto's interpreter ends one, or StopExecution aborts it (patches.stop_execution)."""

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


def lambda_sqs_record(message: MessageTypeDef, queue_arn: str, region: str) -> dict[str, Any]:
    """A received SQS message in the shape Lambda hands to functions."""
    attributes = message.get("Attributes", {})
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {
            key: attributes[key]
            for key in (
                "ApproximateReceiveCount",
                "SentTimestamp",
                "SenderId",
                "ApproximateFirstReceiveTimestamp",
            )
            if key in attributes
        },
        "messageAttributes": {
            name: {
                "stringValue": attr.get("StringValue"),
                "binaryValue": attr.get("BinaryValue"),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": attr["DataType"],
            }
            for name, attr in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


class SqsPoller(EventLoop):
    def __init__(
        self,
        *,
        sqs: SQSClient,
        lambda_client: LambdaClient,
        mapping: EventSourceMappingConfigurationTypeDef,
        queue_url: str,
        region: str,
        retry_visibility_s: int,
        role: callers.Principal | None = None,
    ) -> None:
        super().__init__(
            name=f"sqs-poller-{mapping['UUID'][:8]}", interval_s=1.0, wakes_on=messages_sent
        )
        self.role = callers.Caller(role)  # the function's execution role
        # Set: the mapping receives nothing, as when it is disabled (tests order
        # deliveries with it).
        self.paused = threading.Event()
        # Held while a receive and its batch are under way, so pausing waits for a receive
        # that had already looked at the flag (its messages are handled, not taken aside).
        self.receiving = threading.Lock()
        self.sqs = sqs
        self.lambda_client = lambda_client
        self.queue_url = queue_url
        self.region = region
        # On AWS a failed message stays invisible for the queue's visibility timeout;
        # locally that wait is shortened so retries happen within a run.
        self.retry_visibility_s = retry_visibility_s
        # When the messages this poller let go of are visible again (nothing is sent then:
        # the poller wakes for them itself).
        self.reappear_at: float | None = None
        self.configure(mapping)

    def configure(self, mapping: EventSourceMappingConfigurationTypeDef) -> None:
        """The mapping's settings (again after an UpdateEventSourceMapping)."""
        self.mapping = mapping
        self.partial = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])

    def idle_wait_s(self) -> float:
        if self.reappear_at is None:
            return self.interval_s
        left = self.reappear_at - time.monotonic()
        if left < 0:
            self.reappear_at = None  # looked once they were due: the interval from now on
        return min(self.interval_s, max(left, 0.0) + 0.01)

    def tick(self) -> bool:
        with self.receiving:
            if self.paused.is_set():
                return False
            return self._receive_and_handle()

    def _receive_and_handle(self) -> bool:
        with callers.acting_as(self.role):
            messages = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, int(self.mapping.get("BatchSize", 10))),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
        if not messages:
            return False
        event = {
            "Records": [
                lambda_sqs_record(m, self.mapping["EventSourceArn"], self.region) for m in messages
            ]
        }
        try:
            response = self.lambda_client.invoke(
                FunctionName=self.mapping["FunctionArn"], Payload=json.dumps(event).encode()
            )
        except ClientError as exc:
            if not concurrency.is_throttle(exc):
                raise
            # Throttled: as on AWS, the batch becomes visible again after the visibility
            # timeout, and the receive counted toward maxReceiveCount.
            errored, payload = True, None
        else:
            errored = "FunctionError" in response
            payload = json.loads(response["Payload"].read() or b"null")
        if errored:
            failed = {m["MessageId"] for m in messages}
        elif self.partial and isinstance(payload, dict):
            failed = {f["itemIdentifier"] for f in payload.get("batchItemFailures", [])}
        else:
            failed = set()
        for m in messages:
            if m["MessageId"] in failed:
                # Not a call Lambda makes (it lets the visibility timeout run out): the
                # emulation's shortcut, made as the service.
                self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=m["ReceiptHandle"],
                    VisibilityTimeout=self.retry_visibility_s,
                )
                self.reappear_at = time.monotonic() + self.retry_visibility_s
            else:
                with callers.acting_as(self.role):
                    self.sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"]
                    )
        return True


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _queue_url(sqs: SQSClient, queue_arn: str) -> str:
    return sqs.get_queue_url(QueueName=queue_arn.rsplit(":", 1)[1])["QueueUrl"]


class AsyncInvoker:
    def __init__(
        self,
        *,
        lambda_client: LambdaClient,
        sqs: SQSClient,
        roles: Mapping[str, callers.Principal] | None = None,
        access: AccessControl | None = None,
        injector: FaultInjector | None = None,
    ) -> None:
        self.lambda_client = lambda_client
        self.sqs = sqs
        self.roles = dict(roles or {})  # function ARN -> its execution role
        self.injector = injector or FaultInjector()

    def deliver(self, rule: RuleTypeDef, target: TargetOutputTypeDef, event: Any) -> None:
        """EventBridge's delivery of one event to one Lambda target of a rule."""
        payload = json.loads(target["Input"]) if "Input" in target else event
        try:
            self.invoke(target["Arn"], payload)
        except ClientError as exc:  # not delivered: the target's dead-letter queue
            queue = target.get("DeadLetterConfig", {}).get("Arn")
            if queue is None:
                raise
            error = exc.response.get("Error", {})
            self.sqs.send_message(
                QueueUrl=_queue_url(self.sqs, queue),
                MessageBody=json.dumps(event),
                MessageAttributes={
                    name: {"DataType": "String", "StringValue": str(value)}
                    for name, value in {
                        "RULE_ARN": rule["Arn"],
                        "TARGET_ARN": target["Arn"],
                        "ERROR_CODE": error.get("Code", "Unknown"),
                        "ERROR_MESSAGE": error.get("Message", "") or "-",
                    }.items()
                },
            )

    def invoke(self, function_arn: str, payload: Any) -> bool:
        """Invoke with Lambda's asynchronous retries; False when every attempt failed
        (and the failure was recorded on the OnFailure destination, if there is one)."""
        config = self._config(function_arn)
        attempts = 1 + int(config.get("MaximumRetryAttempts", 2))
        body = json.dumps(payload).encode()
        stage, key, _ = self.injector.work_of("async", payload)
        if self.injector.drops_async(f"{function_arn}:{stage}", key):
            return False  # lost in Lambda's event queue: no retry, no failure record
        for _ in range(attempts):
            response = self._invoke_once(function_arn, body)
            result = json.loads(response["Payload"].read() or b"null")
            if "FunctionError" not in response:
                return True
        destination = config.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
        if destination:
            # The invocation record Lambda sends to an OnFailure destination.
            record = {
                "version": "1.0",
                "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "requestContext": {
                    "requestId": str(uuid.uuid4()),
                    "functionArn": f"{function_arn}:$LATEST",
                    "condition": "RetriesExhausted",
                    "approximateInvokeCount": attempts,
                },
                "requestPayload": payload,
                "responseContext": {
                    "statusCode": 200,
                    "executedVersion": "$LATEST",
                    "functionError": "Unhandled",
                },
                "responsePayload": result,
            }
            queue_url = _queue_url(self.sqs, destination)  # Lambda knows it: no lookup
            with callers.acting_as(callers.Caller(self.roles.get(function_arn))):
                self.sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(record))
        return False

    def _invoke_once(self, function_arn: str, body: bytes) -> InvocationResponseTypeDef:
        """One attempt. A throttle is not one: Lambda's queue keeps the event and tries
        again (for up to six hours, not counted against MaximumRetryAttempts); here, as
        soon as the function has room again."""
        while True:
            seen = concurrency.room_made.count
            try:
                return self.lambda_client.invoke(FunctionName=function_arn, Payload=body)
            except ClientError as exc:
                if not concurrency.is_throttle(exc):
                    raise
            concurrency.room_made.wait_past(seen, concurrency.THROTTLED_WAIT_S)

    def _config(self, function_arn: str) -> Mapping[str, Any]:
        try:
            return self.lambda_client.get_function_event_invoke_config(FunctionName=function_arn)
        except self.lambda_client.exceptions.ResourceNotFoundException:
            return {}  # Lambda's defaults: two retries, no destination


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
            "time": _iso(at or datetime.now(UTC)),
            "region": self.region,
            "resources": [rule["Arn"]],
            "detail": {},
        }
        with self._firing:
            for target in self.events.list_targets_by_rule(Rule=rule["Name"])["Targets"]:
                if ":lambda:" in target["Arn"]:
                    self.invoker.deliver(rule, target, event)


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
            "time": _iso(datetime.now(UTC)),
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


class EventDelivery:
    """Every event loop of a deployed stack: one SQS poller per event source mapping the
    template enables, the execution status events of its state machine, and its scheduled
    rules (on their own schedule only with ``schedules``; ``fire_schedules`` fires them
    whenever asked)."""

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
            queue_url=_queue_url(sqs, mapping["EventSourceArn"]),
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


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return predicate()
