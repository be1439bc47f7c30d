"""Admission's records against the jobs table (moto): the slot ledger's conditional
transactions, the backlog's order and positions, the dispatcher's fairness, the sweep's
audit. The end-to-end behaviour through the real state machine is in
tests/e2e/test_admission_e2e.py."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import IndexLag, IndexPropagation
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import (
    install as install_index_lag,
)
from richdoc_tools.local.moto_fixes.speed import dynamodb_transaction_rollback

from richdoc.admission.backlog import Backlog
from richdoc.admission.dispatcher import Dispatcher
from richdoc.admission.reconcile import SlotAudit
from richdoc.admission.settings import AdmissionSettings
from richdoc.admission.slots import Admission, SlotLedger
from richdoc.admission.tenants import ROOT_TENANT, tenant_of
from richdoc.contracts import JobOptions, SourceObject
from richdoc.jobs import Job, JobStatus, JobStore, execution_name, timestamp
from richdoc.jobs.keys import BacklogKind, lane_key, share_key

START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[Any]:
    """A clock a millisecond further at every reading: every record has its own moment."""
    ticks = count()

    def now() -> str:
        return timestamp(START + timedelta(milliseconds=next(ticks)))

    yield now


@pytest.fixture
def jobs(jobs_table: Any, clock: Any) -> JobStore:
    return JobStore(jobs_table, clock=clock)


def _ledger(jobs: JobStore, capacity: int, per_tenant: int = 0) -> SlotLedger:
    ledger = SlotLedger(jobs.table, AdmissionSettings.of(capacity, per_tenant), jobs.clock)
    ledger.ensure()
    return ledger


def _queue(jobs: JobStore, backlog: Backlog, tenant: str, name: str) -> Job:
    """A job waiting in ``tenant``'s backlog, as the starter queues one."""
    job_id = f"{tenant}-{name}"
    source = SourceObject(bucket="ingest", key=f"{tenant}/{name}.docx", version_id="v1")
    assert backlog.queue_run(
        tenant, lambda: jobs.create(job_id, source, JobOptions(), message="{}", tenant=tenant)
    )
    job = jobs.get(job_id)
    assert job is not None and job.waiting
    return job


def _end(jobs: JobStore, job: Job) -> None:
    """The run ends: RUNNING, then CANCELLED (any terminal status would do)."""
    jobs.mark_running(job.job_id, job.run, "arn:execution")
    jobs.cancel(job.job_id, job.run, by="test")


# ---- tenants ---------------------------------------------------------------------------------


def test_a_tenant_is_the_named_metadata_or_tag_else_the_keys_first_segment() -> None:
    assert tenant_of("acme/2024/a.pdf") == "acme"
    assert tenant_of("a.pdf") == ROOT_TENANT
    assert tenant_of("/a.pdf") == ROOT_TENANT
    named = {"richdoc-tenant": " Globex "}
    assert tenant_of("acme/a.pdf", metadata=named, tenant_key="richdoc-tenant") == "Globex"
    tags = [("richdoc-tenant", "Initech")]
    assert tenant_of("acme/a.pdf", tags=tags, tenant_key="richdoc-tenant") == "Initech"
    assert tenant_of("acme/a.pdf", metadata=named) == "acme"  # no TenantKey: the key decides
    assert tenant_of(
        "acme/a.pdf", metadata={"richdoc-tenant": " "}, tenant_key="richdoc-tenant"
    ) == ("acme")
    assert len(tenant_of("x" * 1000 + "/a.pdf")) == 256
    # As S3 returns a non-ASCII metadata value: RFC 2047-encoded.
    encoded = {"richdoc-tenant": "=?UTF-8?B?Q2Fmw6k=?="}
    assert tenant_of("acme/a.pdf", metadata=encoded, tenant_key="richdoc-tenant") == "Café"


def test_the_settings_refuse_a_capacity_of_nothing_and_bound_the_share() -> None:
    assert AdmissionSettings.of(4) == AdmissionSettings(capacity=4, per_tenant=4)
    assert AdmissionSettings.of(4, 9) == AdmissionSettings(capacity=4, per_tenant=4)
    assert AdmissionSettings.of(4, 2).per_tenant == 2
    with pytest.raises(ValueError, match="1 to 350 slots"):
        AdmissionSettings.of(0)


# ---- the ledger ------------------------------------------------------------------------------


