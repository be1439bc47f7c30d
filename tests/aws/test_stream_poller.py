"""Lambda's DynamoDB stream event source, as the embedded stack runs it
(richdoc_tools.local.runtime.streams): the mapping's filter, batch size, partial batch
failures, bisection, retries bounded by attempts or by record age (on the stack's clock),
and the OnFailure queue or bucket, against the emulation's real stream.

The function is a stand-in that answers as told, so every outcome is chosen by the test;
each ``tick`` is one poll of the stream, run here on the test's thread."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

import boto3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from richdoc_tools.local.patches import dynamodb_streams
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.shard_reader import ShardReader
from richdoc_tools.local.runtime.streams import StreamPoller, matches_any

from tests.support.aws import table_with_stream

REGION = "us-east-1"
Answer = Callable[[list[dict[str, Any]]], dict[str, Any] | None]


@dataclass
class StandInFunction:
    """Lambda's Invoke for one function: records each batch, answers with ``answer``
    (None: a function error, as when the handler raised)."""

    answer: Answer = field(default=lambda batch: {"batchItemFailures": []})
    batches: list[list[str]] = field(default_factory=list)  # the items' "n" per batch

    def invoke(self, FunctionName: str, Payload: bytes) -> dict[str, Any]:
        records = json.loads(Payload)["Records"]
        self.batches.append([r["dynamodb"]["NewImage"]["n"]["S"] for r in records])
        answer = self.answer(records)
        response: dict[str, Any] = {"StatusCode": 200}
        if answer is None:
            response["FunctionError"] = "Unhandled"
            answer = {"errorType": "RuntimeError", "errorMessage": "failed"}
        response["Payload"] = io.BytesIO(json.dumps(answer).encode())
        return response


@pytest.fixture
def stream(aws: None) -> Iterator[dict[str, Any]]:
    with contextlib.ExitStack() as exit_stack:
        dynamodb_streams.install(exit_stack)
        arn = table_with_stream()
        ddb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        queue = sqs.create_queue(QueueName="failures")["QueueUrl"]
        yield {"ddb": ddb, "sqs": sqs, "queue": queue, "arn": arn}


def write(stream: dict[str, Any], *items: tuple[str, str]) -> None:
    """Items (key, kind) in this order: each write is a record of the stream."""
    for key, kind in items:
        stream["ddb"].put_item(
            TableName="t", Item={"pk": {"S": key}, "kind": {"S": kind}, "n": {"S": key}}
        )


def poller(
    stream: dict[str, Any],
    function: StandInFunction,
    clock: StackClock | None = None,
    **mapping: Any,
) -> StreamPoller:
    config = {
        "UUID": "0123456789abcdef",
        "EventSourceArn": stream["arn"],
        "FunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:notifier",
        "BatchSize": 10,
        "StartingPosition": "TRIM_HORIZON",
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "DestinationConfig": {
            "OnFailure": {"Destination": "arn:aws:sqs:us-east-1:123456789012:failures"}
        },
        **mapping,
    }
    return StreamPoller(
        reader=ShardReader(stream["arn"]),
        lambda_client=cast(Any, function),
        sqs=stream["sqs"],
        mapping=cast(Any, config),
        s3=boto3.client("s3", region_name=REGION),
        clock=clock,
    )


def drain(p: StreamPoller, limit: int = 50) -> None:
    for _ in range(limit):
        if not p.tick():
            return
    raise AssertionError("the poller never ran out of records")


def parked(stream: dict[str, Any]) -> list[dict[str, Any]]:
    messages = stream["sqs"].receive_message(QueueUrl=stream["queue"], MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in messages.get("Messages", [])]


def test_records_go_in_order_in_batches_of_the_mappings_size(stream: dict[str, Any]) -> None:
    write(stream, *[(f"k{n}", "job") for n in range(5)])
    function = StandInFunction()
    drain(poller(stream, function, BatchSize=2))
    assert function.batches == [["k0", "k1"], ["k2", "k3"], ["k4"]]


def test_records_the_filter_does_not_match_never_reach_the_function(
    stream: dict[str, Any],
) -> None:
    write(stream, ("a", "attempt"), ("b", "job"), ("c", "attempt"), ("d", "job"))
    function = StandInFunction()
    pattern = {"dynamodb": {"NewImage": {"kind": {"S": ["job"]}}}}
    p = poller(stream, function, FilterCriteria={"Filters": [{"Pattern": json.dumps(pattern)}]})
    drain(p)
    assert function.batches == [["b", "d"]]
    write(stream, ("e", "attempt"))
    drain(p)
    assert function.batches == [["b", "d"]]  # passed over, not held for later


def test_a_partial_failure_retries_from_the_first_failed_record(stream: dict[str, Any]) -> None:
    write(stream, ("a", "job"), ("b", "job"), ("c", "job"))
    failing = {"b"}

    def answer(batch: list[dict[str, Any]]) -> dict[str, Any]:
        failed = [r for r in batch if r["dynamodb"]["NewImage"]["n"]["S"] in failing]
        failing.clear()  # the retry succeeds
        failures = [{"itemIdentifier": r["dynamodb"]["SequenceNumber"]} for r in failed]
        return {"batchItemFailures": failures}

    function = StandInFunction(answer)
    drain(poller(stream, function))
    assert function.batches == [["a", "b", "c"], ["b", "c"]]


def test_a_batch_that_keeps_failing_is_bisected_retried_then_parked(
    stream: dict[str, Any],
) -> None:
    """Only the poisoned record is parked, after its retries; the others are delivered and
    the records after it are not held up."""
    write(stream, ("a", "job"), ("b", "job"), ("poison", "job"), ("d", "job"))

    def answer(batch: list[dict[str, Any]]) -> dict[str, Any] | None:
        keys = [r["dynamodb"]["NewImage"]["n"]["S"] for r in batch]
        return None if "poison" in keys else {"batchItemFailures": []}

    function = StandInFunction(answer)
    p = poller(stream, function, BisectBatchOnFunctionError=True, MaximumRetryAttempts=2)
    drain(p)
    assert function.batches == [
        ["a", "b", "poison", "d"],  # fails whole: bisected
        ["a", "b"],
        ["poison", "d"],  # fails: bisected again
        ["poison"],  # alone: retried twice, then parked
        ["poison"],
        ["poison"],
        ["d"],
    ]
    [record] = parked(stream)
    info = record["DDBStreamBatchInfo"]
    assert (info["batchSize"], info["streamArn"]) == (1, stream["arn"])
    assert info["startSequenceNumber"] == info["endSequenceNumber"]
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"


def test_without_bisection_a_failing_batch_is_parked_whole(stream: dict[str, Any]) -> None:
    write(stream, ("a", "job"), ("b", "job"))
    function = StandInFunction(lambda batch: None)
    drain(poller(stream, function, MaximumRetryAttempts=1))
    assert function.batches == [["a", "b"], ["a", "b"]]
    [record] = parked(stream)
    assert record["DDBStreamBatchInfo"]["batchSize"] == 2


def test_without_an_attempt_limit_a_failing_batch_is_retried_until_it_is_too_old(
    stream: dict[str, Any],
) -> None:
    """MaximumRetryAttempts -1 and MaximumRecordAgeInSeconds: an outage of any number of
    attempts is waited out; a record older than the age is written whole to the S3
    destination (the invocation's payload with it), and the poller moves on."""
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="notify-failures")
    write(stream, ("a", "job"), ("b", "job"))
    outage = {"on": True}
    function = StandInFunction(lambda batch: None if outage["on"] else {"batchItemFailures": []})
    clock = StackClock()
    p = poller(
        stream,
        function,
        clock,
        MaximumRetryAttempts=-1,
        MaximumRecordAgeInSeconds=3600,
        DestinationConfig={"OnFailure": {"Destination": "arn:aws:s3:::notify-failures"}},
    )
    for _ in range(40):  # far past the old limit of 10 attempts
        assert p.tick()
    assert parked(stream) == [] and s3.list_objects_v2(Bucket="notify-failures")["KeyCount"] == 0
    outage["on"] = False
    drain(p)
    assert function.batches[-1] == ["a", "b"] and p.delivered == 2  # recovered: delivered

    write(stream, ("c", "job"))
    outage["on"] = True
    assert p.tick()  # fails, retried ...
    clock.advance(timedelta(hours=2))
    assert p.tick()  # ... until the record is older than the mapping allows: parked
    [listed] = s3.list_objects_v2(Bucket="notify-failures")["Contents"]
    assert listed["Key"].startswith("aws/lambda/0123456789abcdef/shardId-")
    record = json.loads(s3.get_object(Bucket="notify-failures", Key=listed["Key"])["Body"].read())
    assert record["requestContext"]["condition"] == "RecordAgeExceeded"
    assert record["DDBStreamBatchInfo"]["batchSize"] == 1
    [change] = json.loads(record["payload"])["Records"]
    assert change["dynamodb"]["NewImage"]["n"] == {"S": "c"}  # the whole record, images too
    assert not p.tick()  # moved past it


