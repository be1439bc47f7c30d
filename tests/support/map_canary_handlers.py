"""In-process Lambda handlers for tests/aws/test_map_state_canary.py, dispatched to by the
embedded stack's Lambda runtime (``richdoc_tools.local.runtime.lambdas``) as the real ones are.

``parse_shard`` stands in for the parse step of one page range: it records each call,
fails as ``SCRIPT`` says (per shard start and memory tier, one error per call, ``None``
for success), and can hold each call until ``GATE`` lets it go.
"""

from __future__ import annotations

import threading
from typing import Any


class CorruptInput(Exception):
    pass


class ResourceLimit(Exception):
    pass


class Transient(Exception):
    pass


ERRORS = {cls.__name__: cls for cls in (CorruptInput, ResourceLimit, Transient)}


class Gate:
    """Holds every call until ``width`` calls run at once, or no more will start."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.width = 0  # 0: no gate
        self.total = 0
        self.started = 0
        self.running = 0
        self.most = 0

    def reset(self, width: int = 0, total: int = 0) -> None:
        with self.condition:
            self.width, self.total = width, total
            self.started = self.running = self.most = 0

    def enter(self) -> None:
        with self.condition:
            self.started += 1
            self.running += 1
            self.most = max(self.most, self.running)
            self.condition.notify_all()
            if self.width:
                self.condition.wait_for(
                    lambda: self.running >= self.width or self.started >= self.total, timeout=30
                )

    def leave(self) -> None:
        with self.condition:
            self.running -= 1
            self.condition.notify_all()


GATE = Gate()
SCRIPT: dict[tuple[int, int], list[str | None]] = {}
CALLS: list[dict[str, Any]] = []
_lock = threading.Lock()


def parse_shard(event: dict[str, Any], context: Any) -> dict[str, Any]:
    GATE.enter()
    try:
        with _lock:
            CALLS.append({**event, "memory_mb": context.memory_limit_in_mb})
            planned = SCRIPT.get((event["start"], context.memory_limit_in_mb))
            error = planned.pop(0) if planned else None
        if error is not None:
            raise ERRORS[error](f"{error} for pages {event['start']}-{event['end']}")
        pages = f"pages-{event['start']}-{event['end']}"
        return {
            "docling_key": f"docling/{event['sha256']}/c/{pages}.json",
            "page_range": [event["start"], event["end"]],
            "padding": "x" * 200,  # what a ResultSelector leaves out
        }
    finally:
        GATE.leave()