def test_admission_stops_at_the_capacity_and_a_release_makes_room_once(
    jobs: JobStore, clock: Any
) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=2)
    first, second, third = (_queue(jobs, backlog, "acme", n) for n in ("a", "b", "c"))
    assert ledger.admit(first) is Admission.ADMITTED
    assert ledger.admit(second) is Admission.ADMITTED
    # A third job a stale reader thought had room: the ledger's condition refuses it.
    assert ledger.admit(third) is Admission.FULL
    state = ledger.read()
    assert (state.running, set(state.holders)) == (2, {first.job_id, second.job_id})
    assert ledger.tenant_running("acme") == 2
    admitted = jobs.get(first.job_id)
    assert admitted is not None and not admitted.waiting
    assert (admitted.slots, admitted.slots_run, admitted.status) == (1, 1, JobStatus.QUEUED)
    assert backlog.oldest("acme", 10).job_ids == [third.job_id]  # it left the backlog when admitted
    # The same job again (a second dispatcher with an old read): no second slot.
    assert ledger.admit(first) is Admission.GONE
    holder = state.holders[first.job_id]
    assert ledger.release(first.job_id, holder) is True
    assert ledger.release(first.job_id, holder) is False  # exactly once
    assert (ledger.read().running, ledger.tenant_running("acme")) == (1, 1)
    released = jobs.get(first.job_id)
    assert released is not None and released.slots is None and released.released_at is not None
    assert ledger.admit(jobs.get(third.job_id)) is Admission.ADMITTED  # type: ignore[arg-type]


def test_a_tenant_holds_no_more_than_its_share(jobs: JobStore, clock: Any) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=3, per_tenant=1)
    a1, a2 = _queue(jobs, backlog, "acme", "1"), _queue(jobs, backlog, "acme", "2")
    b1 = _queue(jobs, backlog, "globex", "1")
    assert ledger.admit(a1) is Admission.ADMITTED
    assert ledger.admit(a2) is Admission.TENANT_FULL
    assert ledger.admit(b1) is Admission.ADMITTED
    assert ledger.read().running == 2


def test_a_job_cancelled_while_it_waits_leaves_the_backlog_and_is_never_admitted(
    jobs: JobStore, clock: Any
) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=2)
    job = _queue(jobs, backlog, "acme", "a")
    jobs.cancel(job.job_id, 1, by="ops")
    assert backlog.oldest("acme", 10).job_ids == []
    assert ledger.admit(job) is Admission.GONE  # with the record read before the cancel
    assert ledger.read().running == 0


def test_a_sharded_run_claims_the_free_slots_it_wants_and_no_more(
    jobs: JobStore, clock: Any
) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=4)
    sharded, other = _queue(jobs, backlog, "acme", "long"), _queue(jobs, backlog, "b", "x")
    assert ledger.admit(sharded) is Admission.ADMITTED
    assert ledger.admit(other) is Admission.ADMITTED
    jobs.mark_running(sharded.job_id, 1, "arn:execution")
    running = jobs.get(sharded.job_id)
    assert running is not None
    assert ledger.claim_shard_slots(running, 5) == 2  # two are free
    assert ledger.claim_shard_slots(running, 1) == 0  # none now
    state = ledger.read()
    assert (state.running, state.holders[sharded.job_id].slots) == (4, 3)
    assert (jobs.get(sharded.job_id).slots, ledger.tenant_running("acme")) == (3, 3)  # type: ignore[union-attr]
    # All of them come back together.
    _end(jobs, running)
    assert ledger.release(sharded.job_id, state.holders[sharded.job_id])
    assert (ledger.read().running, ledger.tenant_running("acme")) == (1, 0)


# ---- the backlog -------------------------------------------------------------------------------


def test_a_waiting_job_knows_its_place_and_the_tenants_backlog_its_depth(
    jobs: JobStore, clock: Any
) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=1)
    queued = [_queue(jobs, backlog, "acme", str(n)) for n in range(4)]
    assert [backlog.position(job) for job in queued] == [1, 2, 3, 4]
    [acme] = backlog.census().backlogs
    assert (acme.tenant, acme.backlog, acme.waiting) == ("acme", BacklogKind.UPLOADS, 4)
    assert acme.oldest_queued_at == queued[0].queued_at
    ledger.admit(queued[0])
    current = [jobs.get(job.job_id) for job in queued]
    assert [backlog.position(job) for job in current if job is not None] == [None, 1, 2, 3]


def test_a_tenant_leaves_the_lane_when_its_backlog_is_empty_after_the_grace(
    jobs: JobStore, clock: Any
) -> None:
    backlog = Backlog(jobs.table, clock)
    backlog.mark("acme")
    [tenant] = backlog.entries()
    assert not backlog.clear(tenant, START)  # just marked: a job may not show yet
    assert backlog.clear(tenant, START + timedelta(minutes=2))
    assert backlog.entries() == []


