"""Lambda's poller for a DynamoDB stream event source mapping, as the embedded stack runs it.

``StreamPoller`` reads the stream's shard in order with the function's execution role, as
Lambda's event source mapping does (the role needs ``dynamodb:DescribeStream``,
``GetShardIterator``, ``GetRecords``: ``runtime.shard_reader``), and keeps the mapping's
promises:

* records that do not match the mapping's ``FilterCriteria`` are passed over (Lambda
  discards them: they never reach the function and are not retried);
* a batch holds at most ``BatchSize`` records, in stream order, in Lambda's DynamoDB event
  shape (with ``eventSourceARN``);
* with ``ReportBatchItemFailures``, the records before the first reported failure are
  done; a function error fails the whole batch;
* a failed batch is split in two while ``BisectBatchOnFunctionError`` allows (its halves
  are retried without counting a retry), otherwise retried, at most
  ``MaximumRetryAttempts`` times (-1: no limit) and while its oldest record is no older
  than ``MaximumRecordAgeInSeconds`` (-1: until the record expires, which the
  emulation's stream never does), its age read on the stack's clock
  (``runtime.clock``: tests move it forward); then Lambda's batch record
  (``DDBStreamBatchInfo``, the condition that ended the retries) goes to the
  ``OnFailure`` destination with the function's role, and the poller moves past the
  batch. A queue destination gets the record alone (an SNS topic, which gets the same
  on AWS, is not emulated); an S3 bucket gets it with the whole invocation's payload
  (``payload``: the records, images and all), as an object under
  ``aws/lambda/<mapping UUID>/<shard id>/YYYY/MM/DD/``.

A throttled invocation (the function at its reserved concurrency) is not a function
error: the batch is tried again, unsplit and uncounted, once the function has room
(``concurrency.room_made``).

Lambda waits between retries; here the poller waits ``retry_wait_s`` (the stack's scaled
pause). The poller sleeps until a record is appended to a stream (``appended``, which
``patches.dynamodb_streams`` notifies) or a retry is due, rather than polling.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime import concurrency
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.loops import EventLoop, Signal
from richdoc_tools.local.runtime.shard_reader import ShardReader

if TYPE_CHECKING:
    from moto.events.models import EventPattern
    from types_boto3_lambda import LambdaClient
    from types_boto3_lambda.type_defs import EventSourceMappingConfigurationTypeDef
    from types_boto3_s3 import S3Client
    from types_boto3_sqs import SQSClient


# Notified by the patch point that keeps stream records (patches.dynamodb_streams).
appended = Signal()


def _sequence(record: Mapping[str, Any]) -> int:
    return int(record["dynamodb"]["SequenceNumber"])


class StreamPoller(EventLoop):
    def __init__(
        self,
        *,
        reader: ShardReader,
        lambda_client: LambdaClient,
        sqs: SQSClient,
        mapping: EventSourceMappingConfigurationTypeDef,
        role: callers.Principal | None = None,
        s3: S3Client | None = None,
        clock: StackClock | None = None,
        retry_wait_s: float = 0.0,
    ) -> None:
        super().__init__(
            name=f"stream-poller-{mapping['UUID'][:8]}", interval_s=1.0, wakes_on=appended
        )
        self.role = callers.Caller(role)  # the function's execution role
        self.reader = reader
        self.lambda_client = lambda_client
        self.sqs = sqs
        self.s3 = s3
        self.clock = clock or StackClock()
        self.retry_wait_s = retry_wait_s
        self.retry_at = 0.0  # monotonic time before which a failed batch is not retried
        self.stream_arn = mapping["EventSourceArn"]
        self.configure(mapping)
        # The last record handled (or passed over); None: read from the stream's start
        # (StartingPosition TRIM_HORIZON; LATEST is taken when the poller starts).
        self.checkpoint: int | None = None
        self.retries = 0
        self.delivered = 0  # records the function handled: tests await it
        self.drained = False  # its last read found nothing after the checkpoint

    def configure(self, mapping: EventSourceMappingConfigurationTypeDef) -> None:
        """The mapping's settings (again after an UpdateEventSourceMapping: the poller
        goes on from its checkpoint, as Lambda's does)."""
        from moto.events.models import EventPattern

        self.mapping = mapping
        self.batch_size = int(mapping.get("BatchSize", 100))
        self.max_retries = int(mapping.get("MaximumRetryAttempts", -1))
        self.max_age_s = int(mapping.get("MaximumRecordAgeInSeconds", -1))
        self.bisect = bool(mapping.get("BisectBatchOnFunctionError", False))
        self.partial = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        filters = mapping.get("FilterCriteria", {}).get("Filters", [])
        self.patterns = [EventPattern.load(f["Pattern"]) for f in filters if "Pattern" in f]
        on_failure = mapping.get("DestinationConfig", {}).get("OnFailure", {})
        self.on_failure = on_failure.get("Destination")
        self.limit = self.batch_size  # smaller while a failing batch is bisected

    def run(self) -> None:
        if self.mapping.get("StartingPosition") == "LATEST":
            self.checkpoint = self._latest()
        super().run()

    def look(self) -> None:
        self.drained = False  # first: caught_up() must not pair the new count with it
        super().look()

    def idle_wait_s(self) -> float:
        left = self.retry_at - time.monotonic()
        return min(self.interval_s, left + 0.01) if left > 0 else self.interval_s

    def tick(self) -> bool:
        if time.monotonic() < self.retry_at:
            return False  # a failed batch waits for its retry (not drained: not caught up)
        records = self._read()
        self.drained = not records
        wanted = self._wanted(records)
        if not wanted:
            if records:
                self.checkpoint = _sequence(records[-1])
            return bool(records)
        # Skip the filtered-out records before the first wanted one.
        skipped_to = _sequence(wanted[0]) - 1
        if self.checkpoint is None or skipped_to > self.checkpoint:
            self.checkpoint = skipped_to
        batch = wanted[: self.limit]
        seen = concurrency.room_made.count
        try:
            failed_at = self._invoke(batch)
        except ClientError as exc:
            if not concurrency.is_throttle(exc):
                raise
            # Throttled: not a function error (no bisection, no retry counted); the shard
            # waits for the function to have room and the batch is tried again.
            concurrency.room_made.wait_past(seen, concurrency.THROTTLED_WAIT_S)
            return True
        if failed_at is None:
            self._done(batch)
            return True
        self._done(batch[:failed_at])
        failing = batch[failed_at:]
        if self.bisect and len(failing) > 1:
            self.limit = max(1, len(failing) // 2)
        else:
            self.retries += 1
            if 0 <= self.max_retries < self.retries:
                self._give_up(failing, "RetryAttemptsExhausted")
            elif 0 <= self.max_age_s < self._age_s(failing[0]):
                self._give_up(failing, "RecordAgeExceeded")
            else:
                self.retry_at = time.monotonic() + self.retry_wait_s
        return True

    def _age_s(self, record: Mapping[str, Any]) -> float:
        created = datetime.fromtimestamp(record["dynamodb"]["ApproximateCreationDateTime"], UTC)
        return (self.clock.now() - created).total_seconds()

    # ---- reading ----------------------------------------------------------------------

    def _read(self) -> list[dict[str, Any]]:
        """The records after the checkpoint, as many as a full batch could use."""
        return self.reader.records_after(self.checkpoint)

    def _latest(self) -> int | None:
        records = self._read()
        return _sequence(records[-1]) if records else self.checkpoint

    def _wanted(self, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records the filter lets through, up to a batch: those after it are read
        again once the batch is done, and looked at then."""
        wanted = []
        for record in records:
            if self._matches(record):
                wanted.append(record)
                if len(wanted) == self.limit:
                    break
        return wanted

    def _matches(self, record: Mapping[str, Any]) -> bool:
        return not self.patterns or matches_any(self.patterns, record)

    def caught_up(self) -> bool:
        """Every record written so far has been handled (or passed over, or parked)."""
        return self.drained and self.seen == appended.count

    # ---- handling ---------------------------------------------------------------------

    def _event(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {"Records": [{**r, "eventSourceARN": self.stream_arn} for r in batch]}

    def _invoke(self, batch: Sequence[Mapping[str, Any]]) -> int | None:
        """Where the batch failed (the index of its first failed record); None: it did not."""
        payload = json.dumps(self._event(batch)).encode()
        response = self.lambda_client.invoke(
            FunctionName=self.mapping["FunctionArn"], Payload=payload
        )
        answer = json.loads(response["Payload"].read() or b"null")
        if "FunctionError" in response:
            return 0
        if not (self.partial and isinstance(answer, dict)):
            return None
        failed = {str(f.get("itemIdentifier")) for f in answer.get("batchItemFailures", [])}
        for index, record in enumerate(batch):
            if record["dynamodb"]["SequenceNumber"] in failed:
                return index
        return None

    def _done(self, records: Sequence[Mapping[str, Any]]) -> None:
        if not records:
            return
        self.checkpoint = _sequence(records[-1])
        self.delivered += len(records)
        self.retries = 0
        self.limit = self.batch_size

    def _give_up(self, batch: Sequence[Mapping[str, Any]], condition: str) -> None:
        """Lambda's record of a batch it stopped retrying, to the OnFailure destination."""
        if self.on_failure:
            first, last = batch[0], batch[-1]
            record: dict[str, Any] = {
                "version": "1.0",
                "timestamp": self.clock.now().isoformat(timespec="milliseconds"),
                "requestContext": {
                    "requestId": str(uuid.uuid4()),
                    "functionArn": self.mapping["FunctionArn"],
                    "condition": condition,
                    "approximateInvokeCount": self.retries,
                },
                "responseContext": {
                    "statusCode": 200,
                    "executedVersion": "$LATEST",
                    "functionError": "Unhandled",
                },
                "DDBStreamBatchInfo": {
                    "shardId": self.reader.shard_id(),
                    "startSequenceNumber": first["dynamodb"]["SequenceNumber"],
                    "endSequenceNumber": last["dynamodb"]["SequenceNumber"],
                    "approximateArrivalOfFirstRecord": first["dynamodb"][
                        "ApproximateCreationDateTime"
                    ],
                    "approximateArrivalOfLastRecord": last["dynamodb"][
                        "ApproximateCreationDateTime"
                    ],
                    "batchSize": len(batch),
                    "streamArn": self.stream_arn,
                },
            }
            if self.on_failure.startswith("arn:aws:s3:::"):
                self._record_in_bucket(self.on_failure, record, batch)
            else:
                queue_url = self.sqs.get_queue_url(QueueName=self.on_failure.rsplit(":", 1)[1])
                with callers.acting_as(self.role):
                    self.sqs.send_message(
                        QueueUrl=queue_url["QueueUrl"], MessageBody=json.dumps(record)
                    )
        self.checkpoint = _sequence(batch[-1])
        self.retries = 0
        self.limit = self.batch_size

    def _record_in_bucket(
        self, destination: str, record: dict[str, Any], batch: Sequence[Mapping[str, Any]]
    ) -> None:
        """An S3 destination keeps the whole invocation: the record and its payload."""
        assert self.s3 is not None, "an S3 OnFailure destination needs the poller's S3 client"
        bucket = destination.removeprefix("arn:aws:s3:::")
        now = self.clock.now()
        key = (
            f"aws/lambda/{self.mapping['UUID']}/{self.reader.shard_id()}/{now:%Y/%m/%d}/"
            f"{now:%Y-%m-%dT%H.%M.%S}-{uuid.uuid4()}"
        )
        whole = {**record, "payload": json.dumps(self._event(batch))}
        with callers.acting_as(self.role):
            self.s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(whole).encode())


def matches_any(patterns: Sequence[EventPattern], record: Mapping[str, Any]) -> bool:
    """Whether any of the filter's patterns matches the record: moto's
    ``EventPattern.matches_event`` for each, less its JSON round trip (the reader's records
    are JSON already, so the trip changes nothing: it was most of the poller's cost) and
    with the record flattened once for all of them."""
    from moto.events.models import EventPattern

    flat = EventPattern._flatten_dict(dict(record))
    return any(not p._pattern or p._does_event_match(flat, p._pattern) for p in patterns)
