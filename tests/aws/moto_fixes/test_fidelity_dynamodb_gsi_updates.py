"""moto_fixes.fidelity.dynamodb_gsi_updates: UpdateTable creates or deletes at most one
global secondary index, as DynamoDB does.

``test_stock_moto_...`` asserts AWS's behaviour against stock moto: it is expected to fail
while moto still applies every index of the request (strict xfail), and it fails the
suite (XPASS) the day a moto release refuses as AWS does: then delete the fix, this test
and its line in docs/moto-fixes.md."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.moto_fixes.fidelity import dynamodb_gsi_updates

INDEXES = ("by-queue", "tenants-by-service")


def _table(ddb: Any) -> None:
    ddb.create_table(
        TableName="jobs",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _create(ddb: Any, *names: str) -> None:
    ddb.update_table(
        TableName="jobs",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            *({"AttributeName": name, "AttributeType": "S"} for name in names),
        ],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": name,
                    "KeySchema": [{"AttributeName": name, "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            }
            for name in names
        ],
    )


def _indexes(ddb: Any) -> list[str]:
    table = ddb.describe_table(TableName="jobs")["Table"]
    return [i["IndexName"] for i in table.get("GlobalSecondaryIndexes", [])]


def _refused_as_aws_refuses(ddb: Any) -> bool:
    """Two index creations in one UpdateTable: refused with DynamoDB's error, none made."""
    try:
        _create(ddb, *INDEXES)
    except ClientError as exc:
        error = exc.response["Error"]
        return (
            error["Code"] == "LimitExceededException"
            and error["Message"] == dynamodb_gsi_updates.MESSAGE
            and _indexes(ddb) == []
        )
    return False


@pytest.mark.xfail(
    strict=True,
    reason="stock moto applies every index of one UpdateTable: the fix is needed",
)
def test_stock_moto_refuses_more_than_one_index_per_update_table(aws: None) -> None:
    ddb = boto3.client("dynamodb")
    _table(ddb)
    assert _refused_as_aws_refuses(ddb)


def test_with_the_fix_one_update_table_creates_or_deletes_one_index(aws: None) -> None:
    ddb = boto3.client("dynamodb")
    _table(ddb)
    with contextlib.ExitStack() as exit_stack:
        dynamodb_gsi_updates.install(exit_stack)
        assert _refused_as_aws_refuses(ddb)
        for name in INDEXES:  # one per request, as the documentation says
            _create(ddb, name)
        assert _indexes(ddb) == list(INDEXES)
        with pytest.raises(ClientError, match="LimitExceededException"):
            ddb.update_table(
                TableName="jobs",
                GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": n}} for n in INDEXES],
            )
        assert _indexes(ddb) == list(INDEXES)
