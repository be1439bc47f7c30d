"""When the backlog drains (``richdoc jobs backlog``, richdoc_tools.ops.drain): measured
on slot cycles, each run's hold on its slot and the gap until the next admission, over
the recent run records whatever their status, as the median; nothing waiting drains in
nothing. The admissions and releases are the ledger's own transactions, each at a moment
a scripted clock gives, so every cycle is known exactly."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from richdoc_tools.cli.render.admission import backlog_outlook, drain_lines
from richdoc_tools.ops.backlog import outlook
from richdoc_tools.ops.drain import Holding, drain_time, estimate, serving_slots, slot_cycles
from richdoc_tools.ops.operator import Operator, StackResources

from richdoc.admission.backlog import Backlog
from richdoc.admission.settings import AdmissionSettings
from richdoc.admission.slots import Admission, Handover, SlotLedger
from richdoc.contracts import JobOptions, SourceObject
from richdoc.jobs import Job, JobStore, timestamp
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import COUNTS, OUTPUTS
from tests.support.stack_outputs import stack_outputs

START = datetime(2026, 1, 1, tzinfo=UTC)
CAPACITY = 2


class ScriptedClock:
    """The moment the script sets: every record written meanwhile is at it."""

    def __init__(self) -> None:
        self.moment = START

    def at(self, seconds: float) -> None:
        self.moment = START + timedelta(seconds=seconds)

    def __call__(self) -> str:
        return timestamp(self.moment)


class Deployment:
    """A stack of ``CAPACITY`` slots and one tenant, driven through admission's records
    by hand, as the dispatcher and the state machine drive them."""

    def __init__(self, jobs_table: Any, clock: ScriptedClock) -> None:
        self.clock = clock
        self.jobs = JobStore(jobs_table, clock=clock)
        self.ledger = SlotLedger(jobs_table, AdmissionSettings.of(CAPACITY), clock)
        self.ledger.ensure()
        self.backlog = Backlog(jobs_table, clock)

    def upload(self, name: str, at: float) -> str:
        self.clock.at(at)
        source = SourceObject(bucket="ingest", key=f"acme/{name}.docx", version_id="v1")
        assert self.jobs.create(name, source, JobOptions(), message="{}", tenant="acme")
        self.backlog.mark("acme")
        return name

    def job(self, job_id: str) -> Job:
        found = self.jobs.get(job_id)
        assert found is not None
        return found

    def admit(self, job_id: str, at: float) -> None:
        self.clock.at(at)
        assert self.ledger.admit(self.job(job_id)) is Admission.ADMITTED
        self.jobs.mark_running(job_id, 1, "arn:execution")

    def end(self, job_id: str, at: float, how: str = "succeed") -> None:
        self.clock.at(at)
        if how == "succeed":
            self.jobs.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline=None)
        elif how == "fail":
            self.jobs.record_failure(job_id, 1, Failure(FailureKind.CORRUPT_INPUT, "x"))
            self.jobs.mark_dead_lettered(job_id, 1, "m", sent_by="sweep")
        else:
            self.jobs.cancel(job_id, 1, by="test")

    def release(self, job_id: str, at: float, *, to: str | None = None) -> None:
        """The ended run's slot back; handed over to ``to`` in the same write if given."""
        self.clock.at(at)
        holder = self.ledger.read().holders[job_id]
        if to is None:
            assert self.ledger.release(job_id, holder)
            return
        assert self.ledger.hand_over(job_id, holder, self.job(to)) is Handover.HANDED
        self.jobs.mark_running(to, 1, "arn:execution")


@pytest.fixture
def clock() -> ScriptedClock:
    return ScriptedClock()


@pytest.fixture
def deployment(jobs_table: Any, clock: ScriptedClock) -> Deployment:
    return Deployment(jobs_table, clock)


