"""Item 5's ablation: each speed patch of moto's share of a ``richdoc run``.

A speed patch (``richdoc_tools.local.moto_fixes.speed``) is kept only while it saves at
least ``KEEP_SHARE`` (5 %) of bench item 5's measured run, or keeps a documented bench
within its target (docs/benchmarks.md, item 5). This item measures the first: the run of
item 5 (``richdoc run`` on 50 small documents through the embedded stack, every strict
rule on, after a warm-up of one document per format) with the full set of speed patches,
and with each one removed, side by side, then with every patch below the share removed at
once, side by side with the full set again.

Every variant runs in a fresh interpreter (``--variant``: the patches are installed as
the stack starts, and a removed patch's caches must not linger), one run of each variant
a round, the order reversed every other round, so that load from other processes lands
on every variant alike. A patch's share is the median over the rounds of (run without
it / run with every patch in the same round) - 1, in CPU time (this process plus the
parse worker's: all of the run's work) and in wall time. The CPU share decides: on the
shared two-core machine, at load averages of 10 and more, the wall time of the same code
varies by half from one run to the next, its CPU time by a few percent. It is an on-demand
item (``python -m bench --only speed_patches``): a full run
takes about an hour on the development machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/speed_patches_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import LAYER, ROOT, TOOLS, ItemResult, Mode, Table, Target

# A patch that saves less than this share of the run is removed.
KEEP_SHARE = 0.05
EVERY_PATCH = "every patch"
# One variant's run, in its own interpreter; a stack that hangs is stopped.
VARIANT_TIMEOUT_S = 900


def speed_patch_names() -> list[str]:
    from richdoc_tools.local.moto_fixes import speed

    return [patch.__name__.rpartition(".")[2] for patch in speed.PATCHES]


def run_variant(without: str | None, documents: int) -> dict[str, float | int | str]:
    """One variant, in this interpreter: a strict stack with every speed patch but those
    ``without`` names (comma-separated), warmed up, then ``richdoc run`` of ``documents``
    documents, timed."""
    from unittest import mock

    from richdoc_tools.local.moto_fixes import speed
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import run_files

    from bench.documents import FORMATS, write_documents
    from bench.e2e_bench import Clock
    from richdoc.parse.step import shared_worker

    removed = set(without.split(",")) if without else set()
    kept = tuple(p for p in speed.PATCHES if p.__name__.rpartition(".")[2] not in removed)
    assert len(kept) == len(speed.PATCHES) - len(removed), f"not speed patches: {without}"
    clock = Clock()
    with (
        tempfile.TemporaryDirectory(prefix="richdoc-bench-speed-") as tmp,
        mock.patch.object(speed, "PATCHES", kept),
    ):
        work = Path(tmp)
        measured = write_documents(work / "measured", documents, seed=1)
        warm = write_documents(work / "warm", len(FORMATS), seed=2)
        with EmbeddedStack(StackSettings(log_path=work / "functions.log")) as stack:
            run_files(stack, warm, clarify=True)
            clock.attach(shared_worker().server.zygote_pid)
            t0 = clock.now()
            results = run_files(stack, measured, clarify=True)
            t1 = clock.now()
    succeeded = sum(r.status == "SUCCEEDED" for r in results)
    return {"wall_s": t1[0] - t0[0], "cpu_s": t1[1] - t0[1], "succeeded": succeeded}


def _run_child(without: str | None, documents: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(LAYER), str(TOOLS)])}
    command = [sys.executable, "-m", "bench.speed_patches_bench", "--documents", str(documents)]
    if without is not None:
        command += ["--variant", without]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        check=True,
        timeout=VARIANT_TIMEOUT_S,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _interleaved(
    variants: list[str | None], documents: int, rounds: int
) -> dict[str, list[dict[str, Any]]]:
    """Each variant's runs, one a round, the order reversed every other round."""
    runs: dict[str, list[dict[str, Any]]] = {name or EVERY_PATCH: [] for name in variants}
    for round_ in range(rounds):
        for variant in variants if round_ % 2 == 0 else list(reversed(variants)):
            measured = _run_child(variant, documents)
            runs[variant or EVERY_PATCH].append(measured)
            print(
                f"[speed_patches] round {round_ + 1}/{rounds}, without "
                f"{variant or 'nothing'}: {measured['wall_s']:.1f} s wall, "
                f"{measured['cpu_s']:.1f} s CPU",
                file=sys.stderr,
                flush=True,
            )
    return runs


