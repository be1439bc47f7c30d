"""Admission end to end, through the real state machine on a stack of three slots
(``MaxRunningJobs=3``) whose indexes lag the jobs table as AWS's do: uploads wait QUEUED
in their tenant's backlog, never more than the capacity runs at once (read back from the
ledger's history and the jobs' admitted and released times, never by sampling), each
tenant's jobs start in upload order and tenants take turns; a slot held by a run that
ended abnormally comes back (the reconciler, or the sweep when the status event was
lost); dead letters redriven go through the same door."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from richdoc_tools.cli import main
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import IndexLag
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.admission.backlog import Backlog
from richdoc.admission.slots import SlotLedger
from richdoc.deadletter import failure_attributes
from richdoc.jobs import JobStatus
from richdoc.records.actions import Actions
from richdoc.records.backstops import STATUS_CHANGE
from richdoc.taxonomy import Failure, FailureKind
from tests.support.admission import ledger, ledger_history, most_at_once, slots_back
from tests.support.consumer_docs import subscribe
from tests.support.gates import Gate
from tests.support.published_schemas import schema_errors
from tests.support.stack_runs import job_of, upload
from tests.support.stack_settings import TEST_STACK

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

CAPACITY = 3
TIMEOUT_S = 300
# How long a wait for jobs goes before the backstop's schedule is fired (settled).
SCHEDULE_S = 10.0
# A hundred runs three at a time, on a shared 2-core machine.
REDRIVE_TIMEOUT_S = 1800
UNHURRIED = ("StarterFunction", "RecordsFunction", "DispatcherFunction", "NotifierFunction")


@pytest.fixture(scope="module")
def two_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    settings = replace(
        TEST_STACK,
        parameters={"MaxRunningJobs": str(CAPACITY)},
        log_path=log_path,
        # Every handler shares this process: on a loaded machine a records or dispatcher
        # invocation can outlive its 60 s, which is not what these tests are about.
        timeout_override_s=dict.fromkeys(UNHURRIED, 900.0),
        # The jobs table's indexes lag it as AWS's do: admission reads the backlog there.
        # The same lag for every write, so an index shows the writes in the order they
        # were made: a tenant's jobs are admitted in upload order as without the lag (a
        # lag drawn for each write lets jobs queued within it of one another overtake
        # each other: docs/architecture.md; the chaos runs draw it).
        index_lag=IndexLag(delay_s=0.5),
    )
    with EmbeddedStack(settings) as stack:
        yield stack


@pytest.fixture
def stack(two_slots: Any) -> Iterator[Any]:
    two_slots.script.clear()
    yield two_slots
    two_slots.script.clear()
    assert two_slots.loop_errors == []


def note(n: int | str) -> bytes:
    return f"# Note {n}\n\nA short note.\n".encode()


def settled(stack: Any, job_ids: list[str], timeout_s: float = TIMEOUT_S) -> dict[str, Any]:
    """Every job terminal and every slot back (the stream's last releases done).

    A job queued a moment before the last run ended may not show yet in the index the
    wakes of those runs' ends read; on AWS the dispatcher's minutely schedule admits it.
    The stack's schedules are this test's to fire: each time the jobs have not moved
    and the indexes show every write, as the minute would."""
    deadline = time.monotonic() + timeout_s
    while True:
        ended = stack.wait_for_jobs(job_ids, min(SCHEDULE_S, deadline - time.monotonic()))
        if all(job is not None and job.status.terminal for job in ended.values()):
            break
        assert time.monotonic() < deadline, ended
        if stack.indexes.caught_up():
            stack.fire_schedules()
    assert wait_until(lambda: slots_back(stack) and stack.notifications_delivered(), TIMEOUT_S)
    return {job_id: job_of(stack, job_id) for job_id in job_ids}


def test_a_burst_of_two_tenants_runs_two_at_a_time_in_upload_order_taking_turns(
    stack: Any, held_starts: Gate
) -> None:
    backfill = [upload(stack, f"acme/{n:02d}.md", note(n)) for n in range(8)]
    single = upload(stack, "globex/one.md", note("globex"))
    # The first runs hold their slots until the second tenant's upload waits and every
    # index shows it: its turn is then decided by the lane, not by how many runs this
    # machine ends within the indexes' lag.
    assert wait_until(
        lambda: (
            held_starts.arrivals == CAPACITY
            and getattr(stack.jobs.get(single), "waiting", False)
            and stack.indexes.caught_up()
        ),
        TIMEOUT_S,
    )
    held_starts.open()
    jobs = settled(stack, [*backfill, single])
    assert all(job.status is JobStatus.SUCCEEDED for job in jobs.values())
    # Never more than the capacity at once: the ledger's every version, and the jobs' own
    # admitted and released times.
    assert 0 < max(ledger_history(stack)) <= CAPACITY
    assert most_at_once(jobs.values()) <= CAPACITY
    # Each tenant's jobs in the order they were uploaded.
    acme = [jobs[j] for j in backfill]
    assert [j.tenant for j in acme] == ["acme"] * 8 and jobs[single].tenant == "globex"
    assert sorted(acme, key=lambda j: j.admitted_at or "") == acme
    # The second tenant's one upload, made after the backfill's, waits for at most a turn
    # of the slots, not for the backfill.
    lone = jobs[single]
    overtaking = [
        j for j in acme if (lone.queued_at or "") < (j.admitted_at or "") < (lone.admitted_at or "")
    ]
    assert len(overtaking) <= CAPACITY


@pytest.fixture
def held_starts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Every admitted run stops at RecordStart (its slot held) until the gate opens (the
    records function runs several at once, whatever this machine's cores)."""
    gate = Gate()
    monkeypatch.setattr(Actions, "start", gate.before(Actions.start))
    yield gate
    gate.open()


def test_a_job_waiting_shows_its_place_and_every_run_records_its_slot(
    stack: Any, held_starts: Gate
) -> None:
    running = [upload(stack, f"place/run-{n}.md", note(n)) for n in range(CAPACITY)]
    assert wait_until(lambda: held_starts.arrivals == CAPACITY, TIMEOUT_S)
    waiting = [upload(stack, f"place/wait-{n}.md", note(n)) for n in range(3)]
    assert wait_until(lambda: len(stack.jobs.statuses(waiting)) == 3, TIMEOUT_S)
    records = [job_of(stack, job_id) for job_id in waiting]
    assert all(job.status is JobStatus.QUEUED and job.waiting for job in records)
    backlog = Backlog(stack.jobs.table, stack.jobs.clock)
    # A place is read from the backlog index, which shows a job a moment after its write.
    assert wait_until(lambda: [backlog.position(job) for job in records] == [1, 2, 3], TIMEOUT_S)
    assert ledger(stack).running == CAPACITY
    held_starts.open()
    jobs = settled(stack, [*running, *waiting])
    assert all(job.status is JobStatus.SUCCEEDED for job in jobs.values())
    for job in jobs.values():
        assert job.admitted_at is not None and job.released_at is not None
        assert job.slots is None  # given back
        assert (job.queued_at or "") <= job.admitted_at <= (job.started_at or "")


# ---- a slot held by a run that ended abnormally ----------------------------------------------


@pytest.fixture
def lost_status_events(stack: Any) -> Iterator[None]:
    """The reconciler's rule disabled: executions end with no status event delivered."""
    events = stack.client("events")
    [rule] = [
        r["Name"]
        for r in events.list_rules()["Rules"]
        if STATUS_CHANGE in r.get("EventPattern", "")
    ]
    events.disable_rule(Name=rule)
    yield
    events.enable_rule(Name=rule)


def _execution_ended(stack: Any, job_id: str) -> bool:
    arn = job_of(stack, job_id).execution_arn
    sfn = stack.client("stepfunctions")
    try:
        return bool(sfn.describe_execution(executionArn=arn)["status"] != "RUNNING")
    except sfn.exceptions.ExecutionDoesNotExist:
        return False


def _waiting(stack: Any, job_id: str) -> bool:
    job = stack.jobs.get(job_id)
    return job is not None and job.waiting


def test_a_stopped_execution_whose_status_event_was_lost_gives_its_slot_back_at_the_sweep(
    stack: Any, held_starts: Gate, lost_status_events: None
) -> None:
    stopped = [upload(stack, f"stopped/{n}.md", note(n)) for n in range(CAPACITY)]
    assert wait_until(lambda: held_starts.arrivals == CAPACITY, TIMEOUT_S)
    after = upload(stack, "after/stopped.md", note("after"))
    for job_id in stopped:  # stopped by someone, not cancelled: an internal failure
        stack.client("stepfunctions").stop_execution(
            executionArn=job_of(stack, job_id).execution_arn, error="Oops", cause="by hand"
        )
    held_starts.open()  # the stopped runs' RecordStart goes on, unheard, to RUNNING
    assert wait_until(lambda: all(_execution_ended(stack, j) for j in stopped), TIMEOUT_S)
    assert wait_until(
        lambda: {job_of(stack, j).status for j in stopped} == {JobStatus.RUNNING}, TIMEOUT_S
    )
    # Nobody heard: the runs still hold their slots, the next upload waits (once the starter,
    # a batching window behind, has made its job).
    assert wait_until(lambda: _waiting(stack, after), TIMEOUT_S)
    assert ledger(stack).running == CAPACITY
    # The sweep (its schedule fired, a while after the executions ended) closes them.
    assert stack.fire_schedules(at=datetime.now(UTC) + timedelta(minutes=10)) == 2
    jobs = settled(stack, [*stopped, after])
    for job_id in stopped:
        job = jobs[job_id]
        assert job.status is JobStatus.DEAD_LETTERED
        assert job.failure is not None and job.failure.error == "Execution.ABORTED"
    assert jobs[after].status is JobStatus.SUCCEEDED


def test_a_run_whose_failure_path_crashed_gives_its_slot_back_through_the_reconciler(
    stack: Any,
) -> None:
    stack.script.add(
        "RecordsFunction",
        PlatformError("Lambda.Unknown", "sandbox lost"),
        when=lambda event: isinstance(event, dict) and event.get("action") == "fail",
    )
    crashed = upload(stack, "crashed/broken.docx", b"not a zip archive at all")
    jobs = settled(stack, [crashed])
    job = jobs[crashed]
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None and job.failure.error == "Execution.FAILED"
    assert job.released_at is not None


# ---- dead letters redriven through the same door --------------------------------------------


def _dead_letter_unrun(stack: Any, job_id: str) -> None:
    """Close a waiting run as a backstop closes one whose execution never started: its
    failure recorded, its ingest message on the dead-letter queue with the run's
    attributes, the job DEAD_LETTERED."""
    jobs = stack.jobs
    job = job_of(stack, job_id)
    failure = Failure(FailureKind.TRANSIENT, "closed before it ran", error="Execution.NOT_STARTED")
    jobs.record_failure(job_id, job.run, failure)
    sent = stack.client("sqs").send_message(
        QueueUrl=stack.outputs["DeadLetterQueueUrl"],
        MessageBody=job.message,
        MessageAttributes=failure_attributes(job_id, job.run, failure),
    )
    jobs.mark_dead_lettered(job_id, job.run, sent["MessageId"], sent_by="sweep")


def test_a_hundred_dead_letters_redriven_wait_their_turn_and_all_succeed(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hundred uploads dead-lettered before any of them ran (admission held meanwhile).
    held = Gate()
    monkeypatch.setattr(SlotLedger, "admit", held.before(SlotLedger.admit))
    history_before = len(ledger_history(stack))
    job_ids = [upload(stack, f"redrive/{n:03d}.md", note(n)) for n in range(100)]
    assert wait_until(lambda: len(stack.jobs.statuses(job_ids)) == 100, TIMEOUT_S)
    assert wait_until(
        lambda: all(job.waiting for job in stack.jobs.get_many(job_ids).values()), TIMEOUT_S
    )
    for job_id in job_ids:
        _dead_letter_unrun(stack, job_id)
    held.open()
    assert {job.status for job in stack.jobs.get_many(job_ids).values()} == {
        JobStatus.DEAD_LETTERED
    }
    # All of them back at once: each is a QUEUED run 2 in the backlog, run a few at a time.
    assert main(["dlq", "redrive"]) == 0
    assert wait_until(
        lambda: all(j.run == 2 for j in stack.jobs.get_many(job_ids).values()),
        REDRIVE_TIMEOUT_S,
    )
    second = settled(stack, job_ids, timeout_s=REDRIVE_TIMEOUT_S)
    assert all((job.run, job.status) == (2, JobStatus.SUCCEEDED) for job in second.values())
    assert max(ledger_history(stack)[history_before:]) <= CAPACITY
    assert most_at_once(second.values()) <= CAPACITY


# ---- reprocess: run finished documents again, through the backlog ---------------------------


def received(sqs: Any, queue_url: str) -> list[Any]:
    """Every completion event on a consumer's queue (each checked against the published
    event schema), received and deleted."""
    from richdoc_client.events import CompletionEvent

    found = []
    while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
        "Messages"
    ):
        for message in messages:
            body = json.loads(message["Body"])
            assert schema_errors("event", body["detail"]) == []
            found.append(CompletionEvent.model_validate(body))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return found


def test_reprocess_after_a_contract_change_runs_each_document_again_through_the_backlog(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import richdoc.parse.settings
    from richdoc.artifacts import contract_of
    from richdoc.document_results import kept_keys
    from richdoc_client.events import CompletionEvent
    from richdoc_client.identity import document_id
    from richdoc_client.manifest import manifest_key
    from richdoc_client.reader import ResultsReader

    sqs, events = stack.client("sqs"), stack.client("events")
    bus = stack.outputs["EventBusName"]
    # A consumer's subscription, as docs/consumers.md makes one.
    subscription = subscribe(sqs, events, bus, "reprocess-e2e", '{"source": ["richdoc"]}')
    job_ids = [upload(stack, f"reprocess/{n}.md", note(n)) for n in range(4)]
    first = settled(stack, job_ids)
    assert {job.status for job in first.values()} == {JobStatus.SUCCEEDED}
    old = {contract_of(job.outputs.docling_key) for job in first.values()}
    # A document finished before manifests existed: it has none.
    ingest, results = stack.outputs["IngestBucketName"], stack.outputs["ArtifactBucketName"]
    lost = manifest_key(document_id(ingest, first[job_ids[0]].source.key))
    stack.client("s3").delete_object(Bucket=results, Key=lost)

    assert main(["reprocess"]) == 2  # which documents: a usage error
    assert "--all, --prefix, --tenant or --contract-changed" in capsys.readouterr().err
    # An upgrade changes what the parse is (the contract every artifact is stored under).
    monkeypatch.setattr(richdoc.parse.settings, "PARSE_SCHEMA", "richdoc.parse/upgraded")
    capsys.readouterr()
    assert main(["reprocess", "--prefix", "reprocess/", "--contract-changed", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["matched"], report["queued"], report["skipped"]) == (4, 4, 0)
    assert {r["outcome"] for r in report["results"]} == {"queued"}
    second = settled(stack, job_ids)
    announced = {
        (event.detail.job_id, event.detail.run): event for event in received(sqs, subscription)
    }
    events.remove_targets(Rule="reprocess-e2e", EventBusName=bus, Ids=["queue"])
    events.delete_rule(Name="reprocess-e2e", EventBusName=bus)
    sqs.delete_queue(QueueUrl=subscription)
    reader = ResultsReader.s3(results, client=stack.client("s3"))
    for job_id in job_ids:
        job = second[job_id]
        assert (job.run, job.status) == (2, JobStatus.SUCCEEDED)
        assert contract_of(job.outputs.docling_key) not in old
        # Its manifest points at the new run, kept with the document (the lost one is
        # back), and its completion event says so.
        manifest = reader.manifest_of(ingest, job.source.key)
        assert manifest.result is not None and manifest.result.run == 2
        assert manifest.result.outputs == kept_keys(job, results)
        event = announced[(job_id, 2)]
        assert isinstance(event, CompletionEvent) and event.detail.current is True
        assert event.detail.manifest is not None and event.detail.manifest.run == 2
        assert event.detail.outputs == manifest.result.outputs
    assert most_at_once(second.values()) <= CAPACITY
    # Nothing is left whose contract differs: a second reprocess queues nothing.
    assert main(["reprocess", "--prefix", "reprocess/", "--contract-changed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == 0


def test_a_reprocess_keeps_each_documents_result_until_its_new_run_succeeds(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """While the new runs wait and run, every manifest stays on the run before; the run
    that fails leaves that result in place (its event says so); the one that succeeds
    replaces it, and the older run's copy is removed."""
    from richdoc.manifests import ManifestKeeper
    from richdoc_client.reader import ResultsReader

    sqs, events, s3 = stack.client("sqs"), stack.client("events"), stack.client("s3")
    bus = stack.outputs["EventBusName"]
    ingest, results = stack.outputs["IngestBucketName"], stack.outputs["ArtifactBucketName"]
    subscription = subscribe(sqs, events, bus, "rerun-e2e", '{"source": ["richdoc"]}')
    ok, failing = (upload(stack, f"rerun/{name}.md", note(name)) for name in ("ok", "failing"))
    first = settled(stack, [ok, failing])
    reader = ResultsReader.s3(results, client=s3)
    before = {j: reader.manifest_of(ingest, job.source.key) for j, job in first.items()}
    assert all(m.result is not None and m.result.run == 1 for m in before.values())
    held = Gate()
    monkeypatch.setattr(Actions, "start", held.before(Actions.start))
    stack.script.add(
        "ProjectFunction",
        PlatformError("Runtime.ExitError", "exit status 1"),
        when=lambda event: isinstance(event, dict) and event.get("job_id") == failing,
    )
    assert main(["reprocess", "--prefix", "rerun/", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queued"] == 2
    assert wait_until(lambda: held.arrivals == 2, TIMEOUT_S)  # both admitted, held at start
    keeper = ManifestKeeper(s3=s3, jobs=stack.jobs, results_bucket=results)
    for job_id, job in first.items():
        assert stack.jobs.get(job_id).run == 2
        assert keeper.refresh(ingest, job.source.key) == before[job_id]  # nothing falls back
        assert reader.manifest_of(ingest, job.source.key) == before[job_id]
    held.open()
    second = settled(stack, [ok, failing])
    announced = {(e.detail.job_id, e.detail.run): e.detail for e in received(sqs, subscription)}
    events.remove_targets(Rule="rerun-e2e", EventBusName=bus, Ids=["queue"])
    events.delete_rule(Name="rerun-e2e", EventBusName=bus)
    sqs.delete_queue(QueueUrl=subscription)

    assert (second[failing].run, second[failing].status) == (2, JobStatus.DEAD_LETTERED)
    kept = reader.manifest_of(ingest, first[failing].source.key)
    assert (kept.run, kept.status, kept.result) == (2, "DEAD_LETTERED", before[failing].result)
    assert list(reader.chunks(kept)) == list(reader.chunks(before[failing]))
    dead = announced[(failing, 2)]
    assert dead.current is False and dead.outputs is None
    assert dead.manifest is not None and dead.manifest.result == before[failing].result_ref

    assert (second[ok].run, second[ok].status) == (2, JobStatus.SUCCEEDED)
    replaced = reader.manifest_of(ingest, first[ok].source.key)
    assert replaced.result is not None and replaced.result.run == 2
    assert announced[(ok, 2)].current is True
    folder = replaced.result.outputs.projection_key.rsplit("/", 2)[0] + "/"  # <job id>/
    listed = s3.list_objects_v2(Bucket=results, Prefix=folder, Delimiter="/")
    assert [p["Prefix"].removeprefix(folder) for p in listed["CommonPrefixes"]] == ["run-002/"]
