"""Job and attempt records: a closed status vocabulary and run-fenced transitions."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from richdoc.contracts import JobOptions, PageSpan
from richdoc.jobs import (
    DeadLetterMark,
    JobStatus,
    JobStore,
    StaleRun,
    execution_name,
    job_id_for,
    job_key,
    timestamp,
)
from richdoc.taxonomy import Failure, FailureKind, ResourceLimit
from tests.support.records import COUNTS, OUTPUTS, SOURCE


def _running(store: JobStore, job_id: str = "job-1") -> str:
    assert store.create(job_id, SOURCE, JobOptions(clarify=True))
    store.mark_running(job_id, 1, f"arn:execution:{job_id}-r1")
    return job_id


def _dead_lettered(store: JobStore, job_id: str, run: int, failure: Failure) -> None:
    store.record_failure(job_id, run, failure)
    store.mark_dead_lettered(job_id, run, f"message-{job_id}-r{run}", sent_by="state-machine")


def test_job_id_is_deterministic_per_object_version() -> None:
    assert job_id_for("b", "k", "v1") == job_id_for("b", "k", "v1")
    assert job_id_for("b", "k", "v1") != job_id_for("b", "k", "v2")
    assert job_id_for("b", "a/b", "v") != job_id_for("b/a", "b", "v")


def test_execution_names_fit_step_functions_limits() -> None:
    name = execution_name(job_id_for("bucket", "key", "version"), 12)
    assert len(name) <= 80
    assert name.replace("-", "").replace("_", "").isalnum()


def test_status_vocabulary_is_closed_and_knows_terminal_states() -> None:
    assert {s.value for s in JobStatus} == {
        "QUEUED",
        "RUNNING",
        "SUCCEEDED",
        "FAILED",
        "DEAD_LETTERED",
        "CANCELLED",
        "DELETED",
    }
    # FAILED is not terminal: its dead-letter message is not confirmed yet.
    assert {s for s in JobStatus if s.terminal} == {
        JobStatus.SUCCEEDED,
        JobStatus.DEAD_LETTERED,
        JobStatus.CANCELLED,
        JobStatus.DELETED,
    }
    assert {s for s in JobStatus if s.redrivable} == {
        JobStatus.DEAD_LETTERED,
        JobStatus.FAILED,
        JobStatus.CANCELLED,
    }


def test_create_keeps_the_message_and_the_execution_to_be(job_store: JobStore) -> None:
    assert job_store.create(
        "job-1", SOURCE, JobOptions(), message='{"Records": []}', execution_arn="arn:x:job-1-r1"
    )
    job = job_store.get("job-1")
    assert job is not None
    assert (job.message, job.execution_arn) == ('{"Records": []}', "arn:x:job-1-r1")


def test_create_is_idempotent_for_duplicate_notifications(job_store: JobStore) -> None:
    assert job_store.create("job-1", SOURCE, JobOptions(clarify=False)) is True
    assert job_store.create("job-1", SOURCE, JobOptions(clarify=True)) is False
    job = job_store.get("job-1")
    assert job is not None
    assert (job.status, job.run, job.options) == (JobStatus.QUEUED, 1, JobOptions(clarify=False))
    assert job.source == SOURCE


def test_success_records_outputs_counts_and_pipeline(job_store: JobStore) -> None:
    job_id = _running(job_store)
    job_store.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline="simple")
    job = job_store.get(job_id)
    assert job is not None
    assert job.status is JobStatus.SUCCEEDED
    assert job.outputs == OUTPUTS
    assert job.counts == COUNTS
    # The digest is the parse's to record (richdoc.jobs.references), not the success's.
    assert job.source == SOURCE
    assert job.pipeline == "simple"


def test_a_failure_is_recorded_first_and_dead_lettered_with_its_message_after(
    job_store: JobStore,
) -> None:
    job_id = _running(job_store)
    failure = Failure(
        FailureKind.UNSUPPORTED_FEATURE, "PDF is encrypted", "encrypted", "UnsupportedFeature"
    )
    failed = job_store.record_failure(job_id, 1, failure)
    assert failed.status is JobStatus.FAILED and failed.ended_at is None
    assert failed.failure == Failure(
        FailureKind.UNSUPPORTED_FEATURE,
        "PDF is encrypted",
        feature="encrypted",
        error="UnsupportedFeature",
    )
    marked = job_store.mark_dead_lettered(job_id, 1, "message-1", sent_by="state-machine")
    assert marked is not None and marked.status is JobStatus.DEAD_LETTERED
    assert marked.dead_letter == DeadLetterMark(message_id="message-1", sent_by="state-machine")
    assert marked.failure == failed.failure and marked.ended_at is not None
    assert job_store.get(job_id) == marked


def test_a_repeated_failure_record_keeps_the_first(job_store: JobStore) -> None:
    job_id = _running(job_store)
    first = job_store.record_failure(job_id, 1, Failure(FailureKind.CORRUPT_INPUT, "not a zip"))
    again = job_store.record_failure(job_id, 1, Failure(FailureKind.INTERNAL, "retried call"))
    assert again.failure == first.failure


def test_only_a_failed_run_is_dead_lettered_and_only_with_one_message(
    job_store: JobStore,
) -> None:
    job_id = _running(job_store)
    with pytest.raises(StaleRun):  # RUNNING: nothing recorded the failure
        job_store.mark_dead_lettered(job_id, 1, "message-1", sent_by="sweep")
    job_store.record_failure(job_id, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert job_store.mark_dead_lettered(job_id, 1, "message-1", sent_by="state-machine")
    # The same mark again (a retried call) writes nothing; another message is a conflict.
    assert job_store.mark_dead_lettered(job_id, 1, "message-1", sent_by="state-machine") is None
    with pytest.raises(StaleRun):
        job_store.mark_dead_lettered(job_id, 1, "message-2", sent_by="reconciler")
    job = job_store.get(job_id)
    assert job is not None and job.dead_letter == DeadLetterMark(
        message_id="message-1", sent_by="state-machine"
    )


def test_a_stale_run_can_never_overwrite_a_newer_run(job_store: JobStore) -> None:
    job_id = _running(job_store)
    _dead_lettered(job_store, job_id, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert job_store.start_next_run(job_id, 1, execution_arn="arn:execution:r2") == 2
    job_store.mark_running(job_id, 2, "arn:execution:r2")
    with pytest.raises(StaleRun):
        job_store.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline=None)
    with pytest.raises(StaleRun):
        job_store.record_failure(job_id, 1, Failure(FailureKind.INTERNAL, "late"))
    with pytest.raises(StaleRun):
        job_store.mark_dead_lettered(job_id, 1, "message-job-1-r1", sent_by="reconciler")
    job = job_store.get(job_id)
    assert job is not None and (job.run, job.status) == (2, JobStatus.RUNNING)
    assert job.failure is None and job.dead_letter is None


def test_a_redrive_advances_the_run_exactly_once(job_store: JobStore) -> None:
    job_id = _running(job_store)
    _dead_lettered(job_store, job_id, 1, Failure(FailureKind.CORRUPT_INPUT, "bad"))
    assert job_store.start_next_run(job_id, 1, execution_arn="arn:execution:r2") == 2
    job = job_store.get(job_id)
    assert job is not None and (job.status, job.execution_arn) == (
        JobStatus.QUEUED,
        "arn:execution:r2",
    )
    with pytest.raises(StaleRun):
        job_store.start_next_run(job_id, 1)


def test_a_failed_run_whose_message_is_redriven_advances_before_its_mark(
    job_store: JobStore,
) -> None:
    # The redriven message proves the send; the run's own mark then finds run 2.
    job_id = _running(job_store)
    job_store.record_failure(job_id, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert job_store.start_next_run(job_id, 1) == 2
    with pytest.raises(StaleRun):
        job_store.mark_dead_lettered(job_id, 1, "message-1", sent_by="state-machine")


def test_only_dead_lettered_runs_can_be_redriven(job_store: JobStore) -> None:
    job_id = _running(job_store)
    with pytest.raises(StaleRun):
        job_store.start_next_run(job_id, 1)


def test_succeeded_jobs_cannot_be_failed_later(job_store: JobStore) -> None:
    job_id = _running(job_store)
    job_store.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline=None)
    with pytest.raises(StaleRun):
        job_store.record_failure(job_id, 1, Failure(FailureKind.INTERNAL, "late duplicate"))


def test_a_failed_job_takes_no_stage_from_a_zombie_handler(job_store: JobStore) -> None:
    job_id = _running(job_store)
    job_store.record_failure(job_id, 1, Failure(FailureKind.RESOURCE_LIMIT, "tier 3"))
    with pytest.raises(StaleRun):
        job_store.attempts.open(job_id, 1, "parse", tier=3)


def test_attempt_context_records_ok_and_error_outcomes(job_store: JobStore) -> None:
    job_id = _running(job_store)
    with job_store.attempts.record(job_id, 1, "parse", tier=1, memory_mb=3008, request_id="r1"):
        pass
    with pytest.raises(ResourceLimit), job_store.attempts.record(job_id, 1, "parse", tier=2):
        raise ResourceLimit("child exceeded 2.4 GB")
    first, second = job_store.attempts.of_job(job_id, 1)
    assert (first.stage, first.attempt, first.tier, first.outcome) == ("parse", 1, 1, "ok")
    assert first.memory_mb == 3008 and first.duration_ms is not None
    assert (second.attempt, second.tier, second.outcome) == (2, 2, "ResourceLimit")
    assert second.reason == "child exceeded 2.4 GB"
    job = job_store.get(job_id)
    assert job is not None and (job.stage, job.tier) == ("parse", 2)


def test_platform_killed_attempt_is_closed_by_the_catch_path(job_store: JobStore) -> None:
    job_id = _running(job_store)
    attempt = job_store.attempts.open(job_id, 1, "parse", tier=1)  # then the sandbox dies
    timeout = Failure.from_error("Sandbox.Timedout", "Task timed out after 900.00 seconds")
    closed = job_store.attempts.record_platform_failure(job_id, 1, "parse", 1, timeout)
    assert closed is not None and closed.seq == attempt.seq
    [recorded] = job_store.attempts.of_job(job_id, 1)
    assert recorded.outcome == "Sandbox.Timedout"
    # The zombie handler finishing later cannot overwrite the recorded outcome.
    assert job_store.attempts.close(attempt, "ok") is False
    assert job_store.attempts.of_job(job_id, 1)[0].outcome == "Sandbox.Timedout"


def test_attempts_the_platform_never_started_are_added_once(job_store: JobStore) -> None:
    job_id = _running(job_store)
    throttled = Failure.from_error("Lambda.TooManyRequestsException", "Rate exceeded")
    added = job_store.attempts.record_platform_failure(job_id, 1, "project", None, throttled)
    assert added is not None and added.recorded_by == "state-machine"
    assert job_store.attempts.record_platform_failure(job_id, 1, "project", None, throttled) is None
    assert [a.outcome for a in job_store.attempts.of_job(job_id, 1)] == [
        "Lambda.TooManyRequestsException"
    ]


def test_handler_recorded_errors_are_not_recorded_twice(job_store: JobStore) -> None:
    job_id = _running(job_store)
    with pytest.raises(ResourceLimit), job_store.attempts.record(job_id, 1, "parse", tier=1):
        raise ResourceLimit("over the ceiling")
    failure = Failure.from_error("ResourceLimit", '{"errorMessage": "over the ceiling"}')
    assert job_store.attempts.record_platform_failure(job_id, 1, "parse", 1, failure) is None
    assert len(job_store.attempts.of_job(job_id, 1)) == 1


def test_jobs_are_listed_by_status_through_the_index(job_store: JobStore) -> None:
    for n in range(3):
        _running(job_store, f"job-{n}")
    _dead_lettered(job_store, "job-1", 1, Failure(FailureKind.CORRUPT_INPUT, "bad"))
    job_store.record_failure("job-2", 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert [j.job_id for j in job_store.list_jobs(JobStatus.DEAD_LETTERED)] == ["job-1"]
    assert [j.job_id for j in job_store.list_jobs(JobStatus.FAILED)] == ["job-2"]
    assert {j.job_id for j in job_store.list_jobs(JobStatus.RUNNING)} == {"job-0"}
    assert len(job_store.list_jobs()) == 3


def test_many_jobs_are_read_in_batches_and_missing_ones_are_absent(job_store: JobStore) -> None:
    ids = [f"job-{n}" for n in range(130)]  # more than one BatchGetItem (100 keys)
    for job_id in ids:
        _running(job_store, job_id)
    job_store.record_failure("job-7", 1, Failure(FailureKind.CORRUPT_INPUT, "bad"))
    job_store.mark_dead_lettered("job-7", 1, "message-1", sent_by="state-machine")
    wanted = [*ids, "never-created"]
    jobs = job_store.get_many(wanted)
    assert set(jobs) == set(ids)
    assert jobs["job-7"].failure == Failure(FailureKind.CORRUPT_INPUT, "bad")
    statuses = job_store.statuses(wanted)
    assert set(statuses) == set(ids)
    assert statuses["job-7"] is JobStatus.DEAD_LETTERED
    assert {statuses[i] for i in ids if i != "job-7"} == {JobStatus.RUNNING}


def test_jobs_unchanged_since_a_moment_are_found_by_status_and_time(jobs_table: Any) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    now = [start]
    store = JobStore(jobs_table, clock=lambda: timestamp(now[0]))
    _running(store, "old")
    now[0] = start + timedelta(hours=4)
    _running(store, "new")

    def unchanged(status: JobStatus, moment: datetime) -> list[str]:
        return [job.job_id for job, _ in store.unchanged_page(status, moment).jobs]

    assert unchanged(JobStatus.RUNNING, start + timedelta(hours=1)) == ["old"]
    assert unchanged(JobStatus.QUEUED, now[0]) == []
    assert unchanged(JobStatus.RUNNING, start) == []  # strictly before


def test_a_page_of_unchanged_jobs_leaves_out_the_jobs_waiting_for_a_slot(
    jobs_table: Any,
) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    store = JobStore(jobs_table, clock=lambda: timestamp(start))
    assert store.create("waiting", SOURCE, JobOptions(), tenant="acme")
    assert store.create("admitted", SOURCE, JobOptions())  # no tenant: not in a backlog
    later = start + timedelta(hours=4)
    page = store.unchanged_page(JobStatus.QUEUED, later)
    assert [job.job_id for job, _ in page.jobs] == ["admitted"]
    assert page.after is None
    # Its index key is where a walk resumes: nothing after it.
    [(_, key)] = page.jobs
    assert store.unchanged_page(JobStatus.QUEUED, later, key).jobs == []


# ---- the attempt write ---------------------------------------------------------------------


def _requests(store: JobStore) -> list[str]:
    """The DynamoDB operations ``store`` sends from now on, in order."""
    sent: list[str] = []
    client = store.table.meta.client
    client.meta.events.register("before-call.dynamodb", lambda model, **_: sent.append(model.name))
    return sent


def test_opening_an_attempt_is_one_job_update_and_one_put(job_store: JobStore) -> None:
    job_id = _running(job_store)
    sent = _requests(job_store)
    attempt = job_store.attempts.open(job_id, 1, "parse", tier=1, pages=PageSpan.parse("1-50"))
    assert sent == ["UpdateItem", "PutItem"]
    job_store.attempts.close(attempt, "ok")
    assert sent == ["UpdateItem", "PutItem", "UpdateItem"]
    job = job_store.get(job_id)
    assert job is not None and (job.stage, job.tier) == ("parse", 1)


def test_a_stale_run_stops_before_recording_an_attempt(job_store: JobStore) -> None:
    job_id = _running(job_store)
    job_store.attempts.open(job_id, 1, "parse", tier=1)
    _dead_lettered(job_store, job_id, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    job_store.start_next_run(job_id, 1)
    job_store.mark_running(job_id, 2, "arn:execution:r2")
    before = job_store.table.get_item(Key=job_key(job_id))["Item"]
    sent = _requests(job_store)
    with pytest.raises(StaleRun):
        job_store.attempts.open(job_id, 1, "project")  # a zombie of run 1
    assert sent == ["UpdateItem"]  # refused by the fence: nothing else was sent
    assert job_store.table.get_item(Key=job_key(job_id))["Item"] == before
    assert [a.stage for a in job_store.attempts.of_job(job_id)] == ["parse"]


def test_a_redrive_numbers_the_next_run_s_attempts_from_one(job_store: JobStore) -> None:
    job_id = _running(job_store)
    for tier in (1, 2):
        job_store.attempts.open(job_id, 1, "parse", tier=tier)
    _dead_lettered(job_store, job_id, 1, Failure(FailureKind.TRANSIENT, "throttled"))
    job_store.start_next_run(job_id, 1)
    job_store.mark_running(job_id, 2, "arn:execution:r2")
    again = job_store.attempts.open(job_id, 2, "parse", tier=1)
    assert (again.run, again.seq, again.attempt) == (2, 3, 1)


def test_a_job_recorded_before_the_attempt_counters_numbers_on_from_its_attempts(
    job_store: JobStore,
) -> None:
    job_id = _running(job_store)
    with pytest.raises(ResourceLimit), job_store.attempts.record(job_id, 1, "parse", tier=1):
        raise ResourceLimit("over the ceiling")
    # As the job item was written before it counted attempts: no counter map.
    job_store.table.update_item(Key=job_key(job_id), UpdateExpression="REMOVE attempt_counts")
    second = job_store.attempts.open(job_id, 1, "parse", tier=2)
    assert (second.seq, second.attempt) == (2, 2)
    throttled = Failure.from_error("Lambda.TooManyRequestsException", "Rate exceeded")
    added = job_store.attempts.record_platform_failure(job_id, 1, "project", None, throttled)
    assert added is not None and (added.seq, added.attempt) == (3, 1)


def test_attempts_opened_side_by_side_are_numbered_per_shard_without_repeats(
    jobs_table: Any,
) -> None:
    """Shards open their attempts at the same time. Every thread's job update lands before
    any thread records its attempt, so a numbering that counted the recorded attempts
    would give every shard's attempts the same number."""
    job_id = _running(JobStore(jobs_table))
    shards, tries = ["1-50", "51-100", "101-150", "151-200"], 3
    openers = [(pages, n) for pages in shards for n in range(tries)]
    # DynamoDB applies each request to the item whole; moto's backend does not guard
    # itself against threads, so requests here go one at a time, interleaved freely.
    one_at_a_time = threading.Lock()
    all_numbered = threading.Barrier(len(openers))
    stores = []
    for _ in openers:  # a client each, as Lambda invocations have (and boto3 needs)
        table = boto3.resource("dynamodb", region_name=jobs_table.meta.client.meta.region_name)
        store = JobStore(table.Table(jobs_table.name))
        events = store.table.meta.client.meta.events
        numbered: list[bool] = []

        def sending(**_: Any) -> None:  # (a before-call handler's answer would be the call's)
            one_at_a_time.acquire()

        def sent(model: Any, numbered: list[bool] = numbered, **_: Any) -> None:
            one_at_a_time.release()
            if model.name == "UpdateItem" and not numbered:
                numbered.append(True)
                all_numbered.wait(timeout=120)

        events.register("before-call.dynamodb", sending)
        events.register("after-call.dynamodb", sent)
        events.register("after-call-error.dynamodb", lambda **_: one_at_a_time.release())
        stores.append(store)
    with ThreadPoolExecutor(len(openers)) as pool:
        opened = list(
            pool.map(
                lambda store, opener: store.attempts.open(
                    job_id, 1, "parse", pages=PageSpan.parse(opener[0])
                ),
                stores,
                openers,
            )
        )
    assert sorted(a.seq for a in opened) == list(range(1, len(openers) + 1))
    recorded = JobStore(jobs_table).attempts.of_job(job_id, 1)
    assert sorted(a.seq for a in recorded) == list(range(1, len(openers) + 1))
    for pages in shards:
        assert sorted(a.attempt for a in recorded if str(a.pages) == pages) == [1, 2, 3]
