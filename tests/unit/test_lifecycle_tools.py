"""The pure parts of the operators' lifecycle tools: the tier ladder report, the watch's
adaptive interval, the redrive's pacing, the exit code of a watched job and the option
types of the new commands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click
import pytest
from richdoc_tools.cli.errors import EXIT_CANCELLED, outcome_code
from richdoc_tools.cli.options import Rate, Since
from richdoc_tools.ops.redrive import Pacer
from richdoc_tools.ops.tiers import tier_report
from richdoc_tools.ops.watch import MAX_INTERVAL_S, MIN_INTERVAL_S, next_interval

from richdoc.contracts import SourceObject
from richdoc.jobs import Attempt, Job, JobStatus
from richdoc.taxonomy import Failure, FailureKind

NOW = "2026-01-01T00:00:00.000+00:00"


def _job(job_id: str, status: JobStatus, *, page_count: int | None = None, size: int = 0) -> Job:
    return Job(
        job_id=job_id,
        status=status,
        run=1,
        source=SourceObject(bucket="b", key=job_id, size=size),
        page_count=page_count,
    )


def _parse(job_id: str, seq: int, tier: int, outcome: str, **memory: int) -> Attempt:
    return Attempt(
        job_id=job_id,
        run=1,
        seq=seq,
        stage="parse",
        attempt=seq,
        outcome=outcome,
        started_at=NOW,
        tier=tier,
        **memory,  # type: ignore[arg-type]
    )


def test_the_tier_report_puts_each_document_at_the_tier_that_finally_parsed_it() -> None:
    mb = 1 << 20
    small = _job("small", JobStatus.SUCCEEDED, page_count=4, size=2 * mb)
    big = _job("big", JobStatus.SUCCEEDED, page_count=400, size=90 * mb)
    hopeless = _job("hopeless", JobStatus.DEAD_LETTERED)
    report = tier_report(
        [
            (small, [_parse("small", 1, 1, "ok", mem_ceiling_mb=2346, peak_rss_mb=700)]),
            (
                big,
                [
                    _parse("big", 1, 1, "ResourceLimit", mem_ceiling_mb=2346, peak_rss_mb=2400),
                    _parse("big", 2, 2, "ok", mem_ceiling_mb=5325, peak_rss_mb=3100),
                ],
            ),
            (
                hopeless,
                [
                    _parse("hopeless", 1, 1, "Sandbox.Timedout"),
                    _parse("hopeless", 2, 2, "Runtime.OutOfMemory"),
                    _parse("hopeless", 3, 3, "ResourceLimit", mem_ceiling_mb=9216),
                ],
            ),
        ]
    )
    assert (report.jobs, report.succeeded) == (3, 2)
    one, two, three = report.tiers
    assert (one.tier, one.succeeded, one.attempts, one.resource_limits) == (1, 1, 3, 2)
    assert one.escalation_rate == pytest.approx(2 / 3, abs=1e-4)
    assert (one.pages and one.pages.max, one.size_mb and one.size_mb.max) == (4, 2.0)
    assert one.peak_rss_mb is not None and (one.peak_rss_mb.min, one.peak_rss_mb.max) == (700, 2400)
    assert one.mem_ceiling_mb == [2346]
    assert (two.succeeded, two.attempts, two.resource_limits) == (1, 2, 1)
    assert two.pages is not None and two.pages.median == 400
    assert (three.succeeded, three.attempts, three.escalation_rate) == (0, 1, 1.0)
    assert three.pages is None and three.mem_ceiling_mb == [9216]


def test_a_sharded_document_finished_at_its_most_demanding_shards_tier() -> None:
    doc = _job("doc", JobStatus.SUCCEEDED, page_count=150)
    report = tier_report(
        [
            (
                doc,
                [
                    _parse("doc", 1, 1, "ok"),
                    _parse("doc", 2, 1, "ResourceLimit"),
                    _parse("doc", 3, 2, "ok"),
                ],
            )
        ]
    )
    assert [(row.tier, row.succeeded) for row in report.tiers] == [(1, 0), (2, 1)]


def test_the_watch_reads_often_after_a_change_and_backs_off_while_nothing_changes() -> None:
    interval, seen = MIN_INTERVAL_S, []
    for _ in range(12):
        interval = next_interval(interval, changed=False)
        seen.append(interval)
    assert seen == sorted(seen) and seen[-1] == MAX_INTERVAL_S
    assert next_interval(MAX_INTERVAL_S, changed=True) == MIN_INTERVAL_S


def test_the_pacer_sends_at_most_the_rate() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        pacer.wait()
    assert now[0] == pytest.approx(101.0)  # the fifth send 4 intervals after the first
    assert slept == pytest.approx([0.25] * 4)


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (JobStatus.SUCCEEDED, None, 0),
        (JobStatus.CANCELLED, None, EXIT_CANCELLED),
        (JobStatus.DEAD_LETTERED, FailureKind.CORRUPT_INPUT, 10),
        (JobStatus.DEAD_LETTERED, FailureKind.UNSUPPORTED_FEATURE, 20),
        (JobStatus.DEAD_LETTERED, FailureKind.RESOURCE_LIMIT, 30),
        (JobStatus.DEAD_LETTERED, FailureKind.TRANSIENT, 75),
        (JobStatus.DEAD_LETTERED, FailureKind.INTERNAL, 70),
    ],
)
def test_a_watched_job_exits_with_its_outcome(
    status: JobStatus, kind: FailureKind | None, code: int
) -> None:
    failure = (
        Failure(kind, "why", feature="ocr" if kind is FailureKind.UNSUPPORTED_FEATURE else None)
        if kind
        else None
    )
    job = _job("j", status).model_copy(update={"failure": failure})
    assert outcome_code(job) == code


def test_since_takes_a_time_or_a_duration_ago() -> None:
    since = Since()
    assert since.convert("2026-03-01", None, None) == datetime(2026, 3, 1, tzinfo=UTC)
    assert since.convert("2026-03-01T12:00:00+02:00", None, None) == datetime(
        2026, 3, 1, 10, tzinfo=UTC
    )
    ago = datetime.now(UTC) - since.convert("24h", None, None)
    assert timedelta(hours=23, minutes=59) < ago < timedelta(hours=24, minutes=1)
    with pytest.raises(click.BadParameter):
        since.convert("yesterday", None, None)


def test_rate_takes_sends_a_second_or_a_minute() -> None:
    rate = Rate()
    assert rate.convert("10/s", None, None) == 10.0
    assert rate.convert("5", None, None) == 5.0
    assert rate.convert("60/m", None, None) == 1.0
    for bad in ("0", "-1/s", "fast", "3/h", "nan"):
        with pytest.raises(click.BadParameter):
            rate.convert(bad, None, None)
