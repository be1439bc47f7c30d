"""How fast the backlog drains, measured on the deployment's own recent runs (``richdoc
jobs backlog``, the console's task center).

A slot turns over in cycles: a run holds it from its admission to its release, and the
slot then waits for the next admission (none when a waiting job takes it over in the
release's own write; a dispatcher's wake when not). How long a cycle takes is what a
backlog drains at, so the estimate is made of cycles (``slot_cycles``, pure):

* **The run records**: every job record changed within ``WINDOW`` of now, whatever its
  status (a reprocess leaves few jobs SUCCEEDED, and a failed or cancelled run held its
  slot all the same), but the QUEUED ones (reading every waiting job would cost a read
  of the whole backlog): each has its latest holding's admission, its release (once
  given back) and when its run was queued.
* **Each release is paired with the next admission after it**, in time order (the slot
  it freed, whoever took it). The cycle is the hold plus the gap to that admission, the
  gap counted from the release or, when the admitted job was queued later, from its
  queueing: a slot that stood idle with nothing waiting is no part of a drain.
* **A release no admission has followed yet** counts the gap so far (now minus the
  release) while jobs wait, so a dispatcher that stopped admitting shows as a slower
  drain; while nothing waits, its hold alone.
* **The median cycle**: a few cold starts or very long documents move it little (a mean
  takes each of them in whole). The slots that serve the backlog are the capacity, or
  fewer when ``MaxRunningJobsPerTenant`` caps the tenants that wait; they turn over once
  a cycle, so the throughput is slots / cycle.
* **The drain** is the time until the last waiting job is admitted (``drain_time``): the
  slots are partway through their cycles now, so the first of ``s`` to free does so
  after 1/(s+1) of a cycle, the k-th after k/(s+1) (the expected k-th of s points at
  random in a cycle), and each later round of ``s`` admissions takes a whole cycle.
  Nothing waiting drains in 0 (``nothing waits``); without a cycle in the window there
  is no estimate (None), rather than a guess.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Key
from pydantic import BaseModel, ConfigDict

from richdoc.jobs import STATUS_INDEX, JobStatus, timestamp
from richdoc.jobs.table import query_all

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

# How far back the run records are read.
WINDOW = timedelta(hours=1)
# The attributes of a record a cycle needs (the by-status index projects them all).
FIELDS = ("job_id", "admitted_at", "released_at", "queued_at")


@dataclass(frozen=True)
class Holding:
    """One run's hold on its slot: when it was admitted, when (if yet) it gave the slot
    back, and when it was queued."""

    admitted: datetime
    released: datetime | None
    queued: datetime | None


class DrainEstimate(BaseModel):
    """The backlog's drain at the measured rate (``--json``'s members of the same names)."""

    model_config = ConfigDict(frozen=True)

    window_s: float  # how far back the run records were read
    cycles: int  # slot cycles measured in it
    median_cycle_s: float | None
    slots: int  # the slots that serve the waiting jobs
    throughput_per_hour: float | None
    drain_s: float | None  # 0: nothing waits; None: no cycle to measure on


def slot_cycles(holdings: Iterable[Holding], *, now: datetime, waiting: bool) -> list[float]:
    """Each release's slot cycle in seconds, by the rules above. Pure."""
    held = list(holdings)
    releases = sorted((h for h in held if h.released is not None), key=_released)
    admissions = sorted(held, key=lambda h: h.admitted)
    cycles, next_admission = [], 0
    for holding in releases:
        released = _released(holding)
        while next_admission < len(admissions) and (
            admissions[next_admission].admitted < released or admissions[next_admission] is holding
        ):
            next_admission += 1  # took a slot an earlier release freed, or a free one
        hold = (released - holding.admitted).total_seconds()
        if next_admission < len(admissions):
            taker = admissions[next_admission]
            next_admission += 1
            since = max(released, taker.queued or released)
            cycles.append(hold + max((taker.admitted - since).total_seconds(), 0.0))
        else:
            cycles.append(hold + ((now - released).total_seconds() if waiting else 0.0))
    return cycles


def estimate(
    holdings: Iterable[Holding],
    *,
    now: datetime,
    waiting: int,
    slots: int,
    window: timedelta = WINDOW,
) -> DrainEstimate:
    """The drain of ``waiting`` jobs through ``slots`` slots, at the median cycle. Pure."""
    cycles = slot_cycles(holdings, now=now, waiting=waiting > 0)
    median = round(statistics.median(cycles), 3) if cycles else None
    throughput = round(slots * 3600 / median, 1) if median else None
    if not waiting:
        drain: float | None = 0.0
    else:
        drain = round(drain_time(waiting, slots, median), 1) if median and slots else None
    return DrainEstimate(
        window_s=window.total_seconds(),
        cycles=len(cycles),
        median_cycle_s=median,
        slots=slots,
        throughput_per_hour=throughput,
        drain_s=drain,
    )


def drain_time(waiting: int, slots: int, cycle: float) -> float:
    """Seconds until the last of ``waiting`` jobs is admitted into ``slots`` slots that
    each turn over every ``cycle`` seconds, from a moment partway through their cycles."""
    rounds, last = divmod(waiting - 1, slots)
    return (rounds + (last + 1) / (slots + 1)) * cycle


def serving_slots(capacity: int, per_tenant: int, tenants_waiting: int) -> int:
    """The slots the waiting jobs can take: each tenant's share caps its own."""
    return min(capacity, per_tenant * tenants_waiting) if tenants_waiting else capacity


def recent_holdings(operator: Operator, now: datetime, window: timedelta = WINDOW) -> list[Holding]:
    """The holdings of the job records changed within ``window`` of ``now`` (every
    status but QUEUED; only the fields a cycle needs), released or admitted in it."""
    since = now - window
    names = {f"#f{i}": field for i, field in enumerate(FIELDS)}
    holdings = []
    for status in JobStatus:
        if status is JobStatus.QUEUED:
            continue
        items = query_all(
            operator.jobs.table,
            IndexName=STATUS_INDEX,
            KeyConditionExpression=Key("job_status").eq(status)
            & Key("updated_at").gte(timestamp(since)),
            ProjectionExpression=", ".join(names),
            ExpressionAttributeNames=names,
        )
        for item in items:
            holding = _holding(item)
            if holding is not None and max(holding.admitted, _released(holding)) >= since:
                holdings.append(holding)
    return holdings


def _holding(item: Mapping[str, object]) -> Holding | None:
    admitted, released, queued = (_moment(item.get(f)) for f in FIELDS[1:])
    if admitted is None:
        return None
    if released is not None and released < admitted:
        released = None  # the release of an earlier run: this one holds its slot still
    return Holding(admitted=admitted, released=released, queued=queued)


def _moment(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _released(holding: Holding) -> datetime:
    return holding.released or holding.admitted


def measure(
    operator: Operator, *, now: datetime, waiting: Sequence[int], capacity: int, per_tenant: int
) -> DrainEstimate:
    """The estimate for the backlog whose tenants wait ``waiting`` jobs each."""
    slots = serving_slots(capacity, per_tenant, sum(1 for w in waiting if w))
    return estimate(recent_holdings(operator, now), now=now, waiting=sum(waiting), slots=slots)