def test_a_run_is_written_queued_only_once_its_backlog_is_in_the_lane(
    jobs: JobStore, clock: Any
) -> None:
    """The job's write wakes the dispatcher, which looks through the lane: the backlog's
    lane item is marked first, so the dispatcher it wakes finds the backlog."""
    backlog = Backlog(jobs.table, clock)
    lane_at_write: list[Any] = []

    def write() -> bool:
        item = jobs.table.get_item(
            Key=lane_key("acme", BacklogKind.REPROCESS), ConsistentRead=True
        ).get("Item")
        lane_at_write.append(item and item.get("lane"))
        source = SourceObject(bucket="ingest", key="acme/a.docx", version_id="v1")
        return jobs.create("acme-a", source, JobOptions(), tenant="acme")

    assert backlog.queue_run("acme", write, BacklogKind.REPROCESS) is True
    assert lane_at_write == ["backlog"]
    assert [(e.tenant, e.backlog) for e in backlog.entries()] == [("acme", BacklogKind.REPROCESS)]


# ---- the dispatcher ----------------------------------------------------------------------------


@pytest.fixture
def machine(aws: None) -> str:
    sfn = boto3.client("stepfunctions")
    role = boto3.client("iam").create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")
    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    arn: str = sfn.create_state_machine(
        name="pipeline", definition=definition, roleArn=role["Role"]["Arn"]
    )["stateMachineArn"]
    return arn


def _dispatcher(jobs: JobStore, ledger: SlotLedger, machine: str) -> Dispatcher:
    return Dispatcher(
        jobs=jobs,
        ledger=ledger,
        backlog=Backlog(jobs.table, jobs.clock),
        sfn=boto3.client("stepfunctions"),
        state_machine_arn=machine,
        logger=Logger(service="test"),
        now=lambda: START + timedelta(hours=1),
    )


def _started(machine: str) -> list[str]:
    executions = boto3.client("stepfunctions").list_executions(stateMachineArn=machine)
    return sorted(e["name"] for e in executions["executions"])


