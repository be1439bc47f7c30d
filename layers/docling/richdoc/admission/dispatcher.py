"""The dispatcher: slots given back when runs end, waiting jobs admitted into them.

It is woken by the jobs table's stream (a job that starts waiting; a job holding slots
whose run ended, whoever ended it) and by a schedule (every minute, a backstop), and each
time it does the same things:

1. **release** the slots of holders whose run has ended (terminal, or a newer run): read
   the ledger, check each such holder against its job, ``SlotLedger.release`` (exactly
   once);
2. **admit** while there is room: the least recently served backlog in the lane (a
   tenant's uploads, or its reprocessed runs) whose tenant has room under its share, its oldest
   waiting job, ``SlotLedger.admit`` (conditional: concurrent dispatchers cannot
   over-admit), then start the run's execution, named ``<job id>-r<run>`` with the input
   the job record holds, so a start repeated after a failure or by another dispatcher is
   the same execution;
3. on the schedule, start again the admitted runs whose execution did not start
   (StartExecution throttled or failed after the admission), count the waiting jobs from
   the backlog index, put back in the lane any backlog it counts waiting jobs in, and report the
   backlog's depth, its oldest age and the slots held as metrics.

Its work does not grow with the number of tenants: the lane is read a page at a time,
only as far as the turns it gives out, and the backlog is counted in one pass over the
keys-only backlog index (a page holds thousands of waiting jobs), not backlog by backlog.

The indexes it reads lag the table (``richdoc.admission.backlog``): a look at a backlog
pages past the entries whose jobs no longer wait, and a backlog leaves the lane only when
the index listed no job in it at all.

The run itself goes on as before: its execution's ``RecordStart`` marks the job RUNNING.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from pydantic import BaseModel, ConfigDict

from richdoc.admission.backlog import NEVER_SERVED, Backlog, LaneEntry
from richdoc.admission.slots import Admission, Handover, Holder, Ledger, SlotLedger
from richdoc.awserrors import aws_errors
from richdoc.contracts import ExecutionInput
from richdoc.jobs import Job, JobStatus, JobStore, execution_name, timestamp
from richdoc.jobs.keys import BacklogKind
from richdoc.metrics import emit
from richdoc.taxonomy import Transient

if TYPE_CHECKING:
    from types_boto3_stepfunctions import SFNClient

# An admitted run whose execution has not started this long after its admission is
# started again by the schedule (a first start still under way is not raced).
RESTART_AFTER_S = 60
# The most jobs one dispatch admits (a Lambda invocation has a timeout; the next trigger
# goes on).
MAX_ADMISSIONS = 500
# How many of a backlog's oldest entries a look reads first (the index lags: the first may
# have been admitted or cancelled a moment ago).
LOOK_AHEAD = 5
# Past entries whose jobs no longer wait a look reads on, each page twice as long as the
# last (up to STALE_PAGE_MAX), for at most STALE_PAGES pages; a backlog whose index shows
# only such entries that far passes its turn and stays in the lane (the next look reads an
# index that has caught up).
STALE_PAGES = 4
STALE_PAGE_MAX = 100

BacklogName = tuple[str, BacklogKind]


class Dispatched(BaseModel):
    """What one wake of the dispatcher did (its answer, and its log line); the schedule
    also says what the backlog index counts waiting and the backlogs it put back in the
    lane (the member ``lanes``: the answer is a contract of the function, kept as it is)."""

    model_config = ConfigDict(frozen=True)

    released: list[str] = []
    admitted: list[str] = []
    restarted: list[str] = []
    lanes: list[str] = []
    waiting: int | None = None
    oldest_waiting_s: float | None = None


def _name(entry: LaneEntry) -> BacklogName:
    return entry.tenant, entry.backlog


class Turns:
    """Whose turn it is: the lane's backlogs, least recently served first, read a page at
    a time and only as far as the turns given out need (backlogs whose tenant holds its
    share passed over), then the backlogs jobs just arrived in that the lane's index does
    not list yet, then the backlogs served in this dispatch again, in the order they were
    served; each backlog's next waiting jobs as far as read, and where its last look ended.

    ``arrivals`` are the jobs whose write woke this dispatch as they started waiting (the
    stream's images): the backlog index may not list them yet, so a look that finds no job
    in their backlog takes them instead (the ledger's conditions check they still wait)."""

    def __init__(
        self,
        lane: Iterator[list[LaneEntry]] | None,
        *,
        held: Callable[[list[str]], Mapping[str, int]] | None = None,
        share: int = 0,
        free: int | None = None,
        arrivals: Iterable[Job] = (),
    ) -> None:
        self._lane = lane
        self._held = held  # a tenant's slots (None: no tenant has a share to hold)
        self._share = share
        self._listed: set[BacklogName] = set()  # the backlogs the lane's index listed
        self.ahead: deque[LaneEntry] = deque()  # read, not served in this dispatch yet
        self.again: deque[LaneEntry] = deque()  # served in this dispatch, in order
        self.next_jobs: dict[BacklogName, deque[Job]] = {}
        self.read_to: dict[BacklogName, Mapping[str, Any]] = {}
        self.arrivals: dict[BacklogName, deque[Job]] = {}
        for job in sorted(arrivals, key=lambda job: job.backlog_key or ""):
            if job.tenant is not None and job.backlog is not None:
                self.arrivals.setdefault((job.tenant, job.backlog), deque()).append(job)
        self.crowded = False  # more than one backlog in the lane: turns must be recorded
        self.free = free  # slots known free (None: not read; the ledger says when full)

    @classmethod
    def none(cls) -> Turns:
        """No turns: every slot is held."""
        return cls(None, free=0)

    def front(self) -> LaneEntry | None:
        """The backlog whose turn it is; None when no backlog has one left."""
        while not self.ahead and self._lane is not None:
            page = next(self._lane, None)
            if page is None:
                self._lane = None
                page = [
                    LaneEntry(tenant=tenant, backlog=backlog)
                    for tenant, backlog in self.arrivals
                    if (tenant, backlog) not in self._listed
                ]
            else:
                self._listed.update(_name(entry) for entry in page)
                if not self.crowded and not self.again:
                    self.crowded = len(page) > 1
            if self._held is not None and page:
                held = self._held(sorted({entry.tenant for entry in page}))
                page = [e for e in page if held.get(e.tenant, 0) < self._share]
            self.ahead.extend(page)
        if self.ahead:
            return self.ahead[0]
        return self.again[0] if self.again else None

    def passed(self) -> None:
        """The front backlog's turn is over for this dispatch (empty, or its tenant full)."""
        (self.ahead or self.again).popleft()

    def served(self) -> None:
        """The front backlog was just served: it goes behind every backlog still to serve."""
        self.again.append((self.ahead or self.again).popleft())


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
        images = list(jobs)
        ended = [job for job in images if job.slots is not None and not _holds(job)]
        arrived = [job for job in images if job.waiting]
        turns = self._turns(room_known=bool(ended), arrivals=arrived)
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
        job = self._take_next(turns, lambda job: self.ledger.hand_over(ended_id, holding, job))
        return job is not None, job

    def schedule(self) -> Dispatched:
        """The minutely backstop: release, admit, start what did not start; the backlog
        counted from the backlog index, its backlogs put back in the lane, metrics."""
        ledger = self.ledger.read()
        released = self.release(ledger.holders, ledger)
        admitted = self.admit()
        restarted = self.restart_unstarted()
        census = self.backlog.census()
        lanes = [entry.name for entry in self.backlog.repair(census)]
        if lanes:
            self.logger.warning("backlogs put back in the lane", extra={"queues": lanes})
        age = round(census.age_s(self.now()), 1)
        self.report(census.waiting, age)
        return Dispatched(
            released=released,
            admitted=admitted,
            restarted=restarted,
            lanes=lanes,
            waiting=census.waiting,
            oldest_waiting_s=age,
        )

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
        """Admit waiting jobs while there is room: backlog by backlog, least recently
        served first, each backlog's oldest job first. The ledger's conditions make every
        admission safe, so ``turns`` read earlier (``_turns``) may be used as they are."""
        turns = turns if turns is not None else self._turns(room_known=False)
        admitted: list[str] = []
        while len(admitted) < MAX_ADMISSIONS:
            job = self._take_next(turns, self.ledger.admit)
            if job is None:
                break
            admitted.append(job.job_id)
            if turns.free is not None:
                turns.free -= 1
        return admitted

    def _take_next(self, turns: Turns, take: Callable[[Job], Admission | Handover]) -> Job | None:
        """The lane walked in turn until ``take`` (an admission, or a hand-over) gives a
        slot to a waiting job: a job that no longer waits is passed over (the index
        lagged: admitted, cancelled or deleted), a backlog whose tenant holds its share ends
        its turn. The job admitted (its turn recorded, its run started), or None: no backlog
        had a job to give, or ``take`` stopped the walk (every slot held; a holding the
        ledger does not record as the caller said)."""
        while turns.free != 0 and (entry := turns.front()) is not None:
            waiting = self._next_jobs(entry, turns)
            if waiting is None:
                continue
            job = waiting[0]
            outcome = take(job)
            if outcome in (Admission.GONE, Handover.GONE):
                waiting.popleft()
                continue
            if outcome in (Admission.TENANT_FULL, Handover.TENANT_FULL):
                turns.passed()
                continue
            if outcome not in (Admission.ADMITTED, Handover.HANDED):
                return None
            waiting.popleft()
            self._admitted(job, entry, turns)
            return job
        return None

    def _admitted(self, job: Job, entry: LaneEntry, turns: Turns) -> None:
        """After an admission: the backlog's turn recorded, the run's execution started,
        the backlog to the back of the lane."""
        self.logger.info(
            "job admitted",
            extra={
                "job_id": job.job_id,
                "run": job.run,
                "tenant": job.tenant,
                "queue": str(entry.backlog),
            },
        )
        emit("JobsAdmitted", 1)
        # Alone in the lane, a backlog's turns order nobody: its first is recorded (a
        # backlog never served goes first), the others while it waits alone are not.
        if turns.crowded or entry.last_served == NEVER_SERVED:
            self.backlog.served(entry)
        self.start(job)
        turns.served()

    def _turns(self, *, room_known: bool, arrivals: Iterable[Job] = ()) -> Turns:
        """The turns of this dispatch, the lane not read yet. None left when the ledger is
        full (unless ``room_known``: slots are about to be released)."""
        settings = self.ledger.settings
        free = None
        if not room_known:
            ledger = self.ledger.read()
            if not ledger.exists:
                self.ledger.ensure()
            free = settings.capacity - ledger.running
            if free <= 0:
                return Turns.none()
        shared = settings.per_tenant < settings.capacity
        return Turns(
            self.backlog.lane(),
            held=self.ledger.shares if shared else None,
            share=settings.per_tenant,
            free=free,
            arrivals=arrivals,
        )

    def _next_jobs(self, entry: LaneEntry, turns: Turns) -> deque[Job] | None:
        """The front backlog's next waiting jobs (read when none are left from the last
        look; the jobs that just arrived in it when the index lists none to admit); None
        when it has none to give: its turn is then over, and when the index listed no job
        in it at all, it leaves the lane."""
        name = _name(entry)
        waiting = turns.next_jobs.get(name)
        if waiting:
            return waiting
        found = self._waiting(entry, turns)
        if not found and name in turns.arrivals:
            found = turns.arrivals.pop(name)  # the index does not list them yet
        if not found:
            if found is None:
                self.backlog.clear(entry, self.now())
            turns.passed()
            return None
        turns.next_jobs[name] = found
        return found

    def _waiting(self, entry: LaneEntry, turns: Turns) -> deque[Job] | None:
        """The backlog's next waiting jobs in order, read on from where this dispatch's
        last look at it ended. None when the index lists no job in the backlog
        at all (read from its start): the only time it may leave the lane. Empty when
        the index lists only jobs that no longer wait, as far as read: the index lags
        the table (an admission, a cancel a moment ago), so such entries are paged past,
        never taken for the end of the backlog."""
        name = _name(entry)
        after = turns.read_to.get(name)
        limit = LOOK_AHEAD
        for _ in range(STALE_PAGES):
            page = self.backlog.oldest(entry.tenant, limit, entry.backlog, after)
            if not page.job_ids:
                return None if after is None else deque()
            if page.resume is not None:
                after = turns.read_to[name] = page.resume
            found = self.jobs.get_many(page.job_ids)
            waiting = deque(
                found[i]
                for i in page.job_ids
                if i in found and found[i].waiting and found[i].backlog is entry.backlog
            )
            if waiting or not page.more:
                return waiting
            limit = min(2 * limit, STALE_PAGE_MAX)
        return deque()

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

    def report(self, waiting: int, oldest_age_s: float) -> None:
        """The backlog's depth and its oldest job's age, as the backlog index counts them,
        and the slots held, as metrics (every minute, zeros too: the alarms see the
        dispatcher runs)."""
        emit("BacklogDepth", waiting)
        emit("OldestQueuedAgeSeconds", oldest_age_s)
        emit("SlotsHeld", self.ledger.read().running)


def _holds(job: Job) -> bool:
    """Whether the job's record says its run still holds its slots (it may still be
    starting, running, or failing toward its dead letter)."""
    return not job.status.terminal and job.slots_run == job.run
