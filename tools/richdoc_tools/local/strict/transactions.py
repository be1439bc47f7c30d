"""DynamoDB transaction conflicts, as DynamoDB has them (the developer guide's "Amazon
DynamoDB Transactions: how it works", "Transaction conflict handling"):

* while a TransactWriteItems is in flight, its items are held: a PutItem, UpdateItem or
  DeleteItem of a held item fails with ``TransactionConflictException`` (HTTP 400,
  "Transaction is ongoing for the item"), which botocore does not retry;
* a TransactWriteItems or TransactGetItems touching a held item is cancelled
  (``TransactionCanceledException``) with the reason ``TransactionConflict`` for that
  item (``None`` for the others).

moto applies a transaction at once, under the stack's DynamoDB lock, so the window is only
as long as moto's work on it: real, but too short to count on. Tests make it as long as
they need, deterministically: ``Transactions.hold(where)`` keeps the next transaction that
``where`` accepts in flight (its items held, its request waiting) until the test releases
it, or until a given number of requests have been refused on its items (``until_refused``),
both observable, never a timing window. ``refused`` lists every request refused so far.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from richdoc_tools.local.requests.callers import Invocation

# A hold nobody releases lets go after this long, so a test that forgot fails instead of
# hanging the suite (a safety valve, never what a test waits for).
AppliedT = TypeVar("AppliedT")

HOLD_LIMIT_S = 120.0
CONFLICT_MESSAGE = "Transaction is ongoing for the item"

ItemKey = tuple[str, str]  # (table name, the item's key as canonical JSON)


def item_key(table: str, key: Mapping[str, Any]) -> ItemKey:
    return table, json.dumps(key, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class HeldTransaction:
    """A transaction in flight: its items, and the invocation that sent it (if any)."""

    items: tuple[ItemKey, ...]
    caller: Invocation | None

    def touches(self, table: str, partition_value: str) -> bool:
        """Does it hold an item of ``table`` whose key has this string value?"""
        return any(t == table and f'"{partition_value}"' in k for t, k in self.items)


@dataclass(frozen=True)
class Refusal:
    operation: str  # PutItem, UpdateItem, DeleteItem, TransactWriteItems, TransactGetItems
    items: tuple[ItemKey, ...]  # the held items it touched
    caller: Invocation | None


class ItemsHeld(Exception):
    """A transaction touched items another one holds: it is cancelled."""

    def __init__(self, items: list[ItemKey]) -> None:
        super().__init__(items)
        self.items = items


@dataclass
class TransactionHold:
    where: Callable[[HeldTransaction], bool]
    until_refused: int | None
    counting: frozenset[str] | None = None  # the refused operations that count (None: all)
    entered: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    transaction: HeldTransaction | None = None
    refused: list[Refusal] = field(default_factory=list)

    def release(self) -> None:
        self.released.set()

    def wait_entered(self, timeout_s: float) -> bool:
        return self.entered.wait(timeout_s)


class Transactions:
    """The items of the transactions in flight, and the tests' holds."""

    def __init__(self) -> None:
        self._held: dict[ItemKey, int] = {}  # item -> how many transactions hold it
        self._holds: list[TransactionHold] = []
        self._lock = threading.Lock()
        self.refused: list[Refusal] = []

    def hold(
        self,
        where: Callable[[HeldTransaction], bool],
        *,
        until_refused: int | None = None,
        counting: Iterable[str] | None = None,
    ) -> TransactionHold:
        """Keep the next transaction ``where`` accepts in flight until ``release()``,
        or until ``until_refused`` requests were refused on its items (of the operations
        in ``counting``, if given: ``{"PutItem", "UpdateItem", "DeleteItem"}`` waits for a
        single write, not another transaction)."""
        hold = TransactionHold(
            where=where,
            until_refused=until_refused,
            counting=frozenset(counting) if counting is not None else None,
        )
        with self._lock:
            self._holds.append(hold)
        return hold

    def release_all(self) -> None:
        with self._lock:
            holds, self._holds = list(self._holds), []
        for hold in holds:
            hold.release()

    def conflicting(self, items: Iterable[ItemKey]) -> list[ItemKey]:
        with self._lock:
            return [item for item in items if self._held.get(item)]

    def refuse(self, operation: str, items: list[ItemKey], caller: Invocation | None) -> None:
        """Record a request refused on held ``items``; holds that have seen enough let go."""
        refusal = Refusal(operation=operation, items=tuple(items), caller=caller)
        with self._lock:
            self.refused.append(refusal)
            done = []
            for hold in self._holds:
                transaction = hold.transaction
                if transaction is None or not set(items) & set(transaction.items):
                    continue
                hold.refused.append(refusal)
                counted = [
                    r for r in hold.refused if hold.counting is None or r.operation in hold.counting
                ]
                if hold.until_refused is not None and len(counted) >= hold.until_refused:
                    done.append(hold)
        for hold in done:
            hold.release()

    def in_flight(self, transaction: HeldTransaction, apply: Callable[[], AppliedT]) -> AppliedT:
        """Apply the transaction with its items held, and keep it in flight first if a
        hold takes it; ``ItemsHeld`` (nothing applied) when another holds some of them."""
        with self._lock:
            conflicts = [item for item in transaction.items if self._held.get(item)]
            if conflicts:
                raise ItemsHeld(conflicts)
            for item in transaction.items:
                self._held[item] = self._held.get(item, 0) + 1
            hold = next(
                (h for h in self._holds if h.transaction is None and h.where(transaction)),
                None,
            )
            if hold is not None:
                hold.transaction = transaction
        try:
            if hold is not None:
                hold.entered.set()
                hold.released.wait(HOLD_LIMIT_S)
                with self._lock:
                    if hold in self._holds:
                        self._holds.remove(hold)
            return apply()
        finally:
            with self._lock:
                for item in transaction.items:
                    left = self._held[item] - 1
                    if left:
                        self._held[item] = left
                    else:
                        del self._held[item]
