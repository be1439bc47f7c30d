"""Canary for runtime.shard_reader: the stream poller reads moto's shard in process
(``StreamShard.items``, each ``StreamRecord.record``), so its records must be what
GetRecords answers, in the shape Lambda's event carries them, and a role that may not
read the stream must be refused as a GetRecords request would be."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.clients import CLIENT_CONFIG, Clients
from richdoc_tools.local.runtime.shard_reader import ShardReader
from richdoc_tools.local.strict.access import AccessControl

from tests.support.aws import table_with_stream

REGION = "us-east-1"
ACCOUNT = "123456789012"


@pytest.fixture
def stream(aws: None) -> str:
    """A stream whose records cover every attribute type and event name."""
    arn = table_with_stream()
    ddb = boto3.client("dynamodb", region_name=REGION)
    ddb.put_item(
        TableName="t",
        Item={
            "pk": {"S": "a"},
            "text": {"S": "snow ☃ and <b>"},
            "number": {"N": "1.50"},
            "blob": {"B": b"\x00\xff"},
            "blobs": {"BS": [b"x", b"\x01"]},
            "numbers": {"NS": ["1", "2.5"]},
            "texts": {"SS": ["p", "q"]},
            "list": {"L": [{"NULL": True}, {"BOOL": False}, {"B": b"\x02"}]},
            "map": {"M": {"inner": {"M": {"bytes": {"B": b"\x03"}, "n": {"N": "7"}}}}},
        },
    )
    ddb.put_item(TableName="t", Item={"pk": {"S": "a"}, "text": {"S": "changed"}})
    ddb.put_item(TableName="t", Item={"pk": {"S": "b"}, "flag": {"BOOL": True}})
    ddb.delete_item(TableName="t", Key={"pk": {"S": "a"}})
    return arn


def get_records(arn: str, after: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
    streams = boto3.client("dynamodbstreams", region_name=REGION, config=CLIENT_CONFIG)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    position: dict[str, Any] = (
        {"ShardIteratorType": "TRIM_HORIZON"}
        if after is None
        else {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after}
    )
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, **position)
    answer = streams.get_records(ShardIterator=iterator["ShardIterator"], Limit=limit)
    return [dict(record) for record in answer["Records"]]


def as_lambda_sends(value: Any) -> Any:
    """botocore's parse of a record as Lambda's JSON event carries it: times as epoch
    seconds, binary values in base64."""
    if isinstance(value, dict):
        return {key: as_lambda_sends(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [as_lambda_sends(inner) for inner in value]
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def test_the_records_are_get_records_answer_as_lambdas_event_carries_them(stream: str) -> None:
    read = ShardReader(stream).records_after(None)
    expected = [as_lambda_sends(record) for record in get_records(stream)]
    assert [r["eventName"] for r in read] == ["INSERT", "MODIFY", "INSERT", "REMOVE"]
    assert read == expected
    # Member for member in the API's order, and JSON as it is (no value needs a default).
    assert json.dumps(read) == json.dumps(expected)


def test_a_read_goes_on_after_the_sequence_number_it_is_given_up_to_its_limit(
    stream: str,
) -> None:
    reader = ShardReader(stream)
    first = reader.records_after(None)[0]["dynamodb"]["SequenceNumber"]
    read = reader.records_after(int(first), limit=2)
    assert read == [as_lambda_sends(r) for r in get_records(stream, after=first, limit=2)]
    last = reader.records_after(None)[-1]["dynamodb"]["SequenceNumber"]
    assert reader.records_after(int(last)) == []


def test_the_last_sequence_is_the_last_record_s_and_none_for_an_empty_shard(
    stream: str,
) -> None:
    last = get_records(stream)[-1]["dynamodb"]["SequenceNumber"]
    assert ShardReader(stream).last_sequence() == int(last)
    assert ShardReader(table_with_stream("empty")).last_sequence() is None


def test_the_shard_is_the_one_describe_stream_names(stream: str) -> None:
    streams = boto3.client("dynamodbstreams", region_name=REGION, config=CLIENT_CONFIG)
    [shard] = streams.describe_stream(StreamArn=stream)["StreamDescription"]["Shards"]
    assert ShardReader(stream).shard_id() == shard["ShardId"]


@pytest.fixture
def access(stream: str) -> Iterator[tuple[AccessControl, Clients]]:
    clients = Clients(boto3.Session(), region=REGION)
    yield AccessControl(account=ACCOUNT, region=REGION), clients


def role_allowing(clients: Clients, stream: str, *actions: str) -> str:
    iam = clients("iam")
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    statement = {"Effect": "Allow", "Action": list(actions), "Resource": stream}
    iam.put_role_policy(
        RoleName="reader",
        PolicyName="stream",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
    )
    return role


def test_a_role_that_may_not_get_records_is_refused_as_dynamodb_refuses_it(
    stream: str, access: tuple[AccessControl, Clients]
) -> None:
    control, clients = access
    role = role_allowing(clients, stream, "dynamodb:DescribeStream", "dynamodb:GetShardIterator")
    principal = control.assume(clients, "Notifier", role, "notifier")
    with pytest.raises(ClientError) as refused:
        ShardReader(stream, role=principal, access=control).records_after(None)
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert error["Message"] == (
        f"User: {principal.session_arn} is not authorized to perform: dynamodb:GetRecords "
        f"on resource: {stream} because no identity-based policy allows the "
        "dynamodb:GetRecords action"
    )
    assert control.denials == [error["Message"]]


def test_a_role_that_may_read_the_stream_reads_it(
    stream: str, access: tuple[AccessControl, Clients]
) -> None:
    control, clients = access
    role = role_allowing(
        clients,
        stream,
        "dynamodb:DescribeStream",
        "dynamodb:GetShardIterator",
        "dynamodb:GetRecords",
    )
    principal = control.assume(clients, "Notifier", role, "notifier")
    read = ShardReader(stream, role=principal, access=control).records_after(None)
    assert len(read) == 4 and control.denials == []


def test_a_read_never_sees_a_request_half_done(stream: str) -> None:
    """A cancelled transaction drops the stream records of its writes inside its request
    (moto_fixes.speed.dynamodb_transaction_rollback): a read waits for the backend's lock, so the
    poller never handles a record AWS never showed."""
    from moto.dynamodb.models import dynamodb_backends
    from richdoc_tools.local.emulation import DYNAMODB_LOCK

    shard = dynamodb_backends[ACCOUNT][REGION].get_table("t").stream_shard
    assert shard is not None
    read: list[list[dict[str, Any]]] = []
    reader = threading.Thread(target=lambda: read.append(ShardReader(stream).records_after(None)))
    with DYNAMODB_LOCK:  # a request in progress: it appended a record ...
        shard.items.append(shard.items[-1])
        reader.start()
        reader.join(0.5)
        assert reader.is_alive()  # the read waits for the request ...
        shard.items.pop()  # ... which is cancelled and drops it
    reader.join()
    assert len(read[0]) == 4
