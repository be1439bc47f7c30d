"""Lambda's SQS event source: a queue's messages delivered to its function.

``SqsPoller`` is Lambda's poller for one SQS event source mapping: it receives batches
with the mapping's batch size, invokes the function with the Lambda SQS event shape,
deletes what succeeded, and leaves ``batchItemFailures`` (or the whole batch, if the
function errored or was throttled) on the queue for redelivery; the queue's redrive
policy moves messages past ``maxReceiveCount`` to the dead-letter queue, as on AWS.

It receives and deletes with the function's execution role, as Lambda's event source
mapping does (the role needs ``sqs:ReceiveMessage``, ``DeleteMessage``,
``GetQueueAttributes``), and invokes as the Lambda service. It sleeps until a message is
sent (``messages_sent``) or the messages it let go of are visible again.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime import concurrency
from richdoc_tools.local.runtime.loops import EventLoop, Signal

if TYPE_CHECKING:
    from types_boto3_lambda import LambdaClient
    from types_boto3_lambda.type_defs import EventSourceMappingConfigurationTypeDef
    from types_boto3_sqs import SQSClient
    from types_boto3_sqs.type_defs import MessageTypeDef

# Notified by the patch point that sees every message arrive on a queue
# (patches.sqs_message_arrivals): the queues' pollers wake on it.
messages_sent = Signal()


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
