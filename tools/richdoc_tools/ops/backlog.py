"""The backlog as operators see it (``richdoc jobs backlog``, ``jobs list``, the console):
each waiting job's place and age, each tenant's backlogs, and when it all drains.

Places and depths come from the backlog index itself (``richdoc.admission.backlog``: a
tenant's uploads and its reprocessed runs are two backlogs), never from the lane, the
slots held from the ledger. The deployment's throughput is measured, not assumed: the
median slot cycle of the recent run records (``richdoc_tools.ops.drain``), and the drain
estimate is the waiting jobs at that rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from richdoc.admission.backlog import Backlog
from richdoc.admission.slots import SlotLedger
from richdoc.jobs import Job
from richdoc.jobs.keys import BacklogKind
from richdoc_tools.ops.drain import DrainEstimate, measure

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator


def duration(seconds: float | None) -> str:
    """``95`` -> ``1m35s``; ``7325`` -> ``2h02m``; None -> ``-``."""
    if seconds is None:
        return "-"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


class BacklogPlace(BaseModel):
    """Where a waiting job is: its place in its tenant's backlog (1: next) and how long it
    has waited."""

    model_config = ConfigDict(frozen=True)

    position: int
    waiting_s: float


def place_label(place: BacklogPlace | None, tenant: str | None) -> str | None:
    """A waiting job's place, as the lists show it: ``#3 of acme, 2m05s``."""
    if place is None:
        return None
    return f"#{place.position} of {tenant}, {duration(place.waiting_s)}"


class TenantBacklog(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant: str
    # Which of the tenant's backlogs (``queue``: a member of ``richdoc jobs backlog --json``
    # and of the console's data, kept as it is).
    queue: BacklogKind = BacklogKind.UPLOADS
    waiting: int
    oldest_queued_at: str | None
    oldest_waiting_s: float | None
    slots: int  # its jobs hold now


class BacklogOutlook(BaseModel):
    """``richdoc jobs backlog --json``."""

    model_config = ConfigDict(frozen=True)

    capacity: int | None  # None: a stack deployed before admission
    per_tenant: int | None
    slots_held: int
    waiting: int
    tenants: list[TenantBacklog]
    drain: DrainEstimate | None  # None: a stack deployed before admission


def _backlog(operator: Operator) -> Backlog:
    return Backlog(operator.jobs.table, operator.jobs.clock)


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def places(
    operator: Operator, jobs: Iterable[Job], now: datetime | None = None
) -> dict[str, BacklogPlace]:
    """The place of each of ``jobs`` that waits in the backlog: one pass over each of
    their tenants' backlogs, up to the last of them."""
    backlog, moment = _backlog(operator), now or datetime.now(UTC)
    waiting: dict[tuple[str, BacklogKind | None], list[Job]] = {}
    for job in jobs:
        if job.waiting and job.tenant is not None and job.queued_at:
            waiting.setdefault((job.tenant, job.backlog), []).append(job)
    found = {}
    for (tenant, _), queued in waiting.items():
        positions = backlog.positions(tenant, max(j.backlog_key or "" for j in queued))
        for job in queued:
            if job.job_id in positions and job.queued_at:
                waited = (moment - datetime.fromisoformat(job.queued_at)).total_seconds()
                found[job.job_id] = BacklogPlace(
                    position=positions[job.job_id], waiting_s=round(max(waited, 0), 1)
                )
    return found


def outlook(operator: Operator, now: datetime | None = None) -> BacklogOutlook:
    """Every tenant with waiting jobs, the slots held, and when the backlog drains."""
    moment = now or datetime.now(UTC)
    backlog = _backlog(operator)
    settings = operator.resources.admission
    ledger = (
        SlotLedger(operator.jobs.table, settings, operator.jobs.clock).read()
        if settings is not None
        else None
    )
    # The backlogs the index counts waiting jobs in (the oldest first), then the tenants
    # that only run.
    census = backlog.census()
    counted = sorted(census.backlogs, key=lambda q: (q.oldest_queued_at, q.tenant, q.backlog))
    holding = {h.tenant for h in ledger.holders.values()} if ledger else set()
    idle = sorted(holding - {q.tenant for q in counted})
    tenants = []
    for count in counted:
        waited = _seconds(count.oldest_queued_at, moment.isoformat())
        tenants.append(
            TenantBacklog(
                tenant=count.tenant,
                queue=count.backlog,
                waiting=count.waiting,
                oldest_queued_at=count.oldest_queued_at,
                oldest_waiting_s=None if waited is None else round(max(waited, 0), 1),
                slots=ledger.held_by(count.tenant) if ledger else 0,
            )
        )
    tenants += [
        TenantBacklog(
            tenant=name,
            waiting=0,
            oldest_queued_at=None,
            oldest_waiting_s=None,
            slots=ledger.held_by(name) if ledger else 0,
        )
        for name in idle
    ]
    waiting = sum(t.waiting for t in tenants)
    drain = None
    if settings is not None:
        by_tenant: dict[str, int] = {}
        for t in tenants:  # a tenant's two backlogs are one tenant's share of the slots
            by_tenant[t.tenant] = by_tenant.get(t.tenant, 0) + t.waiting
        drain = measure(
            operator,
            now=moment,
            waiting=list(by_tenant.values()),
            capacity=settings.capacity,
            per_tenant=settings.per_tenant,
        )
    return BacklogOutlook(
        capacity=settings.capacity if settings else None,
        per_tenant=settings.per_tenant if settings else None,
        slots_held=ledger.running if ledger else 0,
        waiting=waiting,
        tenants=tenants,
        drain=drain,
    )
