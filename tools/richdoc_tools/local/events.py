"""Event delivery the emulation has to drive itself.

* ``SqsPoller`` is Lambda's SQS poller for one event source mapping: it receives batches
  with the mapping's batch size, invokes the function with the Lambda SQS event shape,
  deletes what succeeded, and leaves ``batchItemFailures`` (or the whole batch, if the
  function errored) on the queue for redelivery; the queue's redrive policy moves
  messages past ``maxReceiveCount`` to the dead-letter queue, as on AWS.
* ``ExecutionStatusEvents`` publishes "Step Functions Execution Status Change" events for
  finished executions to the EventBridge rules of the stack and invokes their Lambda
  targets (moto neither emits these events nor delivers to Lambda targets).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

TERMINAL_STATUSES = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


class _Loop(threading.Thread):
    def __init__(self, name: str, interval_s: float) -> None:
        super().__init__(name=name, daemon=True)
        self.interval_s = interval_s
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                busy = self.tick()
            except Exception as exc:  # keep delivering; surface the error to the stack
                self.errors.append(exc)
                busy = False
            if not busy:
                self.stopping.wait(self.interval_s)

    def tick(self) -> bool:
        raise NotImplementedError


def lambda_sqs_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
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


class SqsPoller(_Loop):
    def __init__(
        self,
        *,
        sqs: Any,
        lambda_client: Any,
        mapping: dict[str, Any],
        queue_url: str,
        region: str,
        retry_visibility_s: int,
    ) -> None:
        super().__init__(name=f"sqs-poller-{mapping['UUID'][:8]}", interval_s=0.05)
        self.sqs = sqs
        self.lambda_client = lambda_client
        self.mapping = mapping
        self.queue_url = queue_url
        self.region = region
        # On AWS a failed message stays invisible for the queue's visibility timeout;
        # locally that wait is shortened so retries happen within a run.
        self.retry_visibility_s = retry_visibility_s
        self.partial = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])

    def tick(self) -> bool:
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
        response = self.lambda_client.invoke(
            FunctionName=self.mapping["FunctionArn"], Payload=json.dumps(event).encode()
        )
        payload = json.loads(response["Payload"].read() or b"null")
        if "FunctionError" in response:
            failed = {m["MessageId"] for m in messages}
        elif self.partial and isinstance(payload, dict):
            failed = {f["itemIdentifier"] for f in payload.get("batchItemFailures", [])}
        else:
            failed = set()
        for m in messages:
            if m["MessageId"] in failed:
                self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=m["ReceiptHandle"],
                    VisibilityTimeout=self.retry_visibility_s,
                )
            else:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        return True


class ExecutionStatusEvents(_Loop):
    def __init__(
        self,
        *,
        sfn: Any,
        events: Any,
        lambda_client: Any,
        state_machine_arn: str,
        region: str,
        account: str,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(name="sfn-status-events", interval_s=0.2)
        self.sfn = sfn
        self.events = events
        self.lambda_client = lambda_client
        self.state_machine_arn = state_machine_arn
        self.region = region
        self.account = account
        self.on_event = on_event
        self.seen: set[str] = set()

    def tick(self) -> bool:
        from moto.events.models import EventPattern

        rules = [
            (rule, EventPattern.load(rule["EventPattern"]))
            for rule in self.events.list_rules()["Rules"]
            if rule.get("State") == "ENABLED" and "EventPattern" in rule
        ]
        delivered = False
        paginator = self.sfn.get_paginator("list_executions")
        for status in self._statuses_to_list(rules):
            pages = paginator.paginate(stateMachineArn=self.state_machine_arn, statusFilter=status)
            for page in pages:
                for summary in page["executions"]:
                    arn = summary["executionArn"]
                    if arn in self.seen:
                        continue
                    self.seen.add(arn)
                    event = self._status_event(arn)
                    for rule, pattern in rules:
                        if not pattern.matches_event(event):  # type: ignore[arg-type]
                            continue
                        targets = self.events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
                        for target in targets:
                            if ":lambda:" in target["Arn"]:
                                self.lambda_client.invoke(
                                    FunctionName=target["Arn"], Payload=json.dumps(event).encode()
                                )
                                delivered = True
                    if self.on_event:
                        self.on_event(event)
        return delivered

    def _statuses_to_list(self, rules: list[tuple[dict[str, Any], Any]]) -> list[str]:
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

    def _status_event(self, execution_arn: str) -> dict[str, Any]:
        execution = self.sfn.describe_execution(executionArn=execution_arn)

        def millis(value: Any) -> int | None:
            return int(value.timestamp() * 1000) if value else None

        return {
            "version": "0",
            "id": execution_arn.rsplit(":", 1)[-1],
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": self.account,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": self.region,
            "resources": [execution_arn],
            "detail": {
                "executionArn": execution_arn,
                "stateMachineArn": self.state_machine_arn,
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


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return predicate()
