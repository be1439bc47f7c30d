"""UpdateTable creates or deletes at most one global secondary index.

What moto does: ``DynamoDBBackend.update_table_global_indexes`` applies every ``Create``
and ``Delete`` of an UpdateTable's ``GlobalSecondaryIndexUpdates``, however many, and the
new indexes are usable at once.

What AWS does: "You can create or delete only one global secondary index per UpdateTable
operation" (API reference, UpdateTable, ``GlobalSecondaryIndexUpdates``:
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html);
a request with more is refused with ``LimitExceededException`` ("Subscriber limit exceeded:
Only 1 online index can be created or deleted simultaneously per table"), and nothing of
it is applied. (CloudFormation refuses such a table update itself, before DynamoDB sees
it: the embedded stack's table provisioner, ``cloudformation.provisioners.dynamodb``.)

The fix refuses such a request as DynamoDB does, before moto applies any of it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

# DynamoDBBackend.update_table_global_indexes(table, global_index_updates): the updates
# are UpdateTable's GlobalSecondaryIndexUpdates as the request has them (JSON).
IndexUpdates = Callable[["DynamoDBBackend", "Table", list[dict[str, Any]]], None]

TARGET = "moto.dynamodb.models.DynamoDBBackend.update_table_global_indexes"
PATCHED = (TARGET,)
MESSAGE = (
    "Subscriber limit exceeded: Only 1 online index can be created or deleted "
    "simultaneously per table"
)


def _limit_exceeded() -> Exception:
    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException

    return DynamodbException(ERROR_TYPE_PREFIX + "LimitExceededException", MESSAGE)


def one_at_a_time(update: IndexUpdates) -> IndexUpdates:
    @functools.wraps(update)
    def update_one(
        backend: DynamoDBBackend, table: Table, global_index_updates: list[dict[str, Any]]
    ) -> None:
        creating_or_deleting = [u for u in global_index_updates if "Create" in u or "Delete" in u]
        if len(creating_or_deleting) > 1:
            raise _limit_exceeded()
        update(backend, table, global_index_updates)

    return update_one


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, one_at_a_time(original(TARGET)))
