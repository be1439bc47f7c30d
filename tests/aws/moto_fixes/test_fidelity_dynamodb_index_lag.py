"""A global secondary index shows a write some time after its table does, as DynamoDB's
do (moto_fixes.fidelity.dynamodb_index_lag); stock moto's indexes show every write at
once, which the first test records: it fails, as expected, while they do."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import (
    IndexLag,
    IndexPropagation,
    install,
)

from richdoc.jobs.keys import BACKLOG_INDEX, STATUS_INDEX
from tests.support.moto_fixes import moto_differs

WRITES = 200


def _job(n: int, **attributes: Any) -> dict[str, Any]:
    return {
        "pk": f"JOB#{n:04d}",
        "sk": "JOB",
        "job_status": "QUEUED",
        "updated_at": f"2026-01-01T00:00:{n % 60:02d}",
        **attributes,
    }


def _queued(table: Any, tenant: str = "acme") -> list[str]:
    """The keys the backlog index lists for ``tenant`` (a Query of the index)."""
    answer = table.query(IndexName=BACKLOG_INDEX, KeyConditionExpression=Key("tenant").eq(tenant))
    return [str(item["pk"]) for item in answer["Items"]]


def _scanned(table: Any) -> list[str]:
    """The keys a Scan of the backlog index finds."""
    return sorted(str(item["pk"]) for item in table.scan(IndexName=BACKLOG_INDEX)["Items"])


@moto_differs("shows every write in a global secondary index at once")
@pytest.mark.usefixtures("aws")
def test_stock_moto_indexes_lag_their_table_as_dynamodbs_do() -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(
        TableName="jobs",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "tenant", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-tenant",
                "KeySchema": [{"AttributeName": "tenant", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    stale = 0
    for n in range(WRITES):
        key = f"JOB#{n:04d}"
        client.put_item(TableName="jobs", Item={"pk": {"S": key}, "tenant": {"S": "acme"}})
        listed = client.query(
            TableName="jobs",
            IndexName="by-tenant",
            KeyConditionExpression="tenant = :t",
            ExpressionAttributeValues={":t": {"S": "acme"}},
        )["Items"]
        stale += {"S": key} not in [item["pk"] for item in listed]
    # DynamoDB propagates a write to its indexes "within a fraction of a second": of
    # hundreds of reads made right after a write, some find the index behind.
    assert stale > 0


@pytest.fixture
def propagation(jobs_table: Any) -> Iterator[IndexPropagation]:
    """The fix on plain moto, with no lag but what a test holds."""
    shown = IndexPropagation(IndexLag())
    with contextlib.ExitStack() as exit_stack:
        install(exit_stack, shown)
        yield shown


def test_a_write_made_while_propagation_is_held_shows_in_no_index_until_it_ends(
    jobs_table: Any, propagation: IndexPropagation
) -> None:
    jobs_table.put_item(Item=_job(1, tenant="acme", backlog_key="t1#1"))
    with propagation.held():
        jobs_table.put_item(Item=_job(2, tenant="acme", backlog_key="t2#2"))
        assert _queued(jobs_table) == ["JOB#0001"]
        assert _scanned(jobs_table) == ["JOB#0001"]
        assert not propagation.caught_up()
        # The table itself, read strongly or not, has it.
        got = jobs_table.get_item(Key={"pk": "JOB#0002", "sk": "JOB"})
        assert got["Item"]["backlog_key"] == "t2#2"
        table_query = jobs_table.query(KeyConditionExpression=Key("pk").eq("JOB#0002"))
        assert [item["pk"] for item in table_query["Items"]] == ["JOB#0002"]
    assert _queued(jobs_table) == ["JOB#0001", "JOB#0002"]
    assert propagation.caught_up()


def test_an_index_still_lists_an_item_updated_out_of_it_or_deleted_until_the_write_shows(
    jobs_table: Any, propagation: IndexPropagation
) -> None:
    for n in (1, 2, 3):
        jobs_table.put_item(Item=_job(n, tenant="acme", backlog_key=f"t{n}#{n}"))
    with propagation.held():
        # Admitted: the job leaves the backlog index in the table's write...
        jobs_table.update_item(
            Key={"pk": "JOB#0001", "sk": "JOB"},
            UpdateExpression="REMOVE backlog_key SET job_status = :s",
            ExpressionAttributeValues={":s": "RUNNING"},
        )
        jobs_table.delete_item(Key={"pk": "JOB#0002", "sk": "JOB"})
        jobs_table.update_item(  # changed twice: the index shows it as it was first
            Key={"pk": "JOB#0003", "sk": "JOB"},
            UpdateExpression="SET backlog_key = :k",
            ExpressionAttributeValues={":k": "t9#3"},
        )
        jobs_table.update_item(
            Key={"pk": "JOB#0003", "sk": "JOB"},
            UpdateExpression="SET backlog_key = :k",
            ExpressionAttributeValues={":k": "t0#3"},
        )
        # ...but the index lists it, as it was, until the write shows there.
        assert _queued(jobs_table) == ["JOB#0001", "JOB#0002", "JOB#0003"]
        statuses = jobs_table.query(
            IndexName=STATUS_INDEX, KeyConditionExpression=Key("job_status").eq("RUNNING")
        )
        assert statuses["Items"] == []
    assert _queued(jobs_table) == ["JOB#0003"]
    [shown] = jobs_table.query(
        IndexName=BACKLOG_INDEX, KeyConditionExpression=Key("tenant").eq("acme")
    )["Items"]
    assert shown["backlog_key"] == "t0#3"


def test_a_cancelled_transaction_shows_in_no_index(
    jobs_table: Any, propagation: IndexPropagation
) -> None:
    jobs_table.put_item(Item=_job(1, tenant="acme", backlog_key="t1#1"))
    client = boto3.client("dynamodb", region_name="us-east-1")
    admit_a_gone_job = [
        {
            "Update": {
                "TableName": jobs_table.name,
                "Key": {"pk": {"S": "JOB#0001"}, "sk": {"S": "JOB"}},
                "UpdateExpression": "SET backlog_key = :k",
                "ExpressionAttributeValues": {":k": {"S": "t9#1"}},
            }
        },
        {
            "ConditionCheck": {
                "TableName": jobs_table.name,
                "Key": {"pk": {"S": "JOB#0009"}, "sk": {"S": "JOB"}},
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ]

    def listed() -> list[tuple[str, str]]:
        answer = jobs_table.query(
            IndexName=BACKLOG_INDEX, KeyConditionExpression=Key("tenant").eq("acme")
        )
        return [(str(item["pk"]), str(item["backlog_key"])) for item in answer["Items"]]

    with propagation.held():
        with pytest.raises(client.exceptions.TransactionCanceledException):
            client.transact_write_items(TransactItems=admit_a_gone_job)  # type: ignore[arg-type]
        assert listed() == [("JOB#0001", "t1#1")]
    assert listed() == [("JOB#0001", "t1#1")]


class Clock:
    """A monotonic clock a test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_write_shows_after_its_own_lag_and_an_items_writes_in_order(jobs_table: Any) -> None:
    clock = Clock()
    lag = IndexLag(delay_s=1.0, spread_s=2.0, seed=7)
    propagation = IndexPropagation(lag, clock=clock)
    with contextlib.ExitStack() as exit_stack:
        install(exit_stack, propagation)
        jobs_table.put_item(Item=_job(1, tenant="acme", backlog_key="t1#1"))
        first = lag.of(jobs_table.name, "JOB#0001\x00JOB", 1)
        assert 1.0 <= first < 3.0
        clock.now += first - 0.001
        assert _queued(jobs_table) == []
        clock.now += 0.001
        assert _queued(jobs_table) == ["JOB#0001"]
        # Two writes of one item: the second never shows before the first.
        jobs_table.update_item(
            Key={"pk": "JOB#0001", "sk": "JOB"}, UpdateExpression="REMOVE backlog_key"
        )
        jobs_table.put_item(Item=_job(1, tenant="acme", backlog_key="t5#1"))
        removal = lag.of(jobs_table.name, "JOB#0001\x00JOB", 2)
        again = lag.of(jobs_table.name, "JOB#0001\x00JOB", 3)
        clock.now += min(removal, again) - 0.001
        assert _queued(jobs_table) == ["JOB#0001"]  # as it was before both
        clock.now += abs(removal - again) + 0.002
        clock.now += 3.0
        assert propagation.caught_up()
        [shown] = jobs_table.query(
            IndexName=BACKLOG_INDEX, KeyConditionExpression=Key("tenant").eq("acme")
        )["Items"]
        assert shown["backlog_key"] == "t5#1"


def test_the_same_seed_draws_the_same_lags_and_faults_widen_them() -> None:
    lag = IndexLag(spread_s=1.0, seed=3)
    draws = [lag.of("jobs", f"JOB#{n}", 1) for n in range(100)]
    assert draws == [IndexLag(spread_s=1.0, seed=3).of("jobs", f"JOB#{n}", 1) for n in range(100)]
    assert all(0.0 <= d < 1.0 for d in draws) and len(set(draws)) == 100
    wider = lag.under_faults(seed=11)
    assert wider.spread_s == 5.0 and wider.seed == 11
    assert max(wider.of("jobs", f"JOB#{n}", 1) for n in range(100)) > 1.0
    with pytest.raises(ValueError, match="not negative"):
        IndexLag(delay_s=-1.0)