def test_a_throttled_batch_is_tried_again_whole_and_counts_no_retry(
    stream: dict[str, Any],
) -> None:
    """A throttle is not a function error: no bisection, no retry spent, nothing parked."""
    from botocore.exceptions import ClientError

    write(stream, ("a", "job"), ("b", "job"))
    throttles = 3

    class Throttled(StandInFunction):
        def invoke(self, FunctionName: str, Payload: bytes) -> dict[str, Any]:
            nonlocal throttles
            if throttles:
                throttles -= 1
                error = {"Code": "TooManyRequestsException", "Message": "Rate Exceeded."}
                raise ClientError(cast(Any, {"Error": error}), "Invoke")
            return super().invoke(FunctionName, Payload)

    function = Throttled()
    drain(
        poller(
            stream, function, StackClock(), BisectBatchOnFunctionError=True, MaximumRetryAttempts=0
        )
    )
    assert throttles == 0
    assert function.batches == [["a", "b"]]
    assert parked(stream) == []


# ---- the filter, against moto's matching -------------------------------------------------

_texts = st.sampled_from(["JOB", "ATTEMPT#1", "SUCCEEDED", "QUEUED", "a.b", ""])
_values = st.one_of(
    _texts.map(lambda s: {"S": s}),
    st.integers(-3, 3).map(lambda n: {"N": str(n)}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
)
_images = st.dictionaries(st.sampled_from(["job_status", "slots", "backlog_key", "x"]), _values)
_records = st.fixed_dictionaries(
    {
        "eventName": st.sampled_from(["INSERT", "MODIFY", "REMOVE"]),
        "dynamodb": st.fixed_dictionaries(
            {"Keys": st.fixed_dictionaries({"sk": _texts.map(lambda s: {"S": s})})},
            optional={"NewImage": _images, "OldImage": _images},
        ),
    }
)
_filters = st.one_of(
    st.lists(st.one_of(_texts, st.integers(-3, 3).map(str), st.booleans()), min_size=1),
    st.booleans().map(lambda b: [{"exists": b}]),
    _texts.map(lambda s: [{"prefix": s}]),
    _texts.map(lambda s: [{"anything-but": [s]}]),
)
_paths = st.sampled_from(
    [
        ("eventName",),
        ("dynamodb", "Keys", "sk", "S"),
        ("dynamodb", "NewImage", "job_status", "S"),
        ("dynamodb", "NewImage", "slots", "N"),
        ("dynamodb", "NewImage", "backlog_key"),
        ("dynamodb", "OldImage", "x", "BOOL"),
    ]
)


def _pattern(conditions: list[tuple[tuple[str, ...], list[Any]]]) -> dict[str, Any]:
    pattern: dict[str, Any] = {}
    for path, condition in conditions:
        node = pattern
        for name in path[:-1]:
            node = node.setdefault(name, {})
            if not isinstance(node, dict):
                break
        else:
            node[path[-1]] = condition
    return pattern


_patterns = st.lists(st.tuples(_paths, _filters), min_size=0, max_size=3).map(_pattern)


@settings(max_examples=300, deadline=None)
@given(
    records=st.lists(_records, min_size=1, max_size=4),
    patterns=st.lists(_patterns, min_size=1, max_size=3),
)
def test_the_filter_decides_as_motos_event_patterns_do(
    records: list[dict[str, Any]], patterns: list[dict[str, Any]]
) -> None:
    from moto.events.models import EventPattern

    loaded = [EventPattern.load(json.dumps(p)) for p in patterns]
    for record in records:
        expected = any(p.matches_event(cast(Any, record)) for p in loaded)
        assert matches_any(loaded, record) == expected
