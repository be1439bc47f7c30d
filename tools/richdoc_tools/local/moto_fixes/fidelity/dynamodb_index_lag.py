"""Global secondary indexes that show a write some time after their table does, as
DynamoDB's do.

What moto does: it keeps no index apart from the table. A Query or Scan of a global
secondary index filters the table's items as they are at that moment, so an index shows
every write at once, in the write.

What AWS does: "DynamoDB automatically synchronizes each global secondary index with its
base table ... Changes to the table data are propagated to the global secondary indexes
within a fraction of a second, under normal conditions. However, in some unlikely
failure scenarios, longer propagation delays might occur" (Amazon DynamoDB Developer
Guide, "Using Global Secondary Indexes in DynamoDB", "Data synchronization between
tables and Global Secondary Indexes",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes);
"All reads from GSIs and streams are eventually consistent" ("DynamoDB read
consistency", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html);
AWS's knowledge center: "Write operations propagate to a GSI within 1 second"
(https://repost.aws/knowledge-center/dynamodb-missing-table-items-gsi). So a reader of
an index may not see a job just queued, and may still see one admitted a moment ago.
(moto already refuses ``ConsistentRead`` on a global secondary index, as AWS does.)

The fix: every write of an item of a table that has global secondary indexes (a put, an
update, a delete, each part of a transaction) is kept in the table's journal with the
item as it was before. Each write propagates ``IndexLag.delay_s`` after it was made, plus
a part of ``IndexLag.spread_s`` drawn from a hash of the lag's seed and the write (the
same seed, the same lags), and an item's writes propagate in the order they were made. A
Query or Scan of a global secondary index reads the table as it was before the writes
that have not propagated yet; the table itself, and its local secondary indexes, are
read as they are. ``IndexPropagation.held`` stops propagation for a test (what is
written inside the block shows in no index until it ends): a lag that does not depend
on the machine's speed.

Stock moto's test: ``tests/aws/moto_fixes/test_fidelity_dynamodb_index_lag.py`` (it
passes, and fails the suite as an unexpected pass, once moto's indexes lag).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import inspect
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType, Item
    from moto.dynamodb.models.table import Table

P = ParamSpec("P")
ReadT = TypeVar("ReadT")

QUERY = "moto.dynamodb.models.table.Table.query"
SCAN = "moto.dynamodb.models.table.Table.scan"
ALL_ITEMS = "moto.dynamodb.models.table.Table.all_items"
INDEXED_ITEMS = "moto.dynamodb.models.table.Table.has_idx_items"
PUT = "moto.dynamodb.models.table.Table.put_item"
DELETE = "moto.dynamodb.models.table.Table.delete_item"
UPDATE = "moto.dynamodb.models.DynamoDBBackend.update_item"
PATCHED = (QUERY, SCAN, ALL_ITEMS, INDEXED_ITEMS, PUT, DELETE, UPDATE)

# How much wider ``--faults`` makes the spread: "longer propagation delays" happen.
FAULTS_SPREAD_FACTOR = 5


@dataclass(frozen=True)
class IndexLag:
    """How long after a write the table's global secondary indexes show it:
    ``delay_s``, plus a part of ``spread_s`` drawn for each write from ``seed``."""

    delay_s: float = 0.0
    spread_s: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.delay_s < 0 or self.spread_s < 0:
            raise ValueError(f"an index lag is not negative: {self}")

    def under_faults(self, seed: int) -> IndexLag:
        """The lag with faults injected: the spread ``FAULTS_SPREAD_FACTOR`` times as
        wide, drawn from the faults' seed."""
        return dataclasses.replace(self, spread_s=self.spread_s * FAULTS_SPREAD_FACTOR, seed=seed)

    def of(self, table: str, key: object, ordinal: int) -> float:
        """The lag of the ``ordinal``-th write of ``key`` in ``table``."""
        if not self.spread_s:
            return self.delay_s
        token = f"{self.seed}\x00{table}\x00{key}\x00{ordinal}".encode()
        part = int.from_bytes(hashlib.sha256(token).digest()[:8], "big") / 2**64
        return self.delay_s + part * self.spread_s


# AWS under normal conditions: every write shows in the indexes within a second.
WITHIN_A_SECOND = IndexLag(spread_s=1.0)

# An item's key in its table: (hash key, range key), moto's DynamoType values.
ItemKey = tuple["DynamoType", "DynamoType | None"]


@dataclass
class _Write:
    key: ItemKey
    before: Item | None  # the item as it was, None when it did not exist
    shows_at: float  # when the indexes show it (inf: written while propagation is held)


