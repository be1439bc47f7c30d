"""The sweep's audit of admission: the ledger against the truth.

Slots are released from the jobs table's stream whenever a holding run ends, and the
dispatcher's minutely schedule releases any holder whose run has ended; the sweep goes
further, since it can close runs (``richdoc.records.backstops``):

* a holder whose run has ended (terminal, or a newer run) but still holds: released
  (``released``);
* a holder whose run is still open on its record: returned (``open_runs``) for the sweep
  to check its execution: one that ended without the job being closed (a lost status
  event, a crashed function) is closed as the reconciler would close it, and its slots
  are released through the stream as for any run that ends. So a lost event holds a slot
  for at most one sweep interval, not the workflow timeout;
* counts that disagree with the holders (the ledger's ``running``, a tenant's): set to the
  holders' sum, conditional on nothing having changed since the read (``recounted``).

Backlogs with waiting jobs that are out of the lane are put back by the dispatcher's
minutely schedule (``Backlog.repair``), not here: the sweep runs every quarter of an hour.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from richdoc.admission.backlog import Backlog
from richdoc.admission.slots import SlotLedger
from richdoc.jobs import Job, JobStore


@dataclass(frozen=True)
class AuditFindings:
    released: list[str] = field(default_factory=list)
    open_runs: list[Job] = field(default_factory=list)
    recounted: bool = False


class SlotAudit:
    def __init__(self, *, ledger: SlotLedger, backlog: Backlog, jobs: JobStore) -> None:
        self.ledger = ledger
        self.backlog = backlog
        self.jobs = jobs

    def audit(self) -> AuditFindings:
        ledger = self.ledger.read()
        current = self.jobs.get_many(ledger.holders)
        released, open_runs = [], []
        for job_id, holder in ledger.holders.items():
            job = current.get(job_id)
            if job is not None and job.run == holder.run and not job.status.terminal:
                open_runs.append(job)
            elif self.ledger.release(job_id, holder):
                released.append(job_id)
        recounted = False
        if not released:  # a release changed the ledger: the next sweep recounts
            in_lane = {entry.tenant for entry in self.backlog.entries()}
            tenants = sorted(in_lane | {h.tenant for h in ledger.holders.values()})
            seen = self.ledger.shares(tenants)
            truth = sum(h.slots for h in ledger.holders.values())
            wrong = {t: n for t, n in seen.items() if n != ledger.held_by(t)}
            if ledger.exists and (ledger.running != truth or wrong):
                recounted = self.ledger.recount(ledger, wrong)
        return AuditFindings(released=released, open_runs=open_runs, recounted=recounted)
