"""The embedded stack's clock: the time its emulated services act on, which runs faster
than the wall clock when asked and which tests move forward.

S3 lifecycle rules count days, and Lambda's stream event source ages records in hours:
neither can be waited out in a test or a demo. ``StackClock.now`` is the wall clock's
time, run ``rate`` times faster since the stack started (``richdoc local serve
--lifecycle-day 60``: a day lasts a minute), plus what ``advance`` added. The services
that age things read it (``runtime.s3_lifecycle``, ``runtime.streams``); everything else
(object timestamps, job records) keeps the wall clock, so an advanced clock makes what
exists older, as time would. The lifecycle's loop wakes when the clock is advanced
(``advanced``).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from richdoc_tools.local.runtime.loops import Signal

DAY_S = 86_400.0


class StackClock:
    def __init__(self, rate: float = 1.0) -> None:
        if rate <= 0:
            raise ValueError("the clock's rate must be above 0")
        self.rate = rate
        self._started_at = datetime.now(UTC)
        self._started = time.monotonic()
        self._advanced = timedelta()
        self._lock = threading.Lock()
        self.advanced = Signal()  # notified each time ``advance`` moves the clock

    @classmethod
    def with_day(cls, day_s: float) -> StackClock:
        """A clock on which a day lasts ``day_s`` seconds of the wall clock."""
        return cls(rate=DAY_S / day_s)

    def now(self) -> datetime:
        with self._lock:
            elapsed = timedelta(seconds=(time.monotonic() - self._started) * self.rate)
            return self._started_at + elapsed + self._advanced

    def advance(self, by: timedelta) -> datetime:
        """Move the clock forward by ``by``; the new time."""
        if by < timedelta():
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._advanced += by
        self.advanced.notify()
        return self.now()
