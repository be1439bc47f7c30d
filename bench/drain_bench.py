"""Item 14, the backlog's drain estimate against the drain: small documents dropped at
once into the strict embedded stack with ``MaxRunningJobs=2``, then all of them
reprocessed (their parse answered from the artifact cache: shorter runs than the first
pass, whose first run also paid the parse worker's start).

While each backlog drains, every few runs that end, ``richdoc jobs backlog``'s estimate
(``richdoc_tools.ops.drain``: the median slot cycle of the last hour's run records) and
the estimate it replaced (the mean time the last 50 jobs SUCCEEDED now held their slot,
without the gaps between a release and the next admission) are taken at the same
moment, from the same records. Once everything has run, each is set against the drain
that followed: from that moment to the admission of the last job then waiting, read
from the jobs' own queued and admitted times. The ratio is estimate / drain (1: exact);
its error is the larger of the ratio and its inverse.

    python -m bench.drain_bench [--quick]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/drain_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ItemResult, Mode, Table, Target, fmt

CAPACITY = 2
EVERY = 3  # runs that end between two estimates
ERROR_TARGET = 1.5  # the median error of the slot-cycle estimate
PREVIOUS_RUNS = 50  # the estimate it replaced: the last 50 successes


@dataclass(frozen=True)
class Estimate:
    at: datetime
    waiting: int
    cycles_s: float | None  # richdoc jobs backlog's drain_s
    previous_s: float | None  # the mean of the last 50 successes' holds, without gaps


def _note(n: int) -> bytes:
    return f"# Note {n}\n\nA short note about item {n}.\n".encode()


def _previous_estimate(operator: Any, waiting: int) -> float | None:
    """The estimate ``jobs backlog`` made before: waiting x the mean admitted-to-ended
    time of the last 50 jobs SUCCEEDED now, over the capacity."""
    from richdoc.jobs import JobFilter, JobStatus

    recent = operator.jobs.page(JobFilter(statuses=(JobStatus.SUCCEEDED,)), limit=PREVIOUS_RUNS)
    holds = [
        (datetime.fromisoformat(j.ended_at) - datetime.fromisoformat(j.admitted_at)).total_seconds()
        for j in recent.jobs
        if j.admitted_at and j.ended_at
    ]
    return round(waiting * statistics.fmean(holds) / CAPACITY, 1) if holds else None


def _drain(stack: Any, operator: Any, job_ids: list[str]) -> list[Estimate]:
    """Wait for the jobs, estimating every ``EVERY`` runs that end while some wait."""
    from richdoc_tools.ops.backlog import outlook

    estimates: list[Estimate] = []
    ended = 0

    def on_progress(_: Any) -> None:
        nonlocal ended
        ended += 1
        if ended % EVERY:
            return
        now = datetime.now(UTC)
        seen = outlook(operator, now=now)
        if seen.waiting and seen.drain is not None:
            previous = _previous_estimate(operator, seen.waiting)
            estimates.append(Estimate(now, seen.waiting, seen.drain.drain_s, previous))

    jobs = stack.wait_for_jobs(job_ids, 6 * 3600, on_progress=on_progress)
    assert all(job is not None and job.status.terminal for job in jobs.values())
    return estimates


def _actual_s(estimate: Estimate, runs: list[tuple[datetime, datetime]]) -> float | None:
    """From the estimate to the admission of the last job waiting then ((queued,
    admitted) of each run of the phase)."""
    waiting = [admitted for queued, admitted in runs if queued <= estimate.at < admitted]
    return (max(waiting) - estimate.at).total_seconds() if waiting else None


def _runs(stack: Any, job_ids: list[str]) -> list[tuple[datetime, datetime]]:
    found = stack.jobs.get_many(job_ids)
    return [
        (datetime.fromisoformat(j.queued_at), datetime.fromisoformat(j.admitted_at))
        for j in found.values()
        if j.queued_at and j.admitted_at
    ]


def _phases(mode: Mode, work: Path) -> dict[str, list[tuple[Estimate, float]]]:
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.ops.operator import Operator
    from richdoc_tools.ops.reprocess import ReprocessCursor, ReprocessFilter, reprocess

    count = 40 if mode is Mode.FULL else 16
    phases: dict[str, list[tuple[Estimate, float]]] = {}
    with EmbeddedStack(
        parameters={"MaxRunningJobs": str(CAPACITY)},
        log_path=work / "drain.log",
        schedules=False,
    ) as stack:
        operator = Operator.connect(stack.stack_name)
        job_ids = [
            stack.upload(Path(f"n/{n:03d}.md"), key=f"n/{n:03d}.md", body=_note(n)).job_id
            for n in range(count)
        ]
        first = _drain(stack, operator, job_ids)
        phases["uploads"] = _paired(first, _runs(stack, job_ids))
        cursor = ReprocessCursor(
            wanted=ReprocessFilter(prefix="n/"), dry_run=False, began=operator.jobs.clock()
        )
        queued = [result for result, _ in reprocess(operator, cursor)]
        assert len(queued) == count, queued
        again = _drain(stack, operator, job_ids)
        phases["reprocess"] = _paired(again, _runs(stack, job_ids))
    return phases


def _paired(estimates: list[Estimate], runs: list[tuple[datetime, datetime]]) -> list[Any]:
    return [(e, actual) for e in estimates if (actual := _actual_s(e, runs))]


def _error(estimate: float | None, actual: float) -> float | None:
    if not estimate:
        return None
    ratio = estimate / actual
    return max(ratio, 1 / ratio)


def run(mode: Mode) -> ItemResult:
    result = ItemResult("drain", "14. The backlog's drain estimate against the drain")
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-drain-") as tmp:
        phases = _phases(mode, Path(tmp))

    rows, summary = [], {}
    for phase, pairs in phases.items():
        ratios: dict[str, list[float]] = {"cycles": [], "previous": []}
        for estimate, actual in pairs:
            for name, value in (("cycles", estimate.cycles_s), ("previous", estimate.previous_s)):
                if value:
                    ratios[name].append(value / actual)
            rows.append(
                [
                    phase,
                    estimate.waiting,
                    fmt(actual),
                    fmt(estimate.cycles_s),
                    fmt(estimate.previous_s),
                ]
            )
        summary[phase] = {
            name: {
                "samples": len(values),
                "median_ratio": round(statistics.median(values), 3) if values else None,
                "min_ratio": round(min(values), 3) if values else None,
                "max_ratio": round(max(values), 3) if values else None,
                "median_error": (
                    round(statistics.median(max(r, 1 / r) for r in values), 3) if values else None
                ),
            }
            for name, values in ratios.items()
        }
    errors = [
        error
        for pairs in phases.values()
        for estimate, actual in pairs
        if (error := _error(estimate.cycles_s, actual)) is not None
    ]
    previous = [
        error
        for pairs in phases.values()
        for estimate, actual in pairs
        if (error := _error(estimate.previous_s, actual)) is not None
    ]
    result.targets.append(
        Target(
            "14a",
            "drain estimate's median error (larger of estimate/drain and its inverse)",
            round(statistics.median(errors), 3) if errors else float("inf"),
            ERROR_TARGET,
            "x",
            f"{len(errors)} estimates while uploads and then a reprocess drained, {CAPACITY} slots",
        )
    )
    result.measurements = {
        "capacity": CAPACITY,
        "phases": summary,
        "previous_median_error": round(statistics.median(previous), 3) if previous else None,
    }
    result.tables.append(
        Table(
            "Estimates against the drain that followed",
            ["phase", "waiting", "drain s", "slot cycles s", "previous s"],
            rows,
        )
    )
    return result


if __name__ == "__main__":
    sys.exit(run(Mode.QUICK if "--quick" in sys.argv else Mode.FULL).print_and_exit_code())
