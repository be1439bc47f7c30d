"""``richdoc reprocess`` against the AWS emulation (moto): which jobs it runs again and
which it skips (and says why, with each job's status), its selection read a page at a
time (the jobs it holds counted, never its memory timed), and an interrupted reprocess
resumed from its token without queuing any job twice. The runs it queues going through
the real state machine: tests/e2e/test_admission_e2e.py."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import boto3
import pytest
from richdoc_tools.cli import main
from richdoc_tools.ops.operator import Operator, StackResources
from richdoc_tools.ops.reprocess import (
    ReprocessCursor,
    ReprocessFilter,
    ReprocessOutcome,
    reprocess,
)

from richdoc.contracts import JobOptions, SourceObject
from richdoc.jobs import DeletionMark, Job, JobStatus, JobStore, job_id_for, timestamp
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import COUNTS, OUTPUTS
from tests.support.stack_outputs import create_stack, stack_outputs

REGION = "us-east-1"
INGEST = "ingest"
STACK = "richdoc-reprocess"
START = datetime(2026, 1, 1, tzinfo=UTC)
UPLOADED = timestamp(START - timedelta(days=1))


@pytest.fixture
def clock() -> Any:
    """A clock a millisecond further at every reading."""
    ticks = count()
    return lambda: timestamp(START + timedelta(milliseconds=next(ticks)))


@pytest.fixture
def operator(jobs_table: Any, clock: Any, monkeypatch: pytest.MonkeyPatch) -> Operator:
    """The operator of a stack whose outputs name a versioned ingest bucket and the jobs
    table (found through CloudFormation, as ``--stack`` finds them), writing with
    ``clock``."""
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=INGEST)
    s3.put_bucket_versioning(Bucket=INGEST, VersioningConfiguration={"Status": "Enabled"})
    outputs = stack_outputs(jobs_table.name, IngestBucketName=INGEST)
    create_stack(STACK, outputs)
    store = JobStore(jobs_table, clock=clock)
    monkeypatch.setattr(Operator, "jobs", property(lambda _: store))
    return Operator(boto3.Session(region_name=REGION), StackResources.from_outputs(STACK, outputs))


def upload(operator: Operator, key: str, status: JobStatus = JobStatus.SUCCEEDED) -> Job:
    """A version of ``key`` and its job, ended in ``status`` (as the pipeline leaves it)."""
    version = operator.s3.put_object(Bucket=INGEST, Key=key, Body=key.encode())["VersionId"]
    store, job_id = operator.jobs, job_id_for(INGEST, key, version)
    source = SourceObject(bucket=INGEST, key=key, version_id=version)
    assert store.create(job_id, source, JobOptions(), message="{}", tenant="t", queued_at=UPLOADED)
    if status is JobStatus.DELETED:
        store.mark_deleted(job_id, DeletionMark(at=UPLOADED, by="operator", reason="test"))
    elif status is not JobStatus.QUEUED:
        store.mark_running(job_id, 1, "arn:execution")
        if status is JobStatus.SUCCEEDED:
            store.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline=None)
        elif status is JobStatus.DEAD_LETTERED:
            store.record_failure(job_id, 1, Failure(kind=FailureKind.CORRUPT_INPUT, reason="x"))
            store.mark_dead_lettered(job_id, 1, "m-1", sent_by="sweep")
        elif status is JobStatus.CANCELLED:
            store.cancel(job_id, 1, by="test", reason="uploaded by mistake")
    job = store.get(job_id)
    assert job is not None and job.status is status
    return job


def fresh(operator: Operator, wanted: ReprocessFilter, *, dry_run: bool = False) -> ReprocessCursor:
    return ReprocessCursor(wanted=wanted, dry_run=dry_run, began=operator.jobs.clock())


def runs(operator: Operator, jobs: Iterable[Job]) -> list[int]:
    found = operator.jobs.get_many(job.job_id for job in jobs)
    return [found[job.job_id].run for job in jobs]


# ---- what it runs again, and what it skips ---------------------------------------------------

STATUSES = (
    JobStatus.SUCCEEDED,
    JobStatus.DEAD_LETTERED,
    JobStatus.CANCELLED,
    JobStatus.DELETED,
    JobStatus.RUNNING,
)


def test_the_dry_run_shows_each_jobs_status_and_skips_cancelled_and_deleted_ones(
    operator: Operator, capsys: pytest.CaptureFixture[str]
) -> None:
    for status in STATUSES:
        upload(operator, f"mixed/{status.lower()}.docx", status)
    upload(operator, "other/outside.docx")
    capsys.readouterr()
    args = ["reprocess", "--stack", STACK, "--prefix", "mixed/", "--dry-run", "--json"]
    assert main(args) == 0
    out = capsys.readouterr()
    report = json.loads(out.out)
    found = {
        r["key"].removeprefix("mixed/"): (r["status"], r["outcome"]) for r in report["results"]
    }
    assert found == {
        "succeeded.docx": ("SUCCEEDED", "would_queue"),
        "dead_lettered.docx": ("DEAD_LETTERED", "would_queue"),
        "cancelled.docx": ("CANCELLED", "skipped"),
        "deleted.docx": ("DELETED", "skipped"),
        "running.docx": ("RUNNING", "skipped"),
    }
    assert (report["matched"], report["queued"], report["skipped"], report["dry_run"]) == (
        5,
        2,
        3,
        True,
    )
    assert [r["key"] for r in report["results"]] == sorted(r["key"] for r in report["results"])
    cancelled = next(r for r in report["results"] if r["status"] == "CANCELLED")
    assert "--include-cancelled" in cancelled["detail"]
    assert "richdoc reprocess --resume " in out.err
    # Asked for, the cancelled upload runs again too; a deleted one never does.
    assert main([*args, "--include-cancelled"]) == 0
    again = {r["status"]: r["outcome"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert again["CANCELLED"] == "would_queue" and again["DELETED"] == "skipped"


def test_it_queues_the_next_run_of_what_it_selects_and_leaves_the_rest(
    operator: Operator, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = {status: upload(operator, f"mixed/{status.lower()}.docx", status) for status in STATUSES}
    older = upload(operator, "mixed/succeeded.docx")  # a newer version of the same key
    capsys.readouterr()
    assert main(["reprocess", "--stack", STACK, "--prefix", "mixed/"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split("\t") == [
        "job id",
        "key",
        "tenant",
        "status",
        "outcome",
        "run",
        "detail",
    ]
    assert out.splitlines()[-1] == "5 matched; queued 2; skipped 3"
    after = operator.jobs.get_many(j.job_id for j in [*jobs.values(), older])
    assert after[older.job_id].run == 2  # the key's current version
    assert after[jobs[JobStatus.SUCCEEDED].job_id].run == 1  # an older version stays
    assert after[jobs[JobStatus.DEAD_LETTERED].job_id].run == 2
    for status in (JobStatus.CANCELLED, JobStatus.DELETED, JobStatus.RUNNING):
        assert (after[jobs[status].job_id].run, after[jobs[status].job_id].status) == (1, status)


def test_a_key_under_a_delete_marker_is_not_selected(operator: Operator) -> None:
    upload(operator, "gone/a.docx")
    operator.s3.delete_object(Bucket=INGEST, Key="gone/a.docx")
    cursor = fresh(operator, ReprocessFilter(prefix="gone/"))
    assert list(reprocess(operator, cursor)) == []


# ---- a page at a time ------------------------------------------------------------------------


def test_it_holds_one_page_of_jobs_at_a_time(
    operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(45):
        upload(operator, f"many/{n:03d}.docx")
    held: weakref.WeakSet[Job] = weakref.WeakSet()  # every job it read and still holds
    most, real = 0, operator.jobs.get_many

    def get_many(job_ids: Iterable[str]) -> dict[str, Job]:
        nonlocal most
        assert len(held) == 0  # the page before is let go before the next is read
        found = real(job_ids)
        held.update(found.values())
        most = max(most, len(held))
        return found

    monkeypatch.setattr(operator.jobs, "get_many", get_many)
    cursor = fresh(operator, ReprocessFilter(prefix="many/"))
    results = []
    for result, _ in reprocess(operator, cursor, page_size=10):
        assert len(held) <= 10
        results.append(result)
    assert len(results) == 45 and {r.outcome for r in results} == {ReprocessOutcome.QUEUED}
    assert most == 10


# ---- resumed ---------------------------------------------------------------------------------


def _stopping_after(operator: Operator, monkeypatch: pytest.MonkeyPatch, queued: int) -> None:
    """The ``queued``-th run queued is written, and then the operator's Ctrl-C arrives,
    before the reprocess could say so."""
    real, calls = operator.jobs.start_next_run, count(1)

    def start_next_run(*args: Any, **kwargs: Any) -> int:
        run = real(*args, **kwargs)
        if next(calls) == queued:
            raise KeyboardInterrupt
        return run

    monkeypatch.setattr(operator.jobs, "start_next_run", start_next_run)


def _finish_runs(operator: Operator, jobs: Iterable[Job]) -> None:
    """The runs queued so far end (they are SUCCEEDED again: reprocessable, were it not
    for when they were queued)."""
    store = operator.jobs
    for job in store.get_many(j.job_id for j in jobs).values():
        if job.status is JobStatus.QUEUED:
            store.mark_running(job.job_id, job.run, "arn:execution")
            store.succeed(job.job_id, job.run, outputs=OUTPUTS, counts=COUNTS, pipeline=None)


def test_an_interrupted_reprocess_resumes_from_its_token_and_queues_no_job_twice(
    operator: Operator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    documents = [upload(operator, f"resume/{n:02d}.docx") for n in range(25)]
    capsys.readouterr()
    args = ["reprocess", "--stack", STACK, "--prefix", "resume/", "--page-size", "10"]
    with monkeypatch.context() as patch:
        _stopping_after(operator, patch, queued=14)
        assert main(args) == 130
    out, err = capsys.readouterr()
    reported = [line.split("\t")[1] for line in out.splitlines()[1:]]
    assert reported == [d.source.key for d in documents[:13]]
    token = err.split("stopped; go on with: richdoc reprocess --resume ")[1].split()[0]
    assert ReprocessCursor.from_token(token).after == documents[12].source.key
    assert runs(operator, documents) == [2] * 14 + [1] * 11  # the 14th queued, unreported
    _finish_runs(operator, documents)
    assert main(["reprocess", "--stack", STACK, "--resume", token, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    outcomes = {r["key"]: (r["outcome"], r["detail"]) for r in report["results"]}
    assert list(outcomes) == [d.source.key for d in documents[13:]]
    assert outcomes[documents[13].source.key] == ("skipped", "queued since this reprocess began")
    assert (report["queued"], report["skipped"]) == (11, 1)
    assert runs(operator, documents) == [2] * 25  # each queued once


def test_a_resume_takes_only_its_token(
    operator: Operator, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["reprocess", "--stack", STACK]
    assert main([*base, "--resume", "bm90IGEgdG9rZW4="]) == 2
    assert "not a resume token" in capsys.readouterr().err
    token = fresh(operator, ReprocessFilter(prefix="x/")).token()
    assert main([*base, "--resume", token, "--prefix", "y/"]) == 2
    assert "--resume takes no selection" in capsys.readouterr().err
