"""DynamoDB transaction conflicts (``richdoc_tools.local.strict.transactions``), which moto never
raises.

Wraps moto's DynamoDB request handling (``DynamoHandler.call_action``) *outside* the
stack's DynamoDB lock (``patches.dynamodb_lock``; install this one after it): a
TransactWriteItems holds its items while it is applied, and a write of a held item, or a
second transaction touching one, is answered as DynamoDB answers it.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests.callers import INVOCATION_HEADER, Invocation
from richdoc_tools.local.strict.transactions import (
    CONFLICT_MESSAGE,
    HeldTransaction,
    ItemKey,
    ItemsHeld,
    Transactions,
    item_key,
)

if TYPE_CHECKING:
    from moto.core.common_types import TYPE_RESPONSE
    from moto.dynamodb.responses import DynamoHandler

TARGET = "moto.dynamodb.responses.DynamoHandler.call_action"
PATCHED = (TARGET,)

SINGLE_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
TRANSACTIONS = frozenset({"TransactWriteItems", "TransactGetItems"})
CONFLICT_TYPE = "com.amazonaws.dynamodb.v20120810#TransactionConflictException"

InvocationOf = Callable[[str], "Invocation | None"]


def _key(handler: DynamoHandler, table: str, spec: Mapping[str, Any]) -> ItemKey:
    """The item a request part names: its ``Key``, or the key attributes of its ``Item``."""
    if "Key" in spec:
        return item_key(table, spec["Key"])
    described = handler.dynamodb_backend.get_table(table)
    names = [described.hash_key_attr, described.range_key_attr]
    return item_key(table, {n: spec["Item"][n] for n in names if n and n in spec["Item"]})


def _transaction_items(handler: DynamoHandler, params: Mapping[str, Any]) -> list[ItemKey]:
    items = []
    for part in params.get("TransactItems", []):
        for spec in part.values():
            items.append(_key(handler, spec["TableName"], spec))
    return items


def _cancelled(items: list[ItemKey], held: list[ItemKey]) -> Exception:
    from moto.dynamodb.exceptions import TransactionCanceledException

    return TransactionCanceledException(
        [
            ("TransactionConflict", CONFLICT_MESSAGE, None) if i in held else (None, None, None)
            for i in items
        ]
    )


def _conflict() -> Exception:
    from moto.dynamodb.exceptions import DynamodbException

    return DynamodbException(CONFLICT_TYPE, CONFLICT_MESSAGE)


def with_conflicts(
    call_action: Callable[[DynamoHandler], TYPE_RESPONSE],
    transactions: Transactions,
    invocation_of: InvocationOf,
) -> Callable[[DynamoHandler], TYPE_RESPONSE]:
    @functools.wraps(call_action)
    def call_action_with_conflicts(handler: DynamoHandler) -> TYPE_RESPONSE:
        operation = handler._get_action()
        if operation not in SINGLE_WRITES and operation not in TRANSACTIONS:
            return call_action(handler)
        params: dict[str, Any] = json.loads(handler.raw_body or b"{}")
        invocation_id = handler.headers.get(INVOCATION_HEADER)
        caller = invocation_of(invocation_id) if invocation_id else None
        if operation in SINGLE_WRITES:
            items = [_key(handler, params["TableName"], params)]
            held = transactions.conflicting(items)
            if held:
                transactions.refuse(operation, held, caller)
                raise _conflict()
            return call_action(handler)
        items = _transaction_items(handler, params)
        if operation == "TransactGetItems":
            held = transactions.conflicting(items)
            if held:
                transactions.refuse(operation, held, caller)
                raise _cancelled(items, held)
            return call_action(handler)
        transaction = HeldTransaction(items=tuple(items), caller=caller)
        try:
            answered: TYPE_RESPONSE = transactions.in_flight(
                transaction, lambda: call_action(handler)
            )
            return answered
        except ItemsHeld as conflict:
            transactions.refuse(operation, conflict.items, caller)
            raise _cancelled(items, conflict.items) from None

    return call_action_with_conflicts


def install(
    exit_stack: contextlib.ExitStack, transactions: Transactions, invocation_of: InvocationOf
) -> None:
    replace(exit_stack, TARGET, with_conflicts(original(TARGET), transactions, invocation_of))
