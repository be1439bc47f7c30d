"""Canary: moto's response serializer asks its attribute picker for a member's possible
keys through six alias providers that, for a plain dict, read only the key, the shape and
its parent; the patch (moto_fixes.speed.serializer_keys) keeps those answers, and responses are
byte for byte what moto answers without it."""

from __future__ import annotations

import base64
import contextlib
import inspect
from typing import Any

import boto3
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.speed import serializer_keys
from richdoc_tools.local.patches.target import original

from tests.support.aws import table_with_stream


def test_the_picker_asks_six_providers_of_which_none_reads_a_dicts_contents() -> None:
    from moto.core import serialize

    assert serializer_keys.TARGET == "moto.core.serialize.XFormedAttributePicker.get_possible_keys"
    assert [p.__name__ for p in serialize.DEFAULT_ALIAS_PROVIDERS] == [
        "ExplicitAlias",
        "ShapeNameAlias",
        "NoAlias",
        "ShapePrefixAlias",
        "ClassPrefixAlias",
        "ModelAlias",
    ]
    for provider in serialize.DEFAULT_ALIAS_PROVIDERS:
        source = inspect.getsource(provider)
        # What each reads of the object: its Meta (a dict has none) or its class name.
        assert "self.context.obj[" not in source and "obj.get(" not in source
    call = inspect.getsource(serialize.AttributePicker.__call__)
    assert "for possible_key in self.get_possible_keys(context):" in call


ITEM: dict[str, Any] = {
    "pk": {"S": "job#1"},
    "sk": {"S": "JOB"},
    "count": {"N": "42"},
    "blob": {"B": base64.b64decode(base64.b64encode(b"\x00\x01bytes"))},
    "tags": {"SS": ["a", "b"]},
    "sizes": {"NS": ["1", "2.5"]},
    "flag": {"BOOL": True},
    "nothing": {"NULL": True},
    "tiers": {"L": [{"M": {"tier": {"N": "1"}, "memory": {"S": "3008"}}}, {"S": "x"}]},
    "nested": {"M": {"deeper": {"M": {"list": {"L": [{"N": "7"}]}}}}},
}


def _answers() -> list[Any]:
    ddb = boto3.client("dynamodb", region_name="us-east-1", config=CLIENT_CONFIG)
    table_with_stream(sort_key="sk")
    key = {"pk": ITEM["pk"], "sk": ITEM["sk"]}
    ddb.put_item(TableName="t", Item=ITEM)
    updated = ddb.update_item(
        TableName="t",
        Key=key,
        UpdateExpression="SET #c = #c + :one, tiers = list_append(tiers, :more)",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":one": {"N": "1"}, ":more": {"L": [{"N": "3"}]}},
        ReturnValues="ALL_NEW",
    )
    got = ddb.get_item(TableName="t", Key=key)
    queried = ddb.query(
        TableName="t",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": ITEM["pk"]},
    )
    streams = boto3.client("dynamodbstreams", region_name="us-east-1", config=CLIENT_CONFIG)
    arn = ddb.describe_table(TableName="t")["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    records = streams.get_records(ShardIterator=iterator)["Records"]
    for record in records:  # each record's own identity and time
        record.pop("eventID")
        record["dynamodb"].pop("ApproximateCreationDateTime", None)
        record["dynamodb"].pop("SequenceNumber")
        record["dynamodb"].pop("SizeBytes")  # moto's varies by a byte between equal writes
    return [updated["Attributes"], got["Item"], queried["Items"], records]


def test_responses_with_the_patch_are_the_ones_moto_gives_without_it() -> None:
    with mock_aws(config=MOTO_CONFIG):
        plain = _answers()
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        serializer_keys.install(exit_stack)
        assert isinstance(original(serializer_keys.TARGET), serializer_keys.KeysOfPlainDicts)
        patched = _answers()
    assert patched == plain
    assert plain[1]["blob"] == {"B": b"\x00\x01bytes"}
    assert len(plain[3]) == 2 and plain[3][1]["dynamodb"]["OldImage"]["count"] == {"N": "42"}
