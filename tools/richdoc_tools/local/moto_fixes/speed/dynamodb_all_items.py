"""A table's items in moto's order, sorted on plain values, and a Query on the table's own
key reading only the partition it names.

moto answers every Query and Scan from ``Table.all_items``: every item of the table,
sorted by its key attributes compared as ``DynamoType`` objects, whose comparisons convert
both values again on every call (``cast_value``). A query on an index then keeps the
items with the index's key; a query on the table's key keeps those with its hash key.
Each query cost in proportion to the table (30 ms at 300 items: the admission's and the
attempts' queries slowed down with every job the stack had run; bench/, item 5).

* The sort compares each key's converted value, computed once per item: a table's key
  attributes have one type each, so two keys compare as their ``DynamoType`` objects do
  and the order is moto's.
* While a query on the table's own key (no index) runs, ``all_items`` gives the items
  stored under that hash key alone, which are exactly those moto's query keeps of the
  whole table, in the same order; the range condition, filter, limit and pages after are
  moto's. Index queries, scans and every other use still get the whole table.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patches.target import original, replace

QUERY = "moto.dynamodb.models.table.Table.query"
ALL_ITEMS = "moto.dynamodb.models.table.Table.all_items"
PATCHED = (QUERY, ALL_ITEMS)

# (table, hash key) of the query on the table's own key this thread is answering.
_querying = threading.local()


def key_order(item: Any) -> Any:
    """moto's sort key for ``all_items``, on the keys' converted values."""
    if item.range_key:
        return (item.hash_key.cast_value, item.range_key.cast_value)
    return item.hash_key.cast_value


def all_items(table: Any) -> list[Any]:
    partition = getattr(_querying, "partition", None)
    if partition is not None and partition[0] is table:
        # Not table.items[hash_key]: the table's defaultdict would add the partition.
        stored = table.items.get(partition[1])
        hash_sets = [] if stored is None else [stored]
    else:
        hash_sets = list(table.items.values())
    items = [
        item
        for hash_set in hash_sets
        for item in (hash_set.values() if table.range_key_attr else (hash_set,))
    ]
    return sorted(items, key=key_order)


def partition_query(query: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(query)  # moto's backend passes index_name by position

    @functools.wraps(query)
    def answer(table: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = signature.bind(table, hash_key, *args, **kwargs).arguments.get("index_name")
        if index_name is not None or hash_key is None:
            return query(table, hash_key, *args, **kwargs)
        _querying.partition = (table, hash_key)
        try:
            return query(table, hash_key, *args, **kwargs)
        finally:
            _querying.partition = None

    return answer


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, QUERY, partition_query(original(QUERY)))
    replace(exit_stack, ALL_ITEMS, all_items)
