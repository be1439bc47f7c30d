"""Canary: while a transaction is in flight, a write of one of its items is refused with
TransactionConflictException (400, not retried by botocore) and a second transaction
touching one is cancelled with a TransactionConflict reason; released, the first one is
applied (patches.dynamodb_transactions, richdoc_tools.local.strict.transactions)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.patches import dynamodb_lock, dynamodb_transactions
from richdoc_tools.local.strict.transactions import HeldTransaction, Transactions

if TYPE_CHECKING:
    from types_boto3_dynamodb.type_defs import UpdateTypeDef

KEY = {"pk": {"S": "JOB#1"}, "sk": {"S": "JOB"}}
OTHER = {"pk": {"S": "DIGEST#abc"}, "sk": {"S": "DIGEST"}}


def _update(table: str, key: dict[str, Any], value: str) -> UpdateTypeDef:
    return {
        "TableName": table,
        "Key": key,
        "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": {"S": value}},
    }


def _in_flight(client: Any, items: list[Any]) -> threading.Thread:
    """A transaction of ``items``, sent on a thread of its own (a hold keeps it waiting)."""
    thread = threading.Thread(target=client.transact_write_items, kwargs={"TransactItems": items})
    thread.start()
    return thread


@pytest.fixture
def transactions(aws: None, jobs_table: Any) -> Iterator[Transactions]:
    """The jobs table's requests through the stack's lock and the conflict patch."""
    held = Transactions()
    with contextlib.ExitStack() as exit_stack:
        dynamodb_lock.install(exit_stack)
        dynamodb_transactions.install(exit_stack, held, lambda _: None)
        yield held
    held.release_all()


def test_a_transaction_in_flight_holds_its_items(
    transactions: Transactions, jobs_table: Any
) -> None:
    assert dynamodb_transactions.TARGET == dynamodb_lock.TARGET
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = jobs_table.name
    hold = transactions.hold(lambda t: t.touches(table, "JOB#1"))
    first = _in_flight(client, [{"Update": _update(table, KEY, "first")}])
    assert hold.wait_entered(30)

    with pytest.raises(ClientError) as single:
        client.update_item(
            TableName=table,
            Key=KEY,
            UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"S": "single"}},
        )
    with pytest.raises(ClientError) as second:
        client.transact_write_items(
            TransactItems=[
                {"Update": _update(table, OTHER, "x")},
                {"Update": _update(table, KEY, "second")},
            ]
        )
    client.put_item(TableName=table, Item={**OTHER, "v": {"S": "free"}})  # not held
    hold.release()
    first.join(30)

    error = single.value.response
    assert error["Error"]["Code"] == "TransactionConflictException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["ResponseMetadata"]["RetryAttempts"] == 0
    cancelled = second.value.response
    assert cancelled["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in cancelled["CancellationReasons"]] == ["None", "TransactionConflict"]
    assert client.get_item(TableName=table, Key=KEY)["Item"]["v"] == {"S": "first"}
    assert client.get_item(TableName=table, Key=OTHER)["Item"]["v"] == {"S": "free"}
    assert [r.operation for r in hold.refused] == ["UpdateItem", "TransactWriteItems"]
    assert isinstance(hold.transaction, HeldTransaction)


def test_a_hold_lets_go_after_the_refusals_it_waits_for(
    transactions: Transactions, jobs_table: Any
) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = jobs_table.name
    hold = transactions.hold(lambda t: True, until_refused=1)
    first = _in_flight(client, [{"Put": {"TableName": table, "Item": {**KEY}}}])
    assert hold.wait_entered(30)
    with pytest.raises(ClientError):
        client.delete_item(TableName=table, Key=KEY)
    assert hold.released.wait(30)
    first.join(30)
    assert "Item" in client.get_item(TableName=table, Key=KEY)