@pytest.fixture
def operator(deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> Operator:
    outputs = stack_outputs(deployment.jobs.table.name, MaxRunningJobs=str(CAPACITY))
    resources = StackResources.from_outputs("richdoc", outputs)
    monkeypatch.setattr(Operator, "jobs", property(lambda _: deployment.jobs))
    return Operator(boto3.Session(region_name="us-east-1"), resources)


def test_the_drain_is_the_median_slot_cycle_with_its_gaps_whatever_the_runs_ended(
    deployment: Deployment, operator: Operator, capsys: pytest.CaptureFixture[str]
) -> None:
    d = deployment
    j1, j2, j3, j4, j5, j6 = (d.upload(f"j{n}", at=0) for n in range(1, 7))
    d.admit(j1, at=1)  # a cold start: it holds its slot for 120 s
    d.admit(j2, at=1)
    d.end(j2, at=11)
    d.release(j2, at=11, to=j3)  # handed over in the release's write: no gap
    d.end(j3, at=21, how="fail")
    d.release(j3, at=21)
    d.admit(j4, at=26)  # the dispatcher's next wake: a 5 s gap
    d.end(j4, at=36, how="cancel")
    d.release(j4, at=36, to=j5)
    d.end(j5, at=46)
    d.release(j5, at=46, to=j6)
    later = [d.upload(f"later-{n}", at=100) for n in range(3)]
    d.end(j1, at=121)
    d.release(j1, at=121)  # nothing admitted since: its gap so far, as jobs wait
    d.clock.at(130)
    # Cycles: j2 10, j3 10 + 5, j4 10, j5 10, j1 120 + 9. The median is 10 s: two slots
    # turn over every 10 s, 720 documents an hour. Of the three waiting, two are admitted
    # as the two slots free, on average a third and two thirds of a cycle from now, and
    # the third a cycle after the first: the last in 13.3 s. (The mean time successful
    # runs held a slot was (10 + 10 + 120) / 3 = 46.7 s: j1's cold start taken in whole,
    # j3 and j4 not sampled at all, no gap.)
    seen = outlook(operator, now=d.clock.moment)
    assert seen.waiting == 3 and seen.drain is not None
    drain = seen.drain
    assert (drain.cycles, drain.median_cycle_s, drain.slots) == (5, 10.0, CAPACITY)
    assert (drain.throughput_per_hour, drain.drain_s) == (720.0, 13.3)
    backlog_outlook(seen, as_json=False)
    printed = capsys.readouterr().out.splitlines()
    assert printed[-2:] == [
        "throughput: 720 documents an hour (2 slots, each turned over every 10 s: the median "
        "of 5 slot cycles in the last 1h00m)",
        "drains in: about 13s at that rate",
    ]
    # Nothing waits once the later uploads are cancelled: the drain is nothing, not 0s.
    for job_id in later:
        d.jobs.cancel(job_id, 1, by="test")
    done = outlook(operator, now=d.clock.moment)
    assert done.waiting == 0 and done.drain is not None and done.drain.drain_s == 0
    assert drain_lines(done.drain)[1] == "drains in: nothing waits"
    backlog_outlook(done, as_json=True)
    assert json.loads(capsys.readouterr().out)["drain"]["drain_s"] == 0


def test_runs_outside_the_window_are_not_measured(
    deployment: Deployment, operator: Operator
) -> None:
    d = deployment
    first = d.upload("first", at=0)
    d.upload("waiting", at=0)
    d.admit(first, at=0)
    d.end(first, at=30)
    d.release(first, at=30)
    d.clock.at(30 + 2 * 3600)
    drain = outlook(operator, now=d.clock.moment).drain
    assert drain is not None and (drain.cycles, drain.drain_s) == (0, None)
    assert drain_lines(drain) == [
        "throughput: no slot cycle in the last 1h00m to measure on",
        "drains in: not known until a slot cycle is measured",
    ]


# ---- the rules, pure ---------------------------------------------------------------------------


def moment(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def holding(admitted: float, released: float | None, queued: float = 0) -> Holding:
    return Holding(
        admitted=moment(admitted),
        released=None if released is None else moment(released),
        queued=moment(queued),
    )


def test_a_slot_idle_with_nothing_waiting_is_no_part_of_a_cycle() -> None:
    """The next job was uploaded 100 s after the release: its gap counts from then."""
    cycles = slot_cycles(
        [holding(0, 10), holding(112, None, queued=110)], now=moment(120), waiting=False
    )
    assert cycles == [12.0]


def test_each_release_is_paired_with_one_later_admission_in_time_order() -> None:
    held = [holding(0, 10), holding(0, 10), holding(11, None), holding(15, None)]
    assert slot_cycles(held, now=moment(20), waiting=True) == [11.0, 15.0]


def test_the_drain_is_when_the_last_waiting_job_takes_a_slot() -> None:
    """Slots partway through their cycles: the k-th of s to free does so k/(s+1) of a
    cycle from now; each later round takes a whole cycle."""
    assert drain_time(1, 1, 60.0) == 30.0
    assert drain_time(1, 19, 60.0) == 3.0
    assert drain_time(2, 2, 30.0) == 20.0
    assert drain_time(3, 2, 30.0) == 40.0  # one round, then the first to free again
    assert drain_time(4_000, 20, 36.0) == pytest.approx(199 * 36.0 + 20 / 21 * 36.0)


def test_the_per_tenant_share_caps_the_slots_one_waiting_tenant_can_take() -> None:
    assert serving_slots(capacity=20, per_tenant=5, tenants_waiting=1) == 5
    assert serving_slots(capacity=20, per_tenant=5, tenants_waiting=6) == 20
    assert serving_slots(capacity=20, per_tenant=20, tenants_waiting=0) == 20


@given(st.data(), st.integers(1, 600), st.integers(1, 20), st.integers(1, 8))
def test_cold_starts_fewer_than_half_the_runs_never_move_the_estimate(
    data: st.DataObject, usual: int, runs: int, slots: int
) -> None:
    """Runs back to back on one slot (each handed over to the next), most of them the
    usual length and fewer than half slow by any amount, in any order: the cycle is the
    usual one, and the drain the waiting jobs at it."""
    slow = data.draw(st.lists(st.integers(usual + 1, 100_000), max_size=runs - 1))
    lengths = data.draw(st.permutations([usual] * runs + slow))
    held, start = [], 0
    for length in lengths:
        held.append(holding(start, start + length))
        start += length
    drain = estimate(held, now=moment(start), waiting=10, slots=slots)
    assert (drain.cycles, drain.median_cycle_s) == (len(lengths), usual)
    assert drain.drain_s == round(drain_time(10, slots, usual), 1)
