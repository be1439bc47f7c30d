"""moto_fixes.speed.dynamodb_transaction_rollback: a transaction's rollback point is the
items it names and the streams' lengths, not deep copies of its tables; every outcome
(items, stream records, errors) is what moto's own rollback gives, and no table is
copied."""

from __future__ import annotations

import contextlib
import copy
from typing import Any
from unittest import mock

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.speed import dynamodb_transaction_rollback

from tests.support.aws import table_with_stream


def _key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "JOB"}}


def _transactions(ddb: Any) -> list[Any]:
    """Outcomes of a run of transactions: each one's error code, or None."""
    put = lambda pk, n: {"Put": {"TableName": "t", "Item": {**_key(pk), "n": {"N": str(n)}}}}  # noqa: E731
    update = lambda pk: {  # noqa: E731
        "Update": {
            "TableName": "t",
            "Key": _key(pk),
            "UpdateExpression": "SET n = n + :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }
    fails = {
        "ConditionCheck": {
            "TableName": "t",
            "Key": _key("nobody"),
            "ConditionExpression": "attribute_exists(pk)",
        }
    }
    runs: list[list[dict[str, Any]]] = [
        [put("ledger", 0), put("a", 1)],  # applied
        [put("b", 2), update("a"), {"Delete": {"TableName": "t", "Key": _key("ledger")}}],
        [put("c", 3), update("a"), fails],  # cancelled after two writes: both undone
        [put("ledger", 9), update("b"), put("ledger", 10)],  # the same item twice
        [update("a"), {"Delete": {"TableName": "t", "Key": _key("b")}}, fails],
    ]
    outcomes: list[Any] = []
    for items in runs:
        try:
            ddb.transact_write_items(TransactItems=items)
            outcomes.append(None)
        except ClientError as error:
            reasons = error.response.get("CancellationReasons", [])
            outcomes.append((error.response["Error"]["Code"], [r["Code"] for r in reasons]))
    return outcomes


def _world() -> list[Any]:
    ddb = boto3.client("dynamodb", region_name="us-east-1", config=CLIENT_CONFIG)
    table_with_stream(sort_key="sk")
    outcomes = _transactions(ddb)
    items = sorted(ddb.scan(TableName="t")["Items"], key=lambda i: i["pk"]["S"])
    from moto.dynamodb.models import dynamodb_backends

    shard = dynamodb_backends["123456789012"]["us-east-1"].tables["t"].stream_shard
    assert shard is not None
    records = [
        (r.record["eventName"], r.record["dynamodb"]["Keys"]["pk"]["S"]) for r in shard.items
    ]
    return [outcomes, items, records]


def test_every_outcome_items_and_stream_records_are_what_moto_gives() -> None:
    with mock_aws(config=MOTO_CONFIG):
        plain = _world()
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        dynamodb_transaction_rollback.install(exit_stack)
        with mock.patch("copy.deepcopy", wraps=copy.deepcopy) as copies:
            patched = _world()
        from moto.dynamodb.models.table import Table

        assert not any(isinstance(c.args[0], Table) for c in copies.call_args_list)
    assert patched == plain
    outcomes = plain[0]
    assert outcomes[0] is None and outcomes[1] is None
    assert outcomes[2][0] == "TransactionCanceledException"
    assert [i["pk"]["S"] for i in plain[1]] == ["a", "b"]  # c never written, ledger deleted


def test_a_cancelled_transaction_leaves_no_stream_record() -> None:
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        dynamodb_transaction_rollback.install(exit_stack)
        outcomes, _, records = _world()
    applied = [o for o in outcomes if o is None]
    assert len(applied) == 2
    # The first two transactions' writes, nothing of the three cancelled ones.
    assert records == [
        ("INSERT", "ledger"),
        ("INSERT", "a"),
        ("INSERT", "b"),
        ("MODIFY", "a"),
        ("REMOVE", "ledger"),
    ]