def test_tenants_are_served_in_turn_and_each_tenants_jobs_in_upload_order(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    ledger = _ledger(jobs, capacity=1)
    dispatcher = _dispatcher(jobs, ledger, machine)
    backfill = [_queue(jobs, dispatcher.backlog, "acme", f"{n:02d}") for n in range(4)]
    single = _queue(jobs, dispatcher.backlog, "globex", "one")
    order = []
    for _ in range(5):
        [admitted] = dispatcher.admit()
        order.append(admitted)
        job = jobs.get(admitted)
        assert job is not None
        _end(jobs, job)
        assert dispatcher.release([admitted]) == [admitted]
    # The lone upload of the second tenant goes second, not after the backfill.
    assert order[1] == single.job_id
    assert [o for o in order if o != single.job_id] == [j.job_id for j in backfill]
    assert _started(machine) == sorted(execution_name(j, 1) for j in order)


def test_the_dispatcher_admits_nothing_beyond_the_capacity_and_starts_what_it_admits(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    ledger = _ledger(jobs, capacity=2)
    dispatcher = _dispatcher(jobs, ledger, machine)
    for n in range(5):
        _queue(jobs, dispatcher.backlog, "acme", str(n))
    admitted = dispatcher.admit()
    assert len(admitted) == 2 and dispatcher.admit() == []
    assert ledger.read().running == 2
    assert _started(machine) == sorted(execution_name(j, 1) for j in admitted)
    # A start repeated (a restart, another dispatcher) is the same execution.
    job = jobs.get(admitted[0])
    assert job is not None and dispatcher.start(job) is True
    assert len(_started(machine)) == 2


def test_the_stream_releases_the_slots_of_ended_runs_only(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    ledger = _ledger(jobs, capacity=2)
    dispatcher = _dispatcher(jobs, ledger, machine)
    ended, running = (_queue(jobs, dispatcher.backlog, "acme", n) for n in ("a", "b"))
    dispatcher.admit()
    _end(jobs, jobs.get(ended.job_id))  # type: ignore[arg-type]
    jobs.mark_running(running.job_id, 1, "arn:execution")
    images = [jobs.get(ended.job_id), jobs.get(running.job_id)]
    done = dispatcher.changes(job for job in images if job is not None)
    assert done.released == [ended.job_id]
    assert set(ledger.read().holders) == {running.job_id}


# ---- the sweep's audit -------------------------------------------------------------------------


def test_the_audit_releases_what_the_stream_missed_and_sets_the_counts_right(
    jobs: JobStore, clock: Any
) -> None:
    backlog, ledger = Backlog(jobs.table, clock), _ledger(jobs, capacity=3)
    audit = SlotAudit(ledger=ledger, backlog=backlog, jobs=jobs)
    missed, running = _queue(jobs, backlog, "acme", "a"), _queue(jobs, backlog, "acme", "b")
    ledger.admit(missed)
    ledger.admit(running)
    _end(jobs, jobs.get(missed.job_id))  # type: ignore[arg-type]
    jobs.mark_running(running.job_id, 1, "arn:execution")
    findings = audit.audit()
    assert findings.released == [missed.job_id]
    assert [j.job_id for j in findings.open_runs] == [running.job_id]
    # A count that drifted (by hand, or a bug): set right from the holders.
    jobs.table.update_item(
        Key=share_key("acme"),
        UpdateExpression="SET #r = :r",
        ExpressionAttributeNames={"#r": "running"},
        ExpressionAttributeValues={":r": 7},
    )
    assert audit.audit().recounted
    assert (ledger.read().running, ledger.tenant_running("acme")) == (1, 1)
    assert audit.audit() == type(findings)(open_runs=findings.open_runs)  # nothing left


def test_the_minutely_schedule_puts_backlogs_with_waiting_jobs_back_in_the_lane(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    ledger = _ledger(jobs, capacity=1)
    dispatcher = _dispatcher(jobs, ledger, machine)
    running = _queue(jobs, dispatcher.backlog, "globex", "a")
    assert dispatcher.admit() == [running.job_id]  # the only slot is held
    job = _queue(jobs, dispatcher.backlog, "acme", "a")
    jobs.table.update_item(Key=lane_key("acme"), UpdateExpression="REMOVE lane")
    assert [entry.tenant for entry in dispatcher.backlog.entries()] == ["globex"]
    done = dispatcher.schedule()
    # Counted from the backlog index, not the lane, and put back in the lane.
    assert (done.waiting, done.lanes) == (1, ["acme"])
    assert {entry.tenant for entry in dispatcher.backlog.entries()} == {"acme", "globex"}
    assert dispatcher.backlog.oldest("acme", 1).job_ids == [job.job_id]
    assert dispatcher.schedule().lanes == []


def test_a_run_that_ends_hands_its_slot_over_to_the_next_waiting_job_in_one_write(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    ledger = _ledger(jobs, capacity=1)
    dispatcher = _dispatcher(jobs, ledger, machine)
    first, second = (_queue(jobs, dispatcher.backlog, "acme", n) for n in ("a", "b"))
    other = _queue(jobs, dispatcher.backlog, "globex", "c")
    [admitted] = dispatcher.admit()
    assert admitted == first.job_id
    versions = ledger.read().version
    _end(jobs, jobs.get(first.job_id))  # type: ignore[arg-type]
    ended = jobs.get(first.job_id)
    assert ended is not None
    done = dispatcher.changes([ended])
    assert (done.released, done.admitted) == ([first.job_id], [other.job_id])  # its turn
    state = ledger.read()
    assert (state.running, set(state.holders), state.version) == (1, {other.job_id}, versions + 1)
    released, taken = jobs.get(first.job_id), jobs.get(other.job_id)
    assert released is not None and taken is not None
    assert released.released_at == taken.admitted_at  # the slot was never seen free
    assert (ledger.tenant_running("acme"), ledger.tenant_running("globex")) == (0, 1)
    # The image of a run the ledger no longer records as holding: nothing is handed over.
    done = dispatcher.changes([ended])
    assert (done.released, done.admitted) == ([], [])
    assert jobs.get(second.job_id).waiting  # type: ignore[union-attr]


# ---- under an index that lags the table ------------------------------------------------------


@pytest.fixture
def indexes(jobs_table: Any) -> Iterator[IndexPropagation]:
    """The tables' global secondary indexes lag as DynamoDB's do (a test holds them), on
    moto as the embedded stack runs it (a transaction's rollback point is its items, not
    the whole table: hundreds of jobs here)."""
    propagation = IndexPropagation(IndexLag())
    with contextlib.ExitStack() as exit_stack:
        dynamodb_transaction_rollback.install(exit_stack)
        install_index_lag(exit_stack, propagation)
        yield propagation


def _end_admitted(jobs: JobStore, dispatcher: Dispatcher) -> list[Job]:
    """Every admitted run ends; their records, as the stream shows them."""
    ended = []
    for job_id in dispatcher.ledger.read().holders:
        job = jobs.get(job_id)
        assert job is not None
        _end(jobs, job)
        ended.append(jobs.get(job_id))
    return [job for job in ended if job is not None]


def test_an_index_still_listing_jobs_just_admitted_empties_no_lane_and_hides_no_backlog(
    jobs: JobStore, clock: Any, machine: str, indexes: IndexPropagation
) -> None:
    ledger = _ledger(jobs, capacity=5)
    dispatcher = _dispatcher(jobs, ledger, machine)  # its clock is an hour on: no grace
    waiting = [_queue(jobs, dispatcher.backlog, "acme", f"{n:04d}") for n in range(100)]
    truth = len(waiting)
    with indexes.held():
        # The first five are admitted; the index lists them first still. A dispatcher that
        # read "the five oldest" as "none waiting" emptied the lane here, and the metrics
        # lost the hundred jobs behind them (a thousand, or a hundred thousand, alike).
        first = dispatcher.admit()
        truth -= len(first)
        assert first == [job.job_id for job in waiting[:5]]
        done = dispatcher.changes(_end_admitted(jobs, dispatcher))
        truth -= len(done.admitted)
        assert done.admitted == [job.job_id for job in waiting[5:10]]
        assert [entry.tenant for entry in dispatcher.backlog.entries()] == ["acme"]
        # Another wake (a second dispatcher, the next run's end) reads the same stale
        # entries: it pages past them too.
        done = dispatcher.changes(_end_admitted(jobs, dispatcher))
        truth -= len(done.admitted)
        assert done.admitted == [job.job_id for job in waiting[10:15]]
        assert [entry.tenant for entry in dispatcher.backlog.entries()] == ["acme"]
    # The index caught up: the metrics count what waits, from the index itself.
    assert dispatcher.schedule().waiting == truth == 85
    while truth:
        done = dispatcher.changes(_end_admitted(jobs, dispatcher))
        assert done.admitted, "a wake with waiting jobs and free slots admits"
        truth -= len(done.admitted)
    assert all(not job.waiting for job in jobs.get_many(j.job_id for j in waiting).values())
    _end_admitted(jobs, dispatcher)
    final = dispatcher.schedule()
    assert (final.waiting, final.oldest_waiting_s, ledger.read().running) == (0, 0.0, 0)
    # Only now, its backlog read empty, does the tenant leave the lane.
    assert dispatcher.backlog.entries() == []


def test_a_wake_admits_the_job_that_woke_it_before_the_index_lists_it(
    jobs: JobStore, clock: Any, machine: str, indexes: IndexPropagation
) -> None:
    ledger = _ledger(jobs, capacity=2)
    dispatcher = _dispatcher(jobs, ledger, machine)
    with indexes.held():
        job = _queue(jobs, dispatcher.backlog, "acme", "lone")
        assert dispatcher.backlog.entries() == []  # neither its lane nor it shows yet
        done = dispatcher.changes([job])  # the stream's image of its write
    assert done.admitted == [job.job_id]
    assert _started(machine) == [execution_name(job.job_id, 1)]


def test_the_minutely_schedules_requests_do_not_grow_with_the_tenants_in_the_lane(
    jobs: JobStore, clock: Any, machine: str
) -> None:
    """Counting the backlog reads the backlog index in pages, not backlog by backlog; admitting
    reads the lane only as far as the turns it gives out."""
    ledger = _ledger(jobs, capacity=2)
    dispatcher = _dispatcher(jobs, ledger, machine)
    calls: list[str] = []

    def count(model: Any, **_: Any) -> None:
        calls.append(model.name)

    def requests_of_a_schedule() -> int:
        calls.clear()
        events = jobs.table.meta.client.meta.events
        events.register("before-call.dynamodb", count)
        try:
            done = dispatcher.schedule()
        finally:
            events.unregister("before-call.dynamodb", count)
        assert len(done.admitted) == 2  # the two slots, freed again below
        for job_id in done.admitted:
            _end(jobs, jobs.get(job_id))  # type: ignore[arg-type]
        dispatcher.release(done.admitted)
        return len(calls)

    for n in range(20):
        _queue(jobs, dispatcher.backlog, f"tenant-{n:03d}", "a")
    few = requests_of_a_schedule()
    for n in range(20, 200):
        _queue(jobs, dispatcher.backlog, f"tenant-{n:03d}", "a")
    many = requests_of_a_schedule()
    # Ten times the tenants: a few requests more (the lane items the census checks,
    # a hundred to a request), not two or more a tenant.
    assert many - few <= 4, (few, many)
