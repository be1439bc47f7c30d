"""The sweep's walk over the open jobs: a page at a time, to a time budget, resumed where
the last sweep stopped.

The sweep looks for jobs left open longer than the workflow timeout (``backstops``). It
finds them through the by-status index, status by status, oldest first
(``JobStore.unchanged_page``), cheapest first: RUNNING and FAILED (a handful, whatever the
backlog), then QUEUED, then CANCELLED runs no backstop has closed. A job waiting in the
backlog is QUEUED and unchanged for as long as it waits, so a backlog older than the
timeout would otherwise be read, job by job, by every sweep; the query's filter leaves
waiting jobs out (DynamoDB still reads them, about 600 to a 1 MB page, but the function
receives none of them).

A sweep runs in a Lambda function with a timeout: it takes the next page, and the next
job, only while its budget lasts (``Budget``: in Lambda, the invocation's remaining
time less a reserve for what is under way), and otherwise saves where it stopped in the
jobs table (``keys.sweep_cursor_key``: the status and the index key of the last job it
handled). The next sweep goes on from there; a walk that reaches the end starts again
from the beginning at the next sweep. So a backlog of any size delays the walk, never
stops it, and the function holds one page at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from richdoc.awserrors import aws_errors, retry_conflicts
from richdoc.jobs import Job, JobStatus, JobStore
from richdoc.jobs.keys import sweep_cursor_key

# The statuses the walk goes through, in order.
WALK = (JobStatus.RUNNING, JobStatus.FAILED, JobStatus.QUEUED, JobStatus.CANCELLED)
# What a sweep keeps of its Lambda invocation's time for the job under way and for saving
# where it stopped: it takes no more work once less than this is left.
RESERVE_FRACTION = 0.5


class Budget(Protocol):
    def spent(self) -> bool:
        """Whether the sweep must stop taking more work."""
        ...


@dataclass(frozen=True)
class TimeBudget:
    """Spent once the invocation has ``reserve_ms`` or less left."""

    remaining_ms: Callable[[], int]
    reserve_ms: int

    @classmethod
    def of_invocation(cls, remaining_ms: Callable[[], int]) -> TimeBudget:
        """A budget that keeps ``RESERVE_FRACTION`` of the time the invocation has now."""
        return cls(remaining_ms, int(remaining_ms() * RESERVE_FRACTION))

    def spent(self) -> bool:
        return self.remaining_ms() <= self.reserve_ms


class Unlimited:
    """No budget: the walk goes to the end (a sweep called outside Lambda)."""

    def spent(self) -> bool:
        return False


class SweepCursor(BaseModel):
    """Where the walk stopped: the status it was walking and the index key of the last
    job it handled there (None: from that status's first job)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    status: JobStatus = WALK[0]
    after: dict[str, Any] | None = None


class SweepWalk:
    """One sweep's part of the walk (see the module's docstring)."""

    def __init__(self, jobs: JobStore, cutoff: datetime, budget: Budget) -> None:
        self.jobs = jobs
        self.cutoff = cutoff
        self.budget = budget
        self.index_pages = 0  # index pages read
        self.read = 0  # jobs the function received
        self.finished = False  # the walk reached the end of the open jobs

    def candidates(self) -> Iterator[Job]:
        """The open jobs unchanged since the cutoff, from where the last sweep stopped,
        as long as the budget lasts; a job counts as handled once the caller asks for
        the next one."""
        cursor = self._load()
        for status in WALK[WALK.index(cursor.status) :]:
            after = cursor.after if status is cursor.status else None
            while True:
                if self.budget.spent():
                    self._save(SweepCursor(status=status, after=after))
                    return
                page = self.jobs.unchanged_page(status, self.cutoff, after)
                self.index_pages += 1
                self.read += len(page.jobs)
                for job, key in page.jobs:
                    if self.budget.spent():
                        self._save(SweepCursor(status=status, after=after))
                        return
                    yield job
                    after = key
                if page.after is None:
                    break
                after = dict(page.after)
        self.finished = True
        self._save(SweepCursor())

    def _load(self) -> SweepCursor:
        with aws_errors("reading the sweep's cursor"):
            item = self.jobs.table.get_item(Key=sweep_cursor_key(), ConsistentRead=True).get("Item")
        return SweepCursor.model_validate(item) if item else SweepCursor()

    def _save(self, cursor: SweepCursor) -> None:
        item: Mapping[str, Any] = {
            **sweep_cursor_key(),
            **cursor.model_dump(mode="json", exclude_none=True),
            "updated_at": self.jobs.clock(),
        }
        with aws_errors("saving the sweep's cursor"):
            retry_conflicts(self.jobs.table.put_item, Item=dict(item))