def _share(without: list[dict[str, Any]], every: list[dict[str, Any]]) -> dict[str, float]:
    """How much longer the run takes without: the median over the rounds of (run without /
    run with every patch in the same round) - 1."""
    pairs = list(zip(without, every, strict=True))
    return {
        "wall": round(statistics.median(r["wall_s"] / b["wall_s"] for r, b in pairs) - 1, 4),
        "cpu": round(statistics.median(r["cpu_s"] / b["cpu_s"] for r, b in pairs) - 1, 4),
    }


def _per_document(runs: list[dict[str, Any]], documents: int) -> dict[str, float]:
    return {
        "wall": round(statistics.median(r["wall_s"] for r in runs) / documents, 4),
        "cpu": round(statistics.median(r["cpu_s"] for r in runs) / documents, 4),
    }


def run(mode: Mode) -> ItemResult:
    names = speed_patch_names()
    if mode is Mode.QUICK:
        documents, rounds, removed = 4, 1, names[:1]
    else:
        documents, rounds, removed = 50, 4, names
    load_before = os.getloadavg()
    started = time.perf_counter()
    runs = _interleaved([None, *removed], documents, rounds)
    shares = {name: _share(runs[name], runs[EVERY_PATCH]) for name in removed}
    below = sorted(name for name, share in shares.items() if share["cpu"] < KEEP_SHARE)
    # Those below, all removed at once, side by side with the full set again: what
    # removing them together costs.
    together: dict[str, Any] = {}
    if below:
        combined = _interleaved([None, ",".join(below)], documents, rounds)
        together = {
            "removed": below,
            "share": _share(combined[",".join(below)], combined[EVERY_PATCH]),
            "per_document_s": {
                "every patch": _per_document(combined[EVERY_PATCH], documents),
                "without them": _per_document(combined[",".join(below)], documents),
            },
            "runs": combined,
        }
    per_document = {
        variant: _per_document(measured, documents) for variant, measured in runs.items()
    }
    every_run = [r for measured in runs.values() for r in measured]
    every_run += [r for measured in together.get("runs", {}).values() for r in measured]
    failed = sum(documents - int(r["succeeded"]) for r in every_run)

    result = ItemResult(
        "speed_patches", "5. Local end to end: each speed patch's share of the run (ablation)"
    )
    result.measurements = {
        "documents": documents,
        "rounds": rounds,
        "keep_share": KEEP_SHARE,
        "per_document_s": per_document,
        "share_of_the_run": shares,
        "below_keep_share": below,
        "below_removed_together": together,
        "runs": runs,
        "seconds": round(time.perf_counter() - started, 1),
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }
    result.targets += [
        Target(
            "speed_patches_below_share",
            f"speed patches saving less than {KEEP_SHARE:.0%} of the run (CPU, median of "
            f"{rounds} rounds)",
            len(below),
            0,
            "count",
            f"richdoc run of {documents} documents without each patch / with every patch, "
            "side by side, the order reversed each round",
        ),
        Target(
            "speed_patches_runs_failed",
            "documents that did not succeed in any variant's run",
            failed,
            0,
            "count",
            "the runs' job statuses",
        ),
    ]
    result.tables.append(
        Table(
            f"richdoc run of {documents} documents without each speed patch "
            f"(median of {rounds} rounds)",
            ["without", "wall s a document", "CPU s a document", "share (wall)", "share (CPU)"],
            [
                [
                    variant,
                    per_document[variant]["wall"],
                    per_document[variant]["cpu"],
                    f"{shares[variant]['wall']:+.1%}" if variant in shares else "-",
                    f"{shares[variant]['cpu']:+.1%}" if variant in shares else "-",
                ]
                for variant in runs
            ],
        )
    )
    if together:
        result.notes.append(
            f"Without every patch below {KEEP_SHARE:.0%} at once ({', '.join(below)}): "
            f"{together['share']['wall']:+.1%} wall, {together['share']['cpu']:+.1%} CPU "
            f"(median of {rounds} rounds side by side with the full set)."
        )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--variant", default=None, help="run one variant: without these patches (a,b,...)"
    )
    parser.add_argument("--documents", type=int, default=None, help="with --variant")
    parser.add_argument(
        "--together",
        default=None,
        help="only compare the full set with these patches removed at once (a,b,...)",
    )
    parser.add_argument("--rounds", type=int, default=4, help="with --together")
    args = parser.parse_args(argv)
    if args.documents is not None:
        print(json.dumps(run_variant(args.variant, args.documents)))
        return 0
    if args.together is not None:
        runs = _interleaved([None, args.together], 50, args.rounds)
        shared = _share(runs[args.together], runs[EVERY_PATCH])
        print(json.dumps({"removed": args.together.split(","), "share": shared, "runs": runs}))
        return 0
    return run(Mode.QUICK if args.quick else Mode.FULL).print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