@dataclass
class _Journal:
    """A table's writes the indexes may not show yet, in the order they were made."""

    writes: deque[_Write] = field(default_factory=deque)
    last_shows_at: dict[ItemKey, float] = field(default_factory=dict)
    ordinals: dict[ItemKey, int] = field(default_factory=dict)


class IndexPropagation:
    """The journals of every table with global secondary indexes, and what each index
    shows now."""

    def __init__(self, lag: IndexLag, clock: Callable[[], float] = time.monotonic) -> None:
        self.lag = lag
        self.clock = clock
        self._journals: dict[tuple[str, str, str], _Journal] = {}
        self._lock = threading.Lock()
        self._held = 0  # nested holds

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Inside the block, no write propagates: the indexes show the table as it was
        when the block began (and what propagated before), until it ends."""
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                if not self._held:
                    now = self.clock()
                    for journal in self._journals.values():
                        for write in journal.writes:
                            if write.shows_at == float("inf"):
                                write.shows_at = now + self.lag.delay_s
                        for key, shows_at in journal.last_shows_at.items():
                            if shows_at == float("inf"):
                                journal.last_shows_at[key] = now + self.lag.delay_s

    def caught_up(self) -> bool:
        """Every index shows every write made so far."""
        now = self.clock()
        with self._lock:
            return all(
                write.shows_at <= now
                for journal in self._journals.values()
                for write in journal.writes
            )

    def wrote(self, table: Table, key: ItemKey, before: Item | None) -> None:
        """``table``'s item ``key`` was written; ``before`` is how it was."""
        now = self.clock()
        with self._lock:
            journal = self._journals.setdefault(_name(table), _Journal())
            ordinal = journal.ordinals[key] = journal.ordinals.get(key, 0) + 1
            if self._held:
                shows_at = float("inf")
            else:
                lag = self.lag.of(table.name, _plain(key), ordinal)
                shows_at = max(now + lag, journal.last_shows_at.get(key, 0.0))
            journal.last_shows_at[key] = shows_at
            journal.writes.append(_Write(key, before, shows_at))
            self._forget_shown(journal, now)

    def shown(self, table: Table, items: list[Item]) -> list[Item]:
        """``items`` (the table's, as they are) as its global secondary indexes show
        them now: each item written since as it was before the first write not shown."""
        now = self.clock()
        with self._lock:
            journal = self._journals.get(_name(table))
            if journal is None:
                return items
            self._forget_shown(journal, now)
            hidden: dict[ItemKey, Item | None] = {}
            for write in journal.writes:
                if write.shows_at > now and write.key not in hidden:
                    hidden[write.key] = write.before
        if not hidden:
            return items
        shown = [hidden.get(_key(item), item) for item in items]
        current = {_key(item) for item in items}
        shown += [before for key, before in hidden.items() if key not in current]
        return [item for item in shown if item is not None]

    @staticmethod
    def _forget_shown(journal: _Journal, now: float) -> None:
        while journal.writes and journal.writes[0].shows_at <= now:
            write = journal.writes.popleft()
            if journal.last_shows_at.get(write.key) == write.shows_at:
                del journal.last_shows_at[write.key]


def _name(table: Table) -> tuple[str, str, str]:
    return table.account_id, table.region_name, table.name


def _key(item: Item) -> ItemKey:
    return item.hash_key, item.range_key


def _plain(key: ItemKey) -> str:
    return "\x00".join("" if part is None else str(part.value) for part in key)


