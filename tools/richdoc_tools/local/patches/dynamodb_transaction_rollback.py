"""A DynamoDB transaction's rollback point is the items it names, not whole tables.

moto applies TransactWriteItems one write at a time and, to undo them when the
transaction is cancelled, deep-copies every table the transaction names, once for each
of its parts, before it starts: each transaction costs its tables' size. Admission's slot
ledger is written by a transaction per admitted and per ended run, so a stack slowed
down as its jobs table grew (300 ms a transaction at a few hundred jobs, bench/ item 5;
a burst of thousands of uploads would crawl). What a cancelled transaction must undo is
only what it wrote: the items it names and the stream records of those writes. The
replacement keeps moto's transaction word for word (``moto_transaction`` below, checked
against moto's source by the canary) with the rollback point it needs: a copy of each
named item as it was (or its absence) and each stream's length; cancelling restores
those items in place and drops the stream records written since, as AWS shows none of a
cancelled transaction.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any

from richdoc_tools.local.patches.target import replace

TARGET = "moto.dynamodb.models.DynamoDBBackend.transact_write_items"
PATCHED = (TARGET,)


@dataclass
class RollbackPoint:
    """The named items as they were, and each stream's length, before a transaction."""

    items: list[tuple[Any, Any, Any, Any]] = field(default_factory=list)  # table, hash, range, item
    streams: dict[int, tuple[Any, int]] = field(default_factory=dict)

    @classmethod
    def before(cls, backend: Any, transact_items: list[dict[str, Any]]) -> RollbackPoint:
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


def moto_transaction(backend: Any, transact_items: list[dict[str, Any]]) -> None:
    """moto's ``transact_write_items`` (moto 5, verbatim but for the rollback point)."""
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MockValidationException,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    rollback = RollbackPoint.before(backend, transact_items)

    target_items: set[tuple[str, str]] = set()

    def check_unicity(table_name: str, key: dict[str, Any]) -> None:
        item = (str(table_name), str(dict(sorted(key.items()))))
        if item in target_items:
            raise MultipleTransactionsException()
        target_items.add(item)

    errors: list[tuple[str, str, dict[str, Any]] | tuple[None, None, None]] = []
    for item in transact_items:
        original_item: dict[str, Any] | None = None
        if len(list(item.keys())) > 1:
            raise TransactWriteSingleOpException

        try:
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")

            table_name = op["TableName"]
            condition_expression = op.get("ConditionExpression")
            expression_attribute_names = op.get("ExpressionAttributeNames")
            expression_attribute_values = op.get("ExpressionAttributeValues")
            return_values_on_condition_check_failure = op.get("ReturnValuesOnConditionCheckFailure")

            if op_type == "Put":
                attrs = op["Item"]
                table = backend.get_table(table_name)
                key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                if table.range_key_attr is not None:
                    key[table.range_key_attr] = attrs[table.range_key_attr]
            else:
                key = op["Key"]

            check_unicity(table_name, key)

            current = backend.get_item(table_name, key)
            if condition_expression is not None:
                condition_op = get_filter_expression(
                    condition_expression,
                    expression_attribute_names,
                    expression_attribute_values,
                )
                if not condition_op.expr(current):
                    if return_values_on_condition_check_failure == "ALL_OLD" and current:
                        original_item = current.to_json()["Attributes"]
                    raise ConditionalCheckFailed(item=original_item)

            if op_type == "Put":
                attrs = op["Item"]
                backend.put_item(
                    table_name,
                    attrs,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            elif op_type == "Delete":
                backend.delete_item(
                    table_name,
                    key,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            elif op_type == "Update":
                update_expression = op["UpdateExpression"]
                backend.update_item(
                    table_name,
                    key,
                    update_expression=update_expression,
                    condition_expression=condition_expression,
                    expression_attribute_names=expression_attribute_names,
                    expression_attribute_values=expression_attribute_values,
                )
            errors.append((None, None, None))
        except (MultipleTransactionsException, MockValidationException):
            rollback.restore()
            raise
        except ConditionalCheckFailed as e:
            errors.append(("ConditionalCheckFailed", str(e.message), original_item))  # type: ignore[arg-type]
        except Exception as e:
            errors.append((type(e).__name__, str(e), original_item))  # type: ignore[arg-type]

    if any(code is not None for code, _, _ in errors):
        rollback.restore()
        raise TransactionCanceledException(errors)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, moto_transaction)
