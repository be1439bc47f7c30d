"""The embedded stack's delivery threads: what each event loop shares.

A loop ticks while there is work; when a tick finds none it sleeps until what it waits
for happens (its ``Signal``: a stream record appended, a message sent, an execution
ended) or, at the latest, for its interval. Waking on the event instead of polling at a
short interval keeps the loops' cost proportional to the work, not to the time a run
takes: polling made every request the loops sent cost more the longer a loaded machine
took (bench/, item 5).

Their users (``richdoc run``, the tests) await what the deliveries have done on its
observable condition: ``wait_until``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Signal:
    """Something the loops wait for: a count that moves each time it happens."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.count = 0

    def notify(self) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait_past(self, seen: int, timeout_s: float) -> None:
        """Until the count is no longer ``seen`` (it happened after the caller looked),
        or ``timeout_s``."""
        with self._changed:
            self._changed.wait_for(lambda: self.count != seen, timeout_s)


class EventLoop(threading.Thread):
    """A delivery thread: ``tick`` until stopped; after an idle tick, wait for ``wakes_on``
    (if any) or ``interval_s``, whichever comes first."""

    def __init__(self, name: str, interval_s: float, wakes_on: Signal | None = None) -> None:
        super().__init__(name=name, daemon=True)
        self.interval_s = interval_s
        self.wakes_on = wakes_on
        self.seen = 0  # the signal's count when the last tick began: nothing after is missed
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []

    def stop(self) -> None:
        self.stopping.set()
        if self.wakes_on is not None:
            self.wakes_on.notify()  # wakes the loop to see it is stopping

    def run(self) -> None:
        while not self.stopping.is_set():
            self.look()
            try:
                busy = self.tick()
            except Exception as exc:  # keep delivering; surface the error to the stack
                self.errors.append(exc)
                busy = False
            if not busy:
                self.wait(self.idle_wait_s())

    def look(self) -> None:
        """Note the signal's count before a tick looks, so that nothing after is missed."""
        if self.wakes_on is not None:
            self.seen = self.wakes_on.count

    def idle_wait_s(self) -> float:
        """How long an idle loop may sleep when nothing wakes it."""
        return self.interval_s

    def wait(self, timeout_s: float) -> None:
        """Until the next tick is worth making (or ``timeout_s``, or a stop)."""
        if self.wakes_on is None:
            self.stopping.wait(timeout_s)
        else:
            self.wakes_on.wait_past(self.seen, timeout_s)

    def tick(self) -> bool:
        """Deliver what there is; whether there was anything."""
        raise NotImplementedError


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.05) -> bool:
    """Whether ``predicate`` held within ``timeout_s`` (asked every ``interval_s``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return predicate()