def _keys_of(table: Table, attributes: dict[str, Any]) -> ItemKey | None:
    """The key an item's attributes (or a request's ``Key``) name; None if they do not."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    try:
        hash_key = DynamoType(attributes[table.hash_key_attr])
        range_key = DynamoType(attributes[table.range_key_attr]) if table.range_key_attr else None
    except (KeyError, TypeError):
        return None
    return hash_key, range_key


def _indexed(table: Table) -> bool:
    return bool(table.global_indexes)


# The table whose global secondary index this thread is reading, and what it shows.
_reading = threading.local()


def _is_reading(table: Table) -> bool:
    return getattr(_reading, "table", None) is table


def _lagged(items: Callable[[Table], list[Item]]) -> Callable[[Table], list[Item]]:
    """``all_items``: while this thread reads a global secondary index of the table, the
    items as the index shows them."""

    @functools.wraps(items)
    def shown_items(table: Table) -> list[Item]:
        answer = items(table)
        if _is_reading(table):
            return _reading.propagation.shown(table, answer)  # type: ignore[no-any-return]
        return answer

    return shown_items


def _lagged_index_items(
    items: Callable[[Table, str], list[Item]],
) -> Callable[[Table, str], list[Item]]:
    """``has_idx_items`` (a Scan of an index): the items the index shows."""

    @functools.wraps(items)
    def shown_items(table: Table, index_name: str) -> list[Item]:
        if not _is_reading(table):
            return items(table, index_name)
        columns = {part["AttributeName"] for part in table.get_index(index_name).schema}
        every = _reading.propagation.shown(table, _every_item(table))
        return [item for item in every if columns.issubset(item.attrs)]

    return shown_items


def _every_item(table: Table) -> list[Item]:
    """moto keeps a table's items by hash key: an item, or (with a range key) the items by
    range key."""
    every: list[Item] = []
    for stored in table.items.values():
        every.extend(stored.values() if isinstance(stored, dict) else (stored,))
    return every


def _reading_index(
    read: Callable[Concatenate[Table, P], ReadT], propagation: IndexPropagation
) -> Callable[Concatenate[Table, P], ReadT]:
    """Query or Scan: a read of a global secondary index sees what the index shows."""
    signature = inspect.signature(read)  # moto's backend passes index_name by position

    @functools.wraps(read)
    def answer(table: Table, /, *args: P.args, **kwargs: P.kwargs) -> ReadT:
        index_name = signature.bind(table, *args, **kwargs).arguments.get("index_name")
        global_names = {index.name for index in table.global_indexes or []}
        if index_name not in global_names:
            return read(table, *args, **kwargs)
        _reading.table, _reading.propagation = table, propagation
        try:
            return read(table, *args, **kwargs)
        finally:
            _reading.table = None

    return answer


def _journaled_put(put: Callable[..., Item], propagation: IndexPropagation) -> Callable[..., Item]:
    @functools.wraps(put)
    def put_item(table: Table, item_attrs: dict[str, Any], *args: object, **kwargs: object) -> Item:
        key = _keys_of(table, item_attrs) if _indexed(table) else None
        # The item a put replaces is never changed again: it is kept as it is.
        before = table.get_item(*key) if key is not None else None
        item = put(table, item_attrs, *args, **kwargs)
        if key is not None:
            propagation.wrote(table, key, before)
        return item

    return put_item


def _journaled_delete(
    delete: Callable[[Table, DynamoType, DynamoType | None], Item | None],
    propagation: IndexPropagation,
) -> Callable[[Table, DynamoType, DynamoType | None], Item | None]:
    @functools.wraps(delete)
    def delete_item(
        table: Table, hash_key: DynamoType, range_key: DynamoType | None
    ) -> Item | None:
        item = delete(table, hash_key, range_key)
        if item is not None and _indexed(table):
            propagation.wrote(table, (hash_key, range_key), item)
        return item

    return delete_item


def _journaled_update(
    update: Callable[..., Item], propagation: IndexPropagation
) -> Callable[..., Item]:
    @functools.wraps(update)
    def update_item(
        backend: DynamoDBBackend,
        table_name: str,
        key: dict[str, Any],
        *args: object,
        **kw: object,
    ) -> Item:
        table = backend.get_table(table_name)
        item_key = _keys_of(table, key) if _indexed(table) else None
        # An update changes the item in place: it is copied first.
        before = copy.deepcopy(table.get_item(*item_key)) if item_key is not None else None
        item = update(backend, table_name, key, *args, **kw)
        if item_key is not None:
            propagation.wrote(table, item_key, before)
        return item

    return update_item


def install(exit_stack: contextlib.ExitStack, propagation: IndexPropagation) -> None:
    """The indexes lag as ``propagation`` says until ``exit_stack`` closes (after the
    emulation's own patches of the same methods: they are kept, underneath)."""
    replace(exit_stack, QUERY, _reading_index(original(QUERY), propagation))
    replace(exit_stack, SCAN, _reading_index(original(SCAN), propagation))
    replace(exit_stack, ALL_ITEMS, _lagged(original(ALL_ITEMS)))
    replace(exit_stack, INDEXED_ITEMS, _lagged_index_items(original(INDEXED_ITEMS)))
    replace(exit_stack, PUT, _journaled_put(original(PUT), propagation))
    replace(exit_stack, DELETE, _journaled_delete(original(DELETE), propagation))
    replace(exit_stack, UPDATE, _journaled_update(original(UPDATE), propagation))
