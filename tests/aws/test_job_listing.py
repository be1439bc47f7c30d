"""Job listings page by page from the by-status index (``richdoc.jobs.listing``): every job
exactly once, most recently changed first, across statuses and filters; counts."""

from __future__ import annotations

from typing import Any

import pytest

from richdoc.jobs import Job, JobFilter, JobStatus, JobStore, Position, job_key
from richdoc.taxonomy import Failure, FailureKind
from tests.support.records import SOURCE

STATUSES = list(JobStatus)


def _put(table: Any, n: int, status: JobStatus, updated_at: str, **fields: Any) -> Job:
    job = Job(
        job_id=f"{n:032x}",
        status=status,
        run=1,
        source=SOURCE.model_copy(update={"key": f"file-{n}.pdf"}),
        created_at=updated_at,
        updated_at=updated_at,
        **fields,
    )
    table.put_item(Item={**job_key(job.job_id), **job.to_item()})
    return job


def _stamp(second: int) -> str:
    return f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}.000+00:00"


@pytest.fixture
def jobs(jobs_table: Any) -> list[Job]:
    """41 jobs over every status, several sharing an updated_at (ties across and within
    statuses)."""
    made = []
    for n in range(41):
        status = STATUSES[n % len(STATUSES)]
        failure = None
        if status in (JobStatus.FAILED, JobStatus.DEAD_LETTERED):
            kind = FailureKind.CORRUPT_INPUT if n % 2 else FailureKind.UNSUPPORTED_FEATURE
            failure = Failure(kind=kind, reason="r", feature="ocr" if n % 3 == 0 else None)
        made.append(_put(jobs_table, n, status, _stamp(n // 3), failure=failure, tier=n % 3 + 1))
    return made


def _expected(jobs: list[Job], keep: Any = lambda job: True) -> list[str]:
    chosen = [j for j in jobs if keep(j)]
    return [j.job_id for j in sorted(chosen, key=lambda j: (j.updated_at, j.job_id), reverse=True)]


def _all_pages(store: JobStore, which: JobFilter, limit: int) -> list[str]:
    seen: list[str] = []
    after = None
    for _ in range(100):
        page = store.page(which, limit=limit, after=after)
        assert len(page.jobs) <= limit
        seen += [j.job_id for j in page.jobs]
        if page.next is None:
            return seen
        # The cursor goes through its opaque form, as a browser would hand it back.
        after = Position.from_token(page.next.token())
    raise AssertionError("paging did not end")


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 50])
def test_pages_hold_every_job_once_newest_first(
    job_store: JobStore, jobs: list[Job], limit: int
) -> None:
    assert _all_pages(job_store, JobFilter(), limit) == _expected(jobs)


def test_filters_by_status_failure_tier_and_time(job_store: JobStore, jobs: list[Job]) -> None:
    dead = JobFilter(statuses=(JobStatus.DEAD_LETTERED,))
    assert _all_pages(job_store, dead, 2) == _expected(
        jobs, lambda j: j.status is JobStatus.DEAD_LETTERED
    )
    corrupt = JobFilter(kind="corrupt_input", feature="ocr")
    assert _all_pages(job_store, corrupt, 2) == _expected(
        jobs,
        lambda j: (
            j.failure is not None
            and j.failure.kind == "corrupt_input"
            and j.failure.feature == "ocr"
        ),
    )
    assert _all_pages(job_store, JobFilter(tier=2), 4) == _expected(jobs, lambda j: j.tier == 2)
    window = JobFilter(since=_stamp(3), until=_stamp(8))
    assert _all_pages(job_store, window, 4) == _expected(
        jobs, lambda j: _stamp(3) <= (j.updated_at or "") <= _stamp(8)
    )


def test_counts_by_status_and_since(job_store: JobStore, jobs: list[Job]) -> None:
    open_statuses = [s for s in JobStatus if not s.terminal]
    assert job_store.count(open_statuses) == sum(not j.status.terminal for j in jobs)
    assert job_store.count([JobStatus.DEAD_LETTERED], since=_stamp(10)) == sum(
        j.status is JobStatus.DEAD_LETTERED and (j.updated_at or "") >= _stamp(10) for j in jobs
    )


@pytest.mark.parametrize("token", ["", "???", "bm90IGpzb24", "WzFd", "eyJhIjogMX0"])
def test_a_cursor_the_listing_did_not_make_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match="not a page cursor"):
        Position.from_token(token)


def test_a_page_holds_at_least_one_job(job_store: JobStore) -> None:
    with pytest.raises(ValueError, match="at least one job"):
        job_store.page(JobFilter(), limit=0)
