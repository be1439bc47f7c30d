"""The dispatcher: slots given back when runs end, waiting jobs admitted into them.

It is woken by the jobs table's stream (a job that starts waiting; a job holding slots
whose run ended, whoever ended it) and by a schedule (every minute, a backstop), and each
time it does the same three things:

1. **release** the slots of holders whose run has ended (terminal, or a newer run): read
   the ledger, check each such holder against its job, ``SlotLedger.release`` (exactly
   once);
2. **admit** while there is room: the least recently served tenant with waiting jobs and
   room under its share, its oldest waiting job (FIFO by upload time), ``SlotLedger.admit``
   (conditional: concurrent dispatchers cannot over-admit), then start the run's
   execution, named ``<job id>-r<run>`` with the input the job record holds, so a start
   repeated after a failure or by another dispatcher is the same execution;
3. on the schedule, start again the admitted runs whose execution did not start
   (StartExecution throttled or failed after the admission) and report the backlog's
   depth, its oldest age and the slots held as metrics.

The run itself goes on as before: its execution's ``RecordStart`` marks the job RUNNING.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger
from pydantic import BaseModel, ConfigDict

from richdoc.admission.backlog import NEVER_SERVED, Backlog, TenantState
from richdoc.admission.slots import Admission, Handover, Holder, Ledger, SlotLedger
from richdoc.awserrors import aws_errors
from richdoc.contracts import ExecutionInput
from richdoc.jobs import Job, JobStatus, JobStore, execution_name, timestamp
from richdoc.records.actions import emit
from richdoc.taxonomy import Transient

if TYPE_CHECKING:
    from types_boto3_stepfunctions import SFNClient

# An admitted run whose execution has not started this long after its admission is
# started again by the schedule (a first start still under way is not raced).
RESTART_AFTER_S = 60
# The most jobs one dispatch admits (a Lambda invocation has a timeout; the next trigger
# goes on).
MAX_ADMISSIONS = 500
# How many of a tenant's oldest waiting jobs one look at its queue reads (the index lags:
# the first may have been admitted or cancelled a moment ago).
LOOK_AHEAD = 5


class Dispatched(BaseModel):
    """What one wake of the dispatcher did (its answer, and its log line)."""

    model_config = ConfigDict(frozen=True)

    released: list[str] = []
    admitted: list[str] = []
    restarted: list[str] = []


@dataclass
class Turns:
    """Whose turn it is (the lane, least recently served first, those under their share),
    each tenant's next waiting jobs as far as read, and how many tenants the lane held."""

    queue: deque[TenantState]
    next_jobs: dict[str, deque[Job]]
    tenants: int
    free: int | None = None  # slots known free (None: not read; the ledger says when full)


