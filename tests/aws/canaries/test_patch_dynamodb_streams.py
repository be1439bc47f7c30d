"""Canary: every write of a table with a stream stays on the stream, in order, and wakes
the stack's pollers (patches.dynamodb_streams keeps the records for them; moto would
deliver them to the stream's functions inside the write and forget them)."""

from __future__ import annotations

import contextlib

import boto3
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.patches import dynamodb_streams
from richdoc_tools.local.runtime.streams import appended

from tests.support.aws import table_with_stream


def test_with_the_patch_every_write_stays_on_the_stream_in_order_and_wakes_the_pollers() -> None:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        dynamodb_streams.install(exit_stack)
        stream_arn = table_with_stream()
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        seen = appended.count
        ddb.put_item(TableName="t", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
        ddb.put_item(TableName="t", Item={"pk": {"S": "a"}, "n": {"N": "2"}})
        ddb.delete_item(TableName="t", Key={"pk": {"S": "a"}})
        assert appended.count == seen + 3
        appended.wait_past(seen, timeout_s=0)  # returns at once: it moved

        streams = boto3.client("dynamodbstreams", region_name="us-east-1", config=CLIENT_CONFIG)
        shard = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"][0]
        iterator = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records = streams.get_records(ShardIterator=iterator)["Records"]
        assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
        assert records[1]["dynamodb"]["OldImage"]["n"] == {"N": "1"}
        assert records[1]["dynamodb"]["NewImage"]["n"] == {"N": "2"}
        # A second read finds them again: nothing was consumed by a delivery.
        again = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        assert len(streams.get_records(ShardIterator=again)["Records"]) == 3
