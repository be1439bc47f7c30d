"""Following one job until its run ends (``richdoc jobs watch``, and the console).

The job record is read (one consistent read) at an adaptive interval: often just after
it changed, less and less often while it does not (up to ``MAX_INTERVAL_S``), so a long
parse costs a few reads a minute and a phase change is still seen within a second or so
of the next read after it. Each change of status or progress is handed to the caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from richdoc.jobs import Job, JobStore, Progress

MIN_INTERVAL_S = 0.5
MAX_INTERVAL_S = 10.0
BACKOFF = 1.5


class WatchTimedOut(Exception):
    def __init__(self, job: Job) -> None:
        super().__init__(f"job {job.job_id} is still {job.status}")
        self.job = job


@dataclass(frozen=True)
class Seen:
    """What a watcher compares between reads."""

    status: str
    run: int
    progress: Progress

    @classmethod
    def of(cls, job: Job) -> Seen:
        return cls(status=job.status, run=job.run, progress=job.progress())


def next_interval(current: float, changed: bool) -> float:
    """Back to the shortest interval after a change; longer each unchanged read."""
    return MIN_INTERVAL_S if changed else min(MAX_INTERVAL_S, current * BACKOFF)


def watch_job(
    store: JobStore,
    job_id: str,
    *,
    on_change: Callable[[Job], None],
    timeout_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Job:
    """Read the job until it is terminal; ``on_change`` gets the first reading and every
    one that differs. WatchTimedOut (with the last reading) after ``timeout_s``."""
    deadline = None if timeout_s is None else clock() + timeout_s
    interval, last = MIN_INTERVAL_S, None
    while True:
        job = store.get(job_id)
        if job is None:
            raise LookupError(f"no job {job_id}")
        seen = Seen.of(job)
        changed = seen != last
        if changed:
            on_change(job)
            last = seen
        if job.status.terminal:
            return job
        if deadline is not None and clock() >= deadline:
            raise WatchTimedOut(job)
        interval = next_interval(interval, changed)
        sleep(interval if deadline is None else max(0.0, min(interval, deadline - clock())))
