"""A DynamoDB transaction's rollback point is the items it names, not whole tables.

moto applies TransactWriteItems one write at a time and, to undo them when the
transaction is cancelled, deep-copies every table the transaction names, once for each
of its parts, before it starts (``copy.deepcopy`` of each table, through its module's
``copy``), and puts the copies back in the tables' place: each transaction costs its
tables' size. Admission's slot ledger is written by a transaction per admitted and per
ended run, so a stack slowed down as its jobs table grew (300 ms a transaction at a few
hundred jobs, bench/ item 5; a burst of thousands of uploads would crawl). What a
cancelled transaction must undo is only what it wrote: the items it names and the
stream records of those writes.

The replacement wraps moto's transaction, which stays moto's own: while it is applied,
the ``copy`` module moto's backend copies tables through gives a table itself instead of
a copy (so moto's restore puts each table back in its own place, a no-op), and the
wrapper takes the rollback point it needs before: a copy of each named item as it was
(or its absence) and each stream's length. When moto would have restored its copies (the
transaction cancelled, or refused as moto refuses it after writing: two parts on one
item, a validation error), the wrapper restores those items in place and drops the
stream records written since, as AWS shows none of a cancelled transaction; the tables
stay the same objects, which the stack's stream reader holds.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.dynamodb.models import DynamoDBBackend

CopiedT = TypeVar("CopiedT")

TARGET = "moto.dynamodb.models.DynamoDBBackend.transact_write_items"
# The copy module moto's DynamoDB backend copies a transaction's tables through.
COPY = "moto.dynamodb.models.copy"
PATCHED = (TARGET, COPY)

# Whether this thread is applying a transaction (moto's copies of its tables are then
# the tables themselves).
_applying = threading.local()


@dataclass
class RollbackPoint:
    """The named items as they were, and each stream's length, before a transaction."""

    items: list[tuple[Any, Any, Any, Any]] = field(default_factory=list)  # table, hash, range, item
    streams: dict[int, tuple[Any, int]] = field(default_factory=dict)

    @classmethod
    def before(
        cls, backend: DynamoDBBackend, transact_items: list[dict[str, Any]]
    ) -> RollbackPoint:
        from moto.dynamodb.models.dynamo_type import DynamoType

        point = cls()
        for part in transact_items:
            for op_type, op in part.items():
                table = backend.tables.get(op.get("TableName"))
                if table is None:
                    continue
                if table.stream_shard is not None:
                    shard = table.stream_shard
                    point.streams.setdefault(id(shard), (shard, len(shard.items)))
                spec = op.get("Item") if op_type == "Put" else op.get("Key")
                try:
                    hash_value = DynamoType(spec[table.hash_key_attr])
                    range_value = (
                        DynamoType(spec[table.range_key_attr]) if table.range_key_attr else None
                    )
                    current = table.get_item(hash_value, range_value)
                except Exception:
                    continue
                point.items.append((table, hash_value, range_value, copy.deepcopy(current)))
        return point

    def restore(self) -> None:
        for table, hash_value, range_value, item in reversed(self.items):
            if range_value is not None:
                if item is None:
                    table.items[hash_value].pop(range_value, None)
                else:
                    table.items[hash_value][range_value] = item
            elif item is None:
                table.items.pop(hash_value, None)
            else:
                table.items[hash_value] = item
        for shard, length in self.streams.values():
            del shard.items[length:]


class TablesNotCopied:
    """Stands in for the ``copy`` module of moto's DynamoDB backend: while this thread
    applies a transaction, a table's deep copy is the table itself; every other copy is
    the copy module's."""

    def deepcopy(self, value: CopiedT, memo: dict[int, object] | None = None) -> CopiedT:
        from moto.dynamodb.models.table import Table

        if getattr(_applying, "transaction", False) and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:  # any of the copy module's attributes
        return getattr(copy, name)


Transact = Callable[["DynamoDBBackend", list[dict[str, Any]]], None]


def rolled_back_by_items(transact: Transact) -> Transact:
    from moto.dynamodb.exceptions import (
        MockValidationException,
        MultipleTransactionsException,
        TransactionCanceledException,
    )

    # What moto undoes the transaction for, before it raises it.
    undone = (TransactionCanceledException, MultipleTransactionsException, MockValidationException)

    @functools.wraps(transact)
    def transact_write_items(
        backend: DynamoDBBackend, transact_items: list[dict[str, Any]]
    ) -> None:
        rollback = RollbackPoint.before(backend, transact_items)
        _applying.transaction = True
        try:
            transact(backend, transact_items)
        except undone:
            rollback.restore()
            raise
        finally:
            _applying.transaction = False

    return transact_write_items


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, COPY, TablesNotCopied())
    replace(exit_stack, TARGET, rolled_back_by_items(original(TARGET)))
