"""moto_fixes.speed.dynamodb_all_items: every Query and Scan answers as moto's own does
(items, order, counts, pages), for tables with and without a range key, string and
number keys, on the table's key and on an index, while the patched ``all_items`` sorts
on plain values and a query on the table's key reads only its partition."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from richdoc_tools.local.moto_fixes.speed import dynamodb_all_items

REGION = "us-east-1"


def test_the_patched_methods_are_the_ones_moto_answers_from() -> None:
    from moto.dynamodb.models.table import Table

    parameters = list(inspect.signature(Table.query).parameters)
    assert parameters[:2] == ["self", "hash_key"] and "index_name" in parameters
    assert list(inspect.signature(Table.all_items).parameters) == ["self"]


@contextlib.contextmanager
def patched() -> Iterator[None]:
    with contextlib.ExitStack() as exit_stack:
        dynamodb_all_items.install(exit_stack)
        yield


def make_table(client: Any, key_type: str, ranged: bool) -> None:
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attributes = [
        {"AttributeName": "pk", "AttributeType": key_type},
        {"AttributeName": "status", "AttributeType": "S"},
    ]
    if ranged:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attributes.append({"AttributeName": "sk", "AttributeType": key_type})
    client.create_table(
        TableName="t",
        KeySchema=keys,
        AttributeDefinitions=attributes,
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-status",
                "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )


def key(key_type: str, value: int) -> dict[str, str]:
    return {"N": str(value)} if key_type == "N" else {"S": f"k{value}"}


def answers(client: Any, key_type: str, ranged: bool, probes: list[int]) -> list[Any]:
    """Every kind of read the stack's tables get, and their pages."""
    out: list[Any] = []
    for probe in probes:
        names = {"#p": "pk"}
        values: dict[str, Any] = {":p": key(key_type, probe)}
        condition = "#p = :p"
        if ranged:
            names["#s"] = "sk"
            values[":s"] = key(key_type, probe)
            answer = client.query(
                TableName="t",
                KeyConditionExpression=condition + " AND #s >= :s",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            out.append((answer["Items"], answer["Count"], answer["ScannedCount"]))
        for forward in (True, False):
            pages = client.get_paginator("query").paginate(
                TableName="t",
                KeyConditionExpression="#p = :p",
                ExpressionAttributeNames={"#p": "pk"},
                ExpressionAttributeValues={":p": key(key_type, probe)},
                ScanIndexForward=forward,
                PaginationConfig={"PageSize": 2},
            )
            out.append([page["Items"] for page in pages])
    for status in ("QUEUED", "DONE"):
        pages = client.get_paginator("query").paginate(
            TableName="t",
            IndexName="by-status",
            KeyConditionExpression="#s = :s",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":s": {"S": status}},
            PaginationConfig={"PageSize": 3},
        )
        out.append([page["Items"] for page in pages])
    scan = client.get_paginator("scan").paginate(TableName="t", PaginationConfig={"PageSize": 4})
    out.append([page["Items"] for page in scan])
    return out


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key_type=st.sampled_from(["S", "N"]),
    ranged=st.booleans(),
    items=st.lists(
        st.tuples(st.integers(-4, 12), st.integers(-4, 12), st.sampled_from(["QUEUED", "DONE"])),
        max_size=25,
    ),
    probes=st.lists(st.integers(-5, 13), min_size=1, max_size=3),
)
def test_queries_and_scans_answer_as_motos_own(
    key_type: str, ranged: bool, items: list[tuple[int, int, str]], probes: list[int]
) -> None:
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        make_table(client, key_type, ranged)
        for hash_value, range_value, status in items:
            item = {"pk": key(key_type, hash_value), "status": {"S": status}}
            if ranged:
                item["sk"] = key(key_type, range_value)
            client.put_item(TableName="t", Item=item)
        expected = answers(client, key_type, ranged, probes)
        with patched():
            assert answers(client, key_type, ranged, probes) == expected


def test_a_query_of_a_missing_partition_adds_no_partition() -> None:
    """moto's items are a defaultdict: looking a partition up must not create it."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        make_table(client, "S", ranged=True)
        client.put_item(
            TableName="t", Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "status": {"S": "DONE"}}
        )
        from moto.dynamodb.models import dynamodb_backends

        table = dynamodb_backends["123456789012"][REGION].get_table("t")
        with patched():
            answer = client.query(
                TableName="t",
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "missing"}},
            )
        assert answer["Items"] == []
        assert len(table.items) == 1  # the partition of "a" alone
