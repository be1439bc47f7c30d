"""Item 6, scaling: projection and detection time and peak memory at 1x, 10x and 100x.

Inputs are generated deterministically by this process and written to files:

* projection: ``build_large_document`` with 100 paragraphs and 2 tables at 1x (about
  0.15 MB of DoclingDocument JSON), 1,000 + 20 at 10x, 10,000 + 200 at 100x (item 1
  already times 2,000 + 50 and 20,000 + 500);
* detection: the ``dense`` scenario of ``bench.detection_bench`` (the worst case: a date
  in about every third sentence) at 0.1 MB, 1 MB and 10 MB of canonical text.

Each size is measured in a fresh interpreter (``--worker``), so that its peak RSS is its
own: the worker reads the input bytes, notes its resident set, runs the handler's work
(projection: load, project, serialize; detection: load the projection JSON, detect,
serialize), and reports the CPU time of the stage alone (``project()``, ``detect()``),
of the load alone (pydantic's ``model_validate_json``, the same for any consumer of the
file) and of the whole step, and the peak RSS above what it held before the step. The
time target judges the stage, the code this project owns; the whole step and the load
are reported beside it, so a superlinear load shows as such. Times are the fastest of several
repetitions: neighbours on a shared machine only ever add time (even CPU time, through
the shared core), so the minimum is the steadiest estimate of the work itself.

Growth between two sizes a factor ``f`` apart is the exponent ``b`` of
``cost ~ size**b``; the target is linear growth, taken as ``b <= 1.15`` between the two
largest sizes (10x the input for at most about 14x the cost). The smallest size is
reported but not judged: fixed costs dominate it.

    python -m bench.scaling_bench [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/scaling_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import (
    LAYER,
    ROOT,
    ItemResult,
    Mode,
    Table,
    Target,
    current_rss_mb,
    growth_exponent,
    peak_rss_mb,
    reset_peak_rss,
    timed,
)

LINEAR = 1.15
STAGE_CALLS = {"projection": "project()", "detection": "detect()"}
FACTORS_FULL = (1, 10, 100)
FACTORS_QUICK = (1, 10)


@dataclass(frozen=True)
class Point:
    stage: str
    factor: int
    input_bytes: int
    stage_cpu_s: float
    load_cpu_s: float
    step_cpu_s: float
    peak_delta_mb: float

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


# ---- the worker: one size, in its own interpreter -----------------------------------------


def _work(stage: str, path: Path, reps: int) -> dict[str, float]:
    from richdoc.detection import detect
    from richdoc.graph import Projection
    from richdoc.projection import load_docling, project
    from richdoc_client.projection import ProjectionSource

    data = path.read_bytes()
    before = current_rss_mb()
    reset_peak_rss()
    source = ProjectionSource(name=path.name)
    if stage == "projection":

        def load() -> Any:
            return load_docling(data)

        def work(loaded: Any) -> Any:
            return project(loaded, source)

    else:

        def load() -> Any:
            return Projection.model_validate_json(data)

        def work(loaded: Any) -> Any:
            return detect(loaded, clarify=True)

    steps = [timed(lambda: work(load()).to_json_bytes(), collect=True).cpu for _ in range(reps)]
    # The peak is the step's: the loads and the stage alone below hold no more than it did.
    peak_delta = peak_rss_mb() - before
    loads = [timed(load, collect=True).cpu for _ in range(reps)]
    loaded = load()
    alones = [timed(lambda: work(loaded), collect=True).cpu for _ in range(reps)]
    return {
        "step_cpu_s": round(min(steps), 4),
        "load_cpu_s": round(min(loads), 4),
        "stage_cpu_s": round(min(alones), 4),
        "peak_delta_mb": round(peak_delta, 1),
    }


# ---- the driver ---------------------------------------------------------------------------


def _inputs(work: Path, mode: Mode) -> list[tuple[str, int, Path]]:
    from bench.detection_bench import build_projection
    from tests.support.gen_fixtures import build_large_document

    factors = FACTORS_FULL if mode is Mode.FULL else FACTORS_QUICK
    base_paragraphs, base_tables = (100, 2) if mode is Mode.FULL else (50, 1)
    base_bytes = 100_000 if mode is Mode.FULL else 50_000
    files = []
    for k in factors:
        doc = build_large_document(base_paragraphs * k, base_tables * k)
        path = work / f"projection-{k}x.docling.json"
        path.write_bytes(doc.model_dump_json().encode())
        files.append(("projection", k, path))
    for k in factors:
        path = work / f"detection-{k}x.projection.json"
        path.write_bytes(build_projection("dense", base_bytes * k, seed=61).to_json_bytes())
        files.append(("detection", k, path))
    return files


def _reps(factor: int) -> int:
    return {1: 9, 10: 7}.get(factor, 5)


def _spawn(stage: str, path: Path, reps: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(LAYER)])}
    out = subprocess.run(
        [sys.executable, "-m", "bench.scaling_bench", "--worker", stage, str(path), str(reps)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, float] = json.loads(out.stdout)
    return measured


def run(mode: Mode) -> ItemResult:
    result = ItemResult("scaling", "6. Scaling of projection and detection")
    points: list[Point] = []
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-scaling-") as tmp:
        for stage, k, path in _inputs(Path(tmp), mode):
            measured = _spawn(stage, path, _reps(k))
            points.append(Point(stage, k, path.stat().st_size, **measured))
    result.measurements["points"] = [p.to_dict() for p in points]
    growth: dict[str, dict[str, float]] = {}
    for stage in ("projection", "detection"):
        series = [p for p in points if p.stage == stage]
        pairs = list(itertools.pairwise(series))
        growth[stage] = {}
        for small, large in pairs:
            f = large.factor // small.factor
            span = f"{small.factor}x->{large.factor}x"
            growth[stage][f"time {span}"] = growth_exponent(small.stage_cpu_s, large.stage_cpu_s, f)
            growth[stage][f"whole step time {span}"] = growth_exponent(
                small.step_cpu_s, large.step_cpu_s, f
            )
            growth[stage][f"load alone time {span}"] = growth_exponent(
                small.load_cpu_s, large.load_cpu_s, f
            )
            growth[stage][f"memory {span}"] = growth_exponent(
                max(small.peak_delta_mb, 0.1), max(large.peak_delta_mb, 0.1), f
            )
        small, large = series[-2], series[-1]
        span = f"{small.factor}x->{large.factor}x"
        for what, key in (("time", "time"), ("peak memory", "memory")):
            result.targets.append(
                Target(
                    f"growth[{stage} {what}]",
                    f"{stage}: growth exponent of {what}, {span} (1 = linear)",
                    growth[stage][f"{key} {span}"],
                    LINEAR,
                    "exponent",
                    f"CPU time of {STAGE_CALLS[stage]} alone, fastest repetition"
                    if key == "time"
                    else "peak RSS above the pre-step resident set, fresh interpreter per size",
                )
            )
    result.measurements["growth_exponents"] = growth
    result.tables.append(
        Table(
            "Per size (fresh interpreter each)",
            [
                "stage",
                "size",
                "input MB",
                "stage CPU s",
                "load alone CPU s",
                "whole step CPU s",
                "peak RSS +MB",
                "step CPU s per MB",
            ],
            [
                [
                    p.stage,
                    f"{p.factor}x",
                    round(p.input_bytes / 1e6, 2),
                    p.stage_cpu_s,
                    p.load_cpu_s,
                    p.step_cpu_s,
                    p.peak_delta_mb,
                    round(p.step_cpu_s / (p.input_bytes / 1e6), 3),
                ]
                for p in points
            ],
        )
    )
    result.tables.append(
        Table(
            "Growth exponents (cost ~ size^b; 1 = linear)",
            ["stage", "measure", "b"],
            [[stage, name, b] for stage, values in growth.items() for name, b in values.items()],
        )
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worker", nargs=3, metavar=("STAGE", "INPUT", "REPS"))
    args = parser.parse_args(argv)
    if args.worker:
        stage, path, reps = args.worker
        print(json.dumps(_work(stage, Path(path), int(reps))))
        return 0
    return run(Mode.QUICK if args.quick else Mode.FULL).print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