class Dispatcher:
    def __init__(
        self,
        *,
        jobs: JobStore,
        ledger: SlotLedger,
        backlog: Backlog,
        sfn: SFNClient,
        state_machine_arn: str,
        logger: Logger,
        now: Callable[[], datetime],
    ) -> None:
        self.jobs = jobs
        self.ledger = ledger
        self.backlog = backlog
        self.sfn = sfn
        self.state_machine_arn = state_machine_arn
        self.logger = logger
        self.now = now

    # ---- the triggers ------------------------------------------------------------------

    def changes(self, jobs: Iterable[Job]) -> Dispatched:
        """The stream's job records (new images): each run that ended hands its slot over
        to the next waiting job in one transaction (the slot is never seen free), or gives
        it back when nobody waits; then the rest of the room is admitted into. An image
        says what its run held, so nothing is read first (the transaction's conditions
        check the ledger's record of the holding); one the ledger does not agree with is
        released as the ledger says, after a check of its job."""
        ended = [job for job in jobs if job.slots is not None and not _holds(job)]
        # Whose turn it is, and that tenant's next waiting jobs, while the ending runs
        # still hold their slots.
        turns = self._turns(room_known=bool(ended))
        released, admitted, unsure = [], [], []
        for job in ended:
            assert job.slots is not None
            holding = Holder(
                run=job.slots_run or job.run,
                slots=job.slots,
                tenant=job.tenant or "",
                admitted_at=job.admitted_at or "",
            )
            handed, taken = self._hand_over(job.job_id, holding, turns)
            if taken is not None:
                admitted.append(taken.job_id)
            if handed or self.ledger.release(job.job_id, holding):
                released.append(job.job_id)
                self._released(job.job_id, holding)
            else:
                unsure.append(job.job_id)
        if unsure:
            released += self.release(unsure)
        return Dispatched(released=released, admitted=admitted + self.admit(turns))

    def _hand_over(self, ended_id: str, holding: Holder, turns: Turns) -> tuple[bool, Job | None]:
        """Hand the ended run's slot to the next waiting job in turn: (released, the job
        admitted). Nobody waiting, or a holding the ledger does not record as the image
        says: nothing done (the caller releases)."""
        while turns.queue and turns.free != 0:
            tenant = turns.queue[0]
            queue = turns.next_jobs.get(tenant.tenant)
            if not queue:
                queue = turns.next_jobs[tenant.tenant] = self._waiting(tenant.tenant)
                if not queue:
                    self.backlog.clear(tenant, self.now())
                    turns.queue.popleft()
                    continue
            job = queue[0]
            outcome = self.ledger.hand_over(ended_id, holding, job)
            if outcome is Handover.GONE:
                queue.popleft()  # the index lagged: admitted, cancelled or deleted
                continue
            if outcome is Handover.TENANT_FULL:
                turns.queue.popleft()  # its share is held: its turn is over
                continue
            if outcome is not Handover.HANDED:
                return False, None
            queue.popleft()
            turns.queue.popleft()
            self._admitted(job, tenant, turns)
            return True, job
        return False, None

    def schedule(self) -> Dispatched:
        """The minutely backstop: release, admit, start what did not start; metrics."""
        ledger = self.ledger.read()
        released = self.release(ledger.holders, ledger)
        admitted = self.admit()
        restarted = self.restart_unstarted()
        self.report()
        return Dispatched(released=released, admitted=admitted, restarted=restarted)

    # ---- the work ----------------------------------------------------------------------

    def release(self, job_ids: Iterable[str], ledger: Ledger | None = None) -> list[str]:
        """Give back the slots of those jobs whose holding run has ended."""
        ledger = ledger or self.ledger.read()
        held = {job_id: ledger.holders[job_id] for job_id in job_ids if job_id in ledger.holders}
        if not held:
            return []
        current = self.jobs.get_many(held)
        released = []
        for job_id, holder in held.items():
            job = current.get(job_id)
            if job is not None and job.run == holder.run and not job.status.terminal:
                continue  # still running (or admitted, starting)
            if self.ledger.release(job_id, holder):
                released.append(job_id)
                self._released(job_id, holder)
        return released

    def _released(self, job_id: str, holder: Holder) -> None:
        self.logger.info(
            "slots released", extra={"job_id": job_id, "run": holder.run, "slots": holder.slots}
        )

    def admit(self, turns: Turns | None = None) -> list[str]:
        """Admit waiting jobs while there is room: tenant by tenant, least recently
        served first, each tenant's oldest job first. The ledger's conditions make every
        admission safe, so ``turns`` read earlier (``_turns``) may be used as they are;
        the tenants and their next jobs are read once per dispatch, not per admission."""
        turns = turns if turns is not None else self._turns(room_known=False)
        admitted: list[str] = []
        while turns.queue and len(admitted) < MAX_ADMISSIONS and turns.free != 0:
            tenant = turns.queue[0]
            outcome, job = self._admit_next(tenant, turns.next_jobs)
            if outcome is Admission.FULL:
                break
            if job is None:
                turns.queue.popleft()  # its queue is empty, or it holds its share
                continue
            admitted.append(job.job_id)
            if turns.free is not None:
                turns.free -= 1
            turns.queue.popleft()
            self._admitted(job, tenant, turns)
        return admitted

    def _admitted(self, job: Job, tenant: TenantState, turns: Turns) -> None:
        """After an admission: the tenant's turn recorded, the run's execution started,
        the tenant to the back of the lane."""
        self.logger.info(
            "job admitted", extra={"job_id": job.job_id, "run": job.run, "tenant": job.tenant}
        )
        emit("JobsAdmitted", 1)
        # Alone in the lane, a tenant's turns order nobody: its first is recorded (a
        # tenant never served goes first), the others while it waits alone are not.
        if turns.tenants > 1 or tenant.last_served == NEVER_SERVED:
            self.backlog.served(tenant.tenant)
        self.start(job)
        turns.queue.append(tenant)

    def _turns(self, *, room_known: bool) -> Turns:
        """The tenants whose turn it is, in order, with the first one's next waiting jobs
        read ahead. Empty when the ledger is full (unless ``room_known``: slots are about
        to be released)."""
        settings = self.ledger.settings
        free = None
        if not room_known:
            ledger = self.ledger.read()
            if not ledger.exists:
                self.ledger.ensure()
            free = settings.capacity - ledger.running
            if free <= 0:
                return Turns(deque(), {}, 0, 0)
        lane = self.backlog.tenants()
        held = (
            self.ledger.shares([t.tenant for t in lane])
            if settings.per_tenant < settings.capacity
            else {}
        )
        queue = deque(t for t in lane if held.get(t.tenant, 0) < settings.per_tenant)
        turns = Turns(queue, {}, len(lane), free)
        if queue:
            turns.next_jobs[queue[0].tenant] = self._waiting(queue[0].tenant)
        return turns

    def _waiting(self, tenant: str) -> deque[Job]:
        """The tenant's oldest waiting jobs, in queue order (the index lags the table: a
        job admitted, cancelled or deleted a moment ago may still be listed)."""
        waiting = self.backlog.oldest(tenant, LOOK_AHEAD)
        found = self.jobs.get_many(waiting) if waiting else {}
        return deque(found[i] for i in waiting if i in found and found[i].waiting)

    def _admit_next(
        self, tenant: TenantState, next_jobs: dict[str, deque[Job]]
    ) -> tuple[Admission | None, Job | None]:
        """Admit the tenant's oldest waiting job; the outcome and the job admitted."""
        while True:
            queue = next_jobs.get(tenant.tenant)
            if not queue:
                queue = next_jobs[tenant.tenant] = self._waiting(tenant.tenant)
                if not queue:
                    self.backlog.clear(tenant, self.now())
                    return None, None
            job = queue.popleft()
            outcome = self.ledger.admit(job)
            if outcome is Admission.ADMITTED:
                return outcome, job
            if outcome in (Admission.FULL, Admission.TENANT_FULL):
                return outcome, None

    def start(self, job: Job) -> bool:
        """Start the admitted run's execution; whether it is (or was already) started.
        A start that fails is left to the schedule (``restart_unstarted``)."""
        if job.message is None:
            self.logger.error("admitted job has no ingest message", extra={"job_id": job.job_id})
            return False
        name = execution_name(job.job_id, job.run)
        execution_input = ExecutionInput(
            job_id=job.job_id,
            run=job.run,
            source=job.source,
            options=job.options,
            message=job.message,
        )
        try:
            with aws_errors(f"starting execution {name}"):
                self.sfn.start_execution(
                    stateMachineArn=self.state_machine_arn,
                    name=name,
                    input=json.dumps(execution_input.model_dump(mode="json"), sort_keys=True),
                )
        except self.sfn.exceptions.ExecutionAlreadyExists:
            return True
        except Transient as exc:
            self.logger.warning(
                "execution not started; the schedule starts it again",
                extra={"job_id": job.job_id, "run": job.run, "reason": exc.reason},
            )
            return False
        return True

    def restart_unstarted(self) -> list[str]:
        """Start again the admitted runs still QUEUED a while after their admission."""
        ledger = self.ledger.read()
        cutoff = timestamp(self.now() - timedelta(seconds=RESTART_AFTER_S))
        stale = [job_id for job_id, holder in ledger.holders.items() if holder.admitted_at < cutoff]
        restarted = []
        for job_id, job in self.jobs.get_many(stale).items():
            holder = ledger.holders[job_id]
            if job.status is JobStatus.QUEUED and job.run == holder.run and self.start(job):
                restarted.append(job_id)
        return restarted

    def report(self) -> None:
        """The backlog's depth, its oldest job's age and the slots held, as metrics
        (every minute, zeros too: the alarms see the dispatcher runs)."""
        depth, oldest = 0, None
        for tenant in self.backlog.tenants():
            depth += self.backlog.depth(tenant.tenant)
            queued_at = self.backlog.oldest_queued_at(tenant.tenant)
            if queued_at is not None and (oldest is None or queued_at < oldest):
                oldest = queued_at
        age = 0.0
        if oldest is not None:
            age = max(0.0, (self.now() - datetime.fromisoformat(oldest)).total_seconds())
        emit("BacklogDepth", depth)
        emit("OldestQueuedAgeSeconds", round(age, 1))
        emit("SlotsHeld", self.ledger.read().running)


def _holds(job: Job) -> bool:
    """Whether the job's record says its run still holds its slots (it may still be
    starting, running, or failing toward its dead letter)."""
    return not job.status.terminal and job.slots_run == job.run
