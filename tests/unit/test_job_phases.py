"""The phase vocabulary and the progress a job shows (richdoc.jobs.phase): which phase
each step puts a job in, and counts only where they are exact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.contracts import PageSpan, SourceObject
from richdoc.jobs import Job, JobPhase, JobStatus, Progress
from richdoc.jobs.phase import phase_of_step


def test_the_vocabulary_is_closed_and_in_run_order() -> None:
    assert list(JobPhase) == [
        JobPhase.QUEUED,
        JobPhase.PLANNING,
        JobPhase.PARSING,
        JobPhase.PARSING_SHARDS,
        JobPhase.MERGING,
        JobPhase.PROJECTING,
        JobPhase.DETECTING,
        JobPhase.RECORDING,
        JobPhase.DEAD_LETTERING,
        JobPhase.SUCCEEDED,
        JobPhase.DEAD_LETTERED,
        JobPhase.CANCELLED,
        JobPhase.DELETED,
    ]


@pytest.mark.parametrize(
    ("stage", "pages", "phase"),
    [
        ("plan", None, JobPhase.PLANNING),
        ("parse", None, JobPhase.PARSING),
        ("parse", PageSpan(start=51, end=100), JobPhase.PARSING_SHARDS),
        ("merge", None, JobPhase.MERGING),
        ("project", None, JobPhase.PROJECTING),
        ("detect", None, JobPhase.DETECTING),
    ],
)
def test_each_step_puts_the_job_in_its_phase(
    stage: str, pages: PageSpan | None, phase: JobPhase
) -> None:
    assert phase_of_step(stage, pages) is phase  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 200)), max_size=20))
def test_pages_done_are_the_sum_of_the_finished_ranges(spans: list[tuple[int, int]]) -> None:
    ranges = {PageSpan(start=start, end=start + extra) for start, extra in spans}
    progress = Progress.of(JobPhase.PARSING_SHARDS, tier=1, shards=None, finished_ranges=ranges)
    assert progress.pages_done == sum(span.end - span.start + 1 for span in ranges)


def test_progress_shows_counts_only_where_they_are_exact() -> None:
    parsing = Progress.of(JobPhase.PARSING, tier=2, shards=1, finished_ranges=None)
    assert parsing == Progress(phase=JobPhase.PARSING, tier=2)
    assert parsing.describe() == "parsing (tier 2)"
    shards = Progress.of(
        JobPhase.PARSING_SHARDS,
        tier=1,
        shards=4,
        finished_ranges={PageSpan(start=51, end=100), PageSpan(start=1, end=50)},
    )
    assert (shards.shards, shards.shards_done, shards.pages_done) == (4, 2, 100)
    assert shards.describe() == "parsing shards: 2 of 4 done (100 pages)"
    merging = Progress.of(
        JobPhase.MERGING, tier=1, shards=4, finished_ranges={PageSpan(start=1, end=50)}
    )
    assert merging == Progress(phase=JobPhase.MERGING)  # no percentages, no leftovers
    assert Progress.of(JobPhase.DEAD_LETTERING, tier=3, shards=None, finished_ranges=None)
    assert Progress(phase=None).describe() == "-"  # a job recorded before phases


def test_a_job_prints_its_progress_instead_of_its_raw_phase_and_shard_set() -> None:
    job = Job(
        job_id="j",
        status=JobStatus.RUNNING,
        run=1,
        source=SourceObject(bucket="b", key="k"),
        phase=JobPhase.PARSING_SHARDS,
        shards=3,
        shards_done=frozenset({PageSpan.parse("1-50"), PageSpan.parse("101-120")}),
    )
    printed = job.to_dict()
    assert "phase" not in printed and "shards_done" not in printed
    assert printed["progress"] == {
        "phase": "parsing_shards",
        "tier": None,
        "shards": 3,
        "shards_done": 2,
        "pages_done": 70,
    }
    assert "shards_done" not in job.to_item()  # only ever added to, never written whole
