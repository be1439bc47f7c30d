"""DynamoDB stream records kept for the stack's poller, never pushed by moto.

moto records every write of a table with a stream, then, inside the same write, invokes
each function mapped to the stream with every record it holds, and forgets them all once
one invocation answers: no batch size, no retry, no filter, no partial failures, and the
function runs inside the writer's request (under the DynamoDB backend's lock the stack
adds). On AWS, Lambda's poller reads the stream on its own (GetShardIterator,
GetRecords) and the records stay for 24 hours. The replacement only appends the record;
``richdoc_tools.local.streams`` polls as Lambda does, woken by ``appended`` so that
nothing waits for a polling interval.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from richdoc_tools.local.patches.target import replace

TARGET = "moto.dynamodb.models.table.StreamShard.add"
PATCHED = (TARGET,)


class Appends:
    """How many records were appended to any stream; pollers wait for the count to move."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.count = 0

    def notify(self) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait_past(self, seen: int, timeout_s: float) -> None:
        """Until the count is no longer ``seen`` (a record came after the caller looked),
        or ``timeout_s``."""
        with self._changed:
            self._changed.wait_for(lambda: self.count != seen, timeout_s)


appended = Appends()


def add(shard: Any, old: Any, new: Any) -> None:
    """moto's ``StreamShard.add`` without its delivery: the record, kept."""
    from moto.dynamodb.models.table import StreamRecord

    view = shard.table.stream_specification["StreamViewType"]
    if old is None:
        event_name = "INSERT"
    elif new is None:
        event_name = "REMOVE"
    else:
        event_name = "MODIFY"
    sequence = len(shard.items) + shard.starting_sequence_number
    shard.items.append(StreamRecord(shard.table, view, event_name, old, new, sequence))
    appended.notify()


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, add)
