"""StartReplay replays the archived events of its time range to the rules it names.

What moto does: its StartReplay replays every event the archive ever took to every rule
of the bus, whatever the request's ``EventStartTime``, ``EventEndTime`` and
``Destination.FilterArns`` say: a consumer that replayed its own rule's last hour
flooded every other consumer.

What AWS does: EventBridge replays the events whose time lies between
``EventStartTime`` and ``EventEndTime``, to every rule of the bus or, with
``Destination.FilterArns``, only to the rules named there; each replayed event carries
``replay-name`` ("Replaying archived events":
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-replay-archived-event.html;
StartReplay:
https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_StartReplay.html).

The fix replays the range to the named rules, each event with ``replay-name``. Replays
still run to completion inside the call (EventBridge replays in one-minute batches, in
no particular order).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from richdoc_tools.local.patch_targets import replace

if TYPE_CHECKING:
    from moto.events.models import Archive, Replay

TARGET = "moto.events.models.Replay.replay_events"
PATCHED = (TARGET,)


def _seconds(value: datetime | str | float) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return float(value)


def replay_events(self: Replay, archive: Archive) -> None:
    from moto.core.utils import unix_time
    from moto.events.models import ReplayState, events_backends
    from moto.moto_api._internal import mock_random

    backend = events_backends[self.account_id][self.region]
    bus = backend.describe_event_bus(self.destination["Arn"].split("/")[-1])
    only = set(self.destination.get("FilterArns") or [])
    start, end = _seconds(self.event_start_time), _seconds(self.event_end_time)
    rules = [rule for rule in bus.rules.values() if not only or rule.arn in only]
    for event in list(archive.events):
        if not start <= _seconds(event.get("time", 0)) <= end:
            continue
        replayed = dict(event, **{"id": str(mock_random.uuid4()), "replay-name": self.name})
        for rule in rules:
            rule.send_to_targets(cast(Any, replayed), transform_input=False)
    self.state = ReplayState.COMPLETED
    self.end_time = unix_time()


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, replay_events)
