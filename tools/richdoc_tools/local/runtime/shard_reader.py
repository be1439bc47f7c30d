"""Reading a DynamoDB stream's shard from inside Lambda, as an event source mapping does.

Lambda's pollers are part of the service: no client of the account sees their reads,
only the execution role's permissions decide them. The emulation's poller
(``runtime.streams``) reads the shard moto keeps in this process, after the same checks
a GetRecords request through the stack's gate gets: the function's role must allow
``dynamodb:DescribeStream`` (the first read, for the shard's id), ``GetShardIterator`` and
``GetRecords`` on the stream's ARN, and a denial is DynamoDB's ``AccessDeniedException``
with IAM's message, recorded with the stack's other denials. Reading through the API
instead had every record, both images, serialized by moto and parsed again by botocore,
for each of the two pollers on every read: a third of the stack's CPU (bench item 5).

The records come in the shape Lambda's event carries them (``wire``): what GetRecords
answers, with the creation time as epoch seconds and binary values in base64; each is
made once and shared by the stream's pollers, which copy what they change. The canary
(``tests/aws/canaries/test_shard_reader.py``) compares them with GetRecords' answer.
"""

from __future__ import annotations

import base64
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from richdoc_tools.local.emulation import DYNAMODB_LOCK
from richdoc_tools.local.strict.access import DENIALS

if TYPE_CHECKING:
    from moto.dynamodb.models.table import StreamRecord, StreamShard

    from richdoc_tools.local.requests.callers import Principal
    from richdoc_tools.local.strict.access import AccessControl

# GetRecords' limit: at most this many records a read.
MAX_RECORDS = 1000


class ShardReader:
    """The one shard of a table's stream (moto keeps one), read in order."""

    def __init__(
        self,
        stream_arn: str,
        *,
        role: Principal | None = None,
        access: AccessControl | None = None,
    ) -> None:
        """``role`` reads the stream when ``access`` (a strict stack's) decides requests;
        without either, reads are not checked, as an operator's requests are not."""
        self.stream_arn = stream_arn
        self.role = role
        self.access = access
        # arn:aws:dynamodb:<region>:<account>:table/<table>/stream/<label>
        _, _, _, self.region, self.account, resource = stream_arn.split(":", 5)
        self.table_name = resource.split("/")[1]
        self._shard_id: str | None = None

    def shard_id(self) -> str:
        if self._shard_id is None:
            self._check("DescribeStream")
            self._shard_id = str(self._shard().id)
        return self._shard_id

    def records_after(self, sequence: int | None, limit: int = MAX_RECORDS) -> list[dict[str, Any]]:
        """At most ``limit`` records after record ``sequence`` (None: from the shard's
        first), in order, as Lambda's event carries them."""
        self.shard_id()
        self._check("GetShardIterator")
        self._check("GetRecords")
        shard = self._shard()
        after = -1 if sequence is None else sequence - shard.starting_sequence_number
        start = max(0, after + 1)
        # Under the backend's lock: a transaction appends its writes' records and, when it
        # is cancelled, drops them again inside its request (AWS never shows them).
        with DYNAMODB_LOCK:
            items = shard.items[start : start + limit]
        return [_wire_of(item) for item in items]

    def last_sequence(self) -> int | None:
        """The sequence number of the shard's last record (None: it has none yet)."""
        self.shard_id()
        shard = self._shard()
        with DYNAMODB_LOCK:
            count = len(shard.items)
        return shard.starting_sequence_number + count - 1 if count else None

    def _shard(self) -> StreamShard:
        from moto.dynamodb.models import dynamodb_backends

        table = dynamodb_backends[self.account][self.region].get_table(self.table_name)
        if table.stream_shard is None:
            message = f"Requested resource not found: Stream: {self.stream_arn} not found"
            error = {"Error": {"Code": "ResourceNotFoundException", "Message": message}}
            raise ClientError(cast(Any, error), "GetRecords")
        return table.stream_shard

    def _check(self, operation: str) -> None:
        if self.access is None or self.role is None:
            return
        message = self.access.denial(self.role, f"dynamodb:{operation}", self.stream_arn)
        if message is not None:
            status, code = DENIALS["dynamodb"]
            error = {
                "Error": {"Code": code, "Message": message},
                "ResponseMetadata": {"HTTPStatusCode": status},
            }
            raise ClientError(cast(Any, error), operation)


# Each record's wire form, made once for every poller of the stream (records never change).
_wired: weakref.WeakKeyDictionary[StreamRecord, dict[str, Any]] = weakref.WeakKeyDictionary()


def _wire_of(item: StreamRecord) -> dict[str, Any]:
    """The wire form of moto's ``StreamRecord``; callers copy what they change."""
    found = _wired.get(item)
    if found is None:
        found = _wired[item] = wire(item.record)
    return found


def wire(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record as GetRecords answers it and Lambda's event carries it: the members in
    the API's order, the creation time in epoch seconds to the millisecond, binary
    values in base64."""
    stream = record["dynamodb"]
    created: datetime = stream["ApproximateCreationDateTime"]
    created = created.replace(microsecond=created.microsecond // 1000 * 1000, tzinfo=UTC)
    dynamodb: dict[str, Any] = {"ApproximateCreationDateTime": created.timestamp()}
    for member in ("Keys", "NewImage", "OldImage"):
        if member in stream:
            dynamodb[member] = _attributes(stream[member])
    dynamodb["SequenceNumber"] = stream["SequenceNumber"]
    dynamodb["SizeBytes"] = stream["SizeBytes"]
    dynamodb["StreamViewType"] = stream["StreamViewType"]
    return {
        "eventID": record["eventID"],
        "eventName": record["eventName"],
        "eventVersion": record["eventVersion"],
        "eventSource": record["eventSource"],
        "awsRegion": record["awsRegion"],
        "dynamodb": dynamodb,
    }


def _attributes(image: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _value(value) for name, value in image.items()}


def _value(value: Mapping[str, Any]) -> dict[str, Any]:
    [(kind, inner)] = value.items()
    if kind == "B":
        return {kind: _base64(inner)}
    if kind == "BS":
        return {kind: [_base64(b) for b in inner]}
    if kind == "M":
        return {kind: {name: _value(v) for name, v in inner.items()}}
    if kind == "L":
        return {kind: [_value(v) for v in inner]}
    return {kind: inner}


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode()
