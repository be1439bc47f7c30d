"""The long chaos run (``make chaos``): hundreds of documents through the strict embedded
stack with faults injected, for several seeds, each checked against one fault-free run of
the same documents (tests/support/chaos.py), and the figures written into
docs/reliability.md between its ``chaos`` markers.

    .venv/bin/python scripts/chaos.py [--documents 200] [--rate 0.05] [--seeds 7,11,23]
                                      [--no-report]

Exits 1 when any run broke a rule (a job lost, different outputs, not exactly one dead
letter per dead-lettered job, an internal failure the fault-free run did not have, a
terminal change whose completion event never reached the consumer).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "layers" / "docling"), str(ROOT / "tools")]

REPORT = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- chaos:begin -->", "<!-- chaos:end -->"


def _table(runs: list[dict[str, Any]], documents: int, rate: float) -> str:
    kinds = sorted({kind for run in runs for kind in run["injected"]})
    from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import WITHIN_A_SECOND

    lag = WITHIN_A_SECOND
    lines = [
        f"Measured by `make chaos` ({documents} documents, rate {rate:g}, "
        f"{platform.machine()} {platform.system()}, {len(runs)} seeds; the jobs table's "
        f"indexes lagging it by up to {lag.spread_s:g} s a write in the fault-free run and "
        f"{lag.under_faults(0).spread_s:g} s under faults):",
        "",
        "| seed | documents | faults injected | invocations run again | terminal | lost | "
        "ended otherwise (transient) | completion events (repeats) | events lost | "
        "rule broken | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        repeats = run["completion_events"] - (run["documents"] - run["events_lost"])
        lines.append(
            f"| {run['seed']} | {run['documents']} | {run['faults']} | "
            f"{run['retried_invocations']} | {run['terminal']} | {run['lost']} | "
            f"{run['changed']} | {run['completion_events']} ({repeats}) | "
            f"{run['events_lost']} | {len(run['violations'])} | {run['seconds']:.0f} |"
        )
    lines += ["", "Faults injected, by kind and service:", ""]
    lines += ["| fault | " + " | ".join(f"seed {run['seed']}" for run in runs) + " |"]
    lines += ["|---|" + "---|" * len(runs)]
    for kind in kinds:
        counts = " | ".join(str(run["injected"].get(kind, 0)) for run in runs)
        lines.append(f"| {kind} | {counts} |")
    statuses = sorted({s for run in runs for s in run["statuses"]})
    lines += ["", "Job statuses at the end (fault-free run first):", ""]
    lines += ["| status | fault-free | " + " | ".join(f"seed {r['seed']}" for r in runs) + " |"]
    lines += ["|---|---|" + "---|" * len(runs)]
    reference = runs[0]["reference_statuses"]
    for status in statuses:
        counts = " | ".join(str(run["statuses"].get(status, 0)) for run in runs)
        lines.append(f"| {status} | {reference.get(status, 0)} | {counts} |")
    return "\n".join(lines)


def _write_report(text: str) -> None:
    page = REPORT.read_text()
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    REPORT.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main() -> int:
    from richdoc_tools.local.faults.injected import FaultSettings

    from tests.support import chaos

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--seeds", default="7,11,23")
    parser.add_argument("--no-report", action="store_true", help="do not touch docs/")
    options = parser.parse_args()
    seeds = [int(s) for s in options.seeds.split(",")]
    documents = chaos.corpus(options.documents, seed=1)
    runs = []
    with tempfile.TemporaryDirectory(prefix="richdoc-chaos-") as tmp:
        print(f"[chaos] {len(documents)} documents, fault-free ...", file=sys.stderr, flush=True)
        with chaos.stack(Path(tmp) / "reference.log") as stack:
            reference = chaos.run(stack, documents)
        reference_statuses = chaos.summary(reference)["statuses"]
        for seed in seeds:
            print(f"[chaos] rate {options.rate:g}, seed {seed} ...", file=sys.stderr, flush=True)
            faults = FaultSettings(rate=options.rate, seed=seed)
            with chaos.stack(Path(tmp) / f"seed-{seed}.log", faults=faults) as stack:
                faulty = chaos.run(stack, documents)
            run = {
                "seed": seed,
                **chaos.summary(faulty),
                "changed": chaos.changed(reference, faulty),
                "violations": chaos.violations(reference, faulty),
                "reference_statuses": reference_statuses,
            }
            print(json.dumps(run, indent=2, sort_keys=True), flush=True)
            runs.append(run)
    if not options.no_report:
        _write_report(_table(runs, len(documents), options.rate))
    broken = [v for run in runs for v in run["violations"]]
    for violation in broken:
        print(f"[chaos] rule broken: {violation}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
