"""DynamoDB stream records kept for the stack's poller, never pushed by moto.

moto records every write of a table with a stream, then, inside the same write, invokes
each function mapped to the stream with every record it holds, and forgets them all once
one invocation answers: no batch size, no retry, no filter, no partial failures, and the
function runs inside the writer's request (under the DynamoDB backend's lock the stack
adds). On AWS, Lambda's poller reads the stream on its own (GetShardIterator,
GetRecords) and the records stay for 24 hours. The replacement only appends the record;
``runtime.streams`` polls as Lambda does, woken by ``runtime.streams.appended`` so that
nothing waits for a polling interval.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import replace
from richdoc_tools.local.runtime.streams import appended

if TYPE_CHECKING:
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import StreamShard

TARGET = "moto.dynamodb.models.table.StreamShard.add"
PATCHED = (TARGET,)


def add(shard: StreamShard, old: Item | None, new: Item | None) -> None:
    """moto's ``StreamShard.add`` without its delivery: the record, kept."""
    from moto.dynamodb.models.table import StreamRecord

    specification = shard.table.stream_specification
    assert specification is not None  # only a table with a stream has shards
    view = specification["StreamViewType"]
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
