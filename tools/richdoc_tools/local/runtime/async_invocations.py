"""EventBridge's events delivered to Lambda targets: asynchronous invocations.

``AsyncInvoker`` is how EventBridge invokes a Lambda target: asynchronously. A failed
invocation is retried ``MaximumRetryAttempts`` times (the function's EventInvokeConfig; 2
by default) and then recorded on its ``OnFailure`` destination queue, sent with the
function's role (which needs ``sqs:SendMessage`` there); a throttle is no attempt: Lambda's
queue keeps the event until the function has room. An event that cannot be delivered at
all goes to the target's ``DeadLetterConfig`` queue, sent as EventBridge, unchecked
(resource-based policies are not evaluated: docs/embedded-stack.md). AWS waits about one
and two minutes before the retries; here they follow at once, on the delivering thread, so
the event has been fully handled when delivery returns.

The status events (``status_events``) and the schedules (``scheduled_events``) deliver
through it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from richdoc_tools.local.faults.injected import FaultInjector
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime import concurrency

if TYPE_CHECKING:
    from types_boto3_events.type_defs import RuleTypeDef, TargetOutputTypeDef
    from types_boto3_lambda import LambdaClient
    from types_boto3_lambda.type_defs import InvocationResponseTypeDef
    from types_boto3_sqs import SQSClient


def event_time(moment: datetime) -> str:
    """An EventBridge event's ``time``: UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def queue_url(sqs: SQSClient, queue_arn: str) -> str:
    return sqs.get_queue_url(QueueName=queue_arn.rsplit(":", 1)[1])["QueueUrl"]


class AsyncInvoker:
    def __init__(
        self,
        *,
        lambda_client: LambdaClient,
        sqs: SQSClient,
        roles: Mapping[str, callers.Principal] | None = None,
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
                QueueUrl=queue_url(self.sqs, queue),
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
            on_failure = queue_url(self.sqs, destination)  # Lambda knows it: no lookup
            with callers.acting_as(callers.Caller(self.roles.get(function_arn))):
                self.sqs.send_message(QueueUrl=on_failure, MessageBody=json.dumps(record))
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
