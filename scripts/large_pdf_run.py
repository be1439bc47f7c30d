"""A documented run of one long generated PDF through the embedded stack (docs/shards.md).

    .venv/bin/python scripts/large_pdf_run.py --pages 2000 [--shard-pages 50] [--runs-json F]

Generates the PDF (tests/support/parse_inputs.long_pdf), runs it through ``richdoc.run.run_files``
on the embedded stack with ``RICHDOC_SHARD_PAGES`` set as given (0: whole), and prints
what the design's budgets are about: the job's wall time and status, the time of each
step from the attempt records, the shard count and each shard's tier, the execution's
history events and state transitions, its largest state payload, the peak resident
memory of this process (moto and the in-process handlers: merge, project and detect
among them), and the peak of one parse child converting the first shard (or the whole
document) again through the same worker.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "layers" / "docling"), str(ROOT / "tools")]


def measure(pages: int, shard_pages: int) -> dict[str, Any]:
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import run_files

    from bench.shards_bench import _history, _largest_payload
    from tests.support.parse_inputs import long_pdf

    with tempfile.TemporaryDirectory(prefix="richdoc-large-") as tmp:
        pdf = long_pdf(Path(tmp) / f"long-{pages}.pdf", pages=pages, seed=7)
        with EmbeddedStack(StackSettings(log_path=Path(tmp) / "functions.log")) as stack:
            os.environ["RICHDOC_SHARD_PAGES"] = str(shard_pages)
            started = time.perf_counter()
            [result] = run_files(stack, [pdf], clarify=True, timeout_s=3600)
            wall = time.perf_counter() - started
            job = stack.jobs.get(result.job_id)
            assert job is not None and job.execution_arn is not None
            events = _history(stack, job.execution_arn)
            attempts = stack.jobs.attempts.of_job(result.job_id)
            steps: dict[str, float] = {}
            tiers: dict[int, int] = {}
            for attempt in attempts:
                seconds = (attempt.duration_ms or 0) / 1000
                if attempt.stage == "parse" and attempt.pages:
                    steps["shard_max"] = max(steps.get("shard_max", 0.0), seconds)
                    steps["shard_sum"] = steps.get("shard_sum", 0.0) + seconds
                    if attempt.outcome == "ok" and attempt.tier is not None:
                        tiers[attempt.tier] = tiers.get(attempt.tier, 0) + 1
                else:
                    steps[attempt.stage] = steps.get(attempt.stage, 0.0) + seconds
            return {
                "pages": pages,
                "shard_pages": shard_pages,
                "status": result.status,
                "shards": result.shards,
                "shards_by_tier": tiers,
                "job_seconds": result.seconds,
                "wall_s": round(wall, 1),
                "steps_s": {k: round(v, 2) for k, v in steps.items()},
                "counts": result.counts.model_dump(),
                "history_events": len(events),
                "state_transitions": sum(1 for e in events if e["type"].endswith("StateEntered")),
                "largest_state_payload_bytes": _largest_payload(events),
                "peak_rss_mb": {
                    "this_process": round(
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                    ),
                    "parse_child": _parse_child_peak(pdf, shard_pages, pages, Path(tmp)),
                },
            }


def _parse_child_peak(pdf: Path, shard_pages: int, pages: int, work: Path) -> float | None:
    """The parse child's peak RSS for the first shard of the plan (or the whole PDF)."""
    from richdoc.formats import DocFormat
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.shard_plan import plan_shards
    from richdoc.parse.step import parse_file, shared_worker

    plan = plan_shards(DocFormat.PDF, pages, shard_pages)
    first = plan.ranges[0] if plan.ranges else None
    limits = ParseLimits.resolve(memory_tier_mb=3008)  # tier 1's ceiling
    report = parse_file(pdf, work / "again.json", limits, worker=shared_worker(), pages=first)
    return report.peak_rss_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--shard-pages", type=int, default=50)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.pages, args.shard_pages), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
