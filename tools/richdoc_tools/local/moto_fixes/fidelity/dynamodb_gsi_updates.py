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
from typing import Any
from unittest import mock

TARGET = "moto.dynamodb.models.DynamoDBBackend.update_table_global_indexes"
PATCHED = (TARGET,)
MESSAGE = (
    "Subscriber limit exceeded: Only 1 online index can be created or deleted "
    "simultaneously per table"
)


def _limit_exceeded() -> Exception:
    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException

    return DynamodbException(ERROR_TYPE_PREFIX + "LimitExceededException", MESSAGE)


def one_at_a_time(update: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(update)
    def update_one(backend: Any, table: Any, global_index_updates: list[dict[str, Any]]) -> Any:
        creating_or_deleting = [u for u in global_index_updates if "Create" in u or "Delete" in u]
        if len(creating_or_deleting) > 1:
            raise _limit_exceeded()
        return update(backend, table, global_index_updates)

    return update_one


def install(exit_stack: contextlib.ExitStack) -> None:
    from moto.dynamodb.models import DynamoDBBackend

    update = DynamoDBBackend.update_table_global_indexes
    exit_stack.enter_context(
        mock.patch.object(DynamoDBBackend, "update_table_global_indexes", one_at_a_time(update))
    )
