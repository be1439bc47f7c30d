"""Item 4, cold start: a fresh interpreter importing a handler against one importing
only ``docling_core.types.doc``.

Each variant is a new ``python`` process, as a Lambda cold start is a new runtime process:

* ``docling_core``: ``python -c "import docling_core.types.doc"`` (the reference);
* ``project`` / ``detect``: ``python -c "import app"`` in ``functions/<name>/`` with the
  layer on ``PYTHONPATH`` and the environment the template gives the function at import,
  which is how the Lambda runtime imports ``app.handler``;
* ``bare``: ``python -c pass``, the interpreter alone (for context).

Each child leaves with ``os._exit`` after its import: an Init ends waiting for requests,
not in the interpreter's teardown. Every variant runs once per round, order alternating
(the suite's earlier items have already brought these files into the page cache; medians
absorb a cold first round). Each child's CPU time (user + system) comes from ``wait4``;
the ratio is the median of the per-round ratios, on CPU time (wall time is reported too).
Target: at most 1.3x. An ``-X importtime`` run of each handler attributes what it imports
beyond the reference, by top-level package.

    python -m bench.coldstart_bench [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python bench/coldstart_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import LAYER, ROOT, ItemResult, Mode, Sample, Table, Target

TARGET = 1.3
HANDLERS = ("project", "detect")
# What template.yaml gives every function (Globals), plus what the Lambda runtime sets
# that changes behaviour at import (Powertools enables its X-Ray tracer in Lambda).
FUNCTION_ENV = {
    "AWS_LAMBDA_FUNCTION_NAME": "richdoc-bench",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1769",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
    # Always set by the runtime; the X-Ray SDK keys its Lambda mode on it (without it the
    # SDK builds its centralized sampler at import, two X-Ray clients, which Lambda never
    # pays).
    "LAMBDA_TASK_ROOT": "/var/task",
    "LAMBDA_RUNTIME_DIR": "/var/runtime",
    "JOBS_TABLE": "richdoc-jobs",
    "ARTIFACT_BUCKET": "richdoc-artifacts",
    "POWERTOOLS_METRICS_NAMESPACE": "richdoc",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@dataclass(frozen=True)
class Variant:
    name: str
    code: str
    cwd: Path


def variants() -> list[Variant]:
    return [
        Variant("bare", "pass", ROOT),
        Variant("docling_core", "import docling_core.types.doc", ROOT),
        *(Variant(name, "import app", ROOT / "functions" / name) for name in HANDLERS),
    ]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    return {**env, **FUNCTION_ENV, "PYTHONPATH": str(LAYER)}


# A Lambda Init ends with the runtime waiting for requests, not with the interpreter's exit
# (module teardown and a last full collection): every child leaves without it.
_NO_TEARDOWN = "import os; os._exit(0)"


def spawn(variant: Variant, *flags: str) -> tuple[Sample, float, str]:
    """Run one fresh interpreter: (wall and CPU time, peak RSS in MB, stderr)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *flags, "-c", f"{variant.code}\n{_NO_TEARDOWN}"],
        cwd=variant.cwd,
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{variant.name}: exit {proc.returncode}: {stderr[-2000:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime), usage.ru_maxrss / 1024, stderr


_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_self_times(stderr: str) -> dict[str, int]:
    """Module -> its own import time in microseconds, from ``-X importtime`` output."""
    times = {}
    for line in stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            times[match.group(4)] = int(match.group(1))
    return times


def extra_imports(handler: dict[str, int], reference: dict[str, int]) -> dict[str, float]:
    """Self time (ms) of the modules only the handler imports, by top-level package."""
    by_package: dict[str, float] = defaultdict(float)
    for module, micros in handler.items():
        if module not in reference:
            by_package[module.split(".")[0]] += micros / 1000
    return dict(sorted(by_package.items(), key=lambda kv: -kv[1]))


def run(mode: Mode, rounds: int | None = None) -> ItemResult:
    count = rounds or (5 if mode is Mode.FULL else 2)
    all_variants = variants()
    samples: dict[str, list[Sample]] = {v.name: [] for v in all_variants}
    rss: dict[str, list[float]] = {v.name: [] for v in all_variants}
    for round_ in range(count):
        for variant in all_variants if round_ % 2 == 0 else list(reversed(all_variants)):
            sample, peak, _ = spawn(variant)
            samples[variant.name].append(sample)
            rss[variant.name].append(peak)

    profiles = {
        v.name: import_self_times(spawn(v, "-X", "importtime")[2])
        for v in all_variants
        if v.name != "bare"
    }
    result = ItemResult("coldstart", "4. Cold start of the project and detect handlers")
    reference = samples["docling_core"]
    ratios: dict[str, dict[str, float]] = {}
    for name in HANDLERS:
        pairs = list(zip(samples[name], reference, strict=True))
        ratios[name] = {
            "cpu": round(statistics.median(h.cpu / r.cpu for h, r in pairs), 3),
            "wall": round(statistics.median(h.wall / r.wall for h, r in pairs), 3),
        }
        result.targets.append(
            Target(
                f"coldstart[{name}]",
                f"fresh interpreter importing functions/{name}/app.py / importing "
                "docling_core.types.doc",
                ratios[name]["cpu"],
                TARGET,
                "x",
                "CPU time of the child process (wait4), median of per-round ratios",
            )
        )
    medians = {
        name: {
            "cpu": round(statistics.median(s.cpu for s in values), 3),
            "wall": round(statistics.median(s.wall for s in values), 3),
            "peak_rss_mb": round(statistics.median(rss[name]), 1),
        }
        for name, values in samples.items()
    }
    extras = {
        name: {
            k: round(v, 1)
            for k, v in list(extra_imports(profiles[name], profiles["docling_core"]).items())[:8]
        }
        for name in HANDLERS
    }
    result.measurements = {
        "rounds": count,
        "median_s": medians,
        "ratios": ratios,
        "imports_beyond_docling_core_ms": extras,
    }
    result.tables.append(
        Table(
            "Fresh interpreter (medians)",
            [
                "variant",
                "CPU s",
                "wall s",
                "peak RSS MB",
                "CPU ratio to docling_core",
                "wall ratio",
            ],
            [
                [
                    name,
                    m["cpu"],
                    m["wall"],
                    m["peak_rss_mb"],
                    ratios.get(name, {}).get("cpu", "-"),
                    ratios.get(name, {}).get("wall", "-"),
                ]
                for name, m in medians.items()
            ],
        )
    )
    result.tables.append(
        Table(
            "What the handlers import beyond docling_core (-X importtime self time, ms)",
            ["handler", "top packages"],
            [
                [name, ", ".join(f"{pkg} {ms:.0f}" for pkg, ms in extras[name].items())]
                for name in HANDLERS
            ],
        )
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    return run(Mode.QUICK if args.quick else Mode.FULL, args.rounds).print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
