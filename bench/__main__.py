"""The richdoc benchmark suite : ``python -m bench [--quick] [--only NAME,...]``.

Runs every item in its own fresh interpreter (``bench.runner``), in order, then computes
the cost model from their results and writes ``latest.json`` and ``latest.md``:

* a full run (no ``--quick``, no ``--only``) writes to ``bench/reports/`` (the committed
  report);
* anything else writes to ``bench/reports/tmp/`` (ignored by git), unless ``--out`` says
  otherwise.

Items: projection, detection, scaling, coldstart, parse, e2e, shards, the standard
pipeline's standard_isolation, standard_shards and standard_coldstart, chunking,
strict_stack (the strict embedded stack's cost per request), admission (a burst of two
tenants at two slots, and under injected faults), admission_reprocess (a tenant's fresh
uploads beside its reprocess of 1,000 documents), admission_sweep (the sweep with 10,000
jobs waiting), ocr (OCR's accuracy and cost), drain (the backlog's drain estimate against
the drain), contracts (detection's precision and recall on real contracts, per rule set),
contracts_pdf (the same contracts as PDF and as TXT through richdoc run), structure (each
PDF pipeline's headings, tables and text against docling's references), and cost
(computed from the parse, e2e and coldstart results; with ``--only cost`` they come from
the committed report). On demand only (``--only``, not in a full run: about an hour):
speed_patches (item 5's run without each of moto's speed patches, side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import cost, report
from bench.common import LAYER, ROOT, TOOLS, Mode
from bench.runner import ITEMS

COMMITTED = ROOT / "bench" / "reports"
SCRATCH = COMMITTED / "tmp"
ALL = [*ITEMS, "cost"]
# Run only when named (--only): each takes about an hour, and may take three.
ON_DEMAND = ("speed_patches",)
ON_DEMAND_TIMEOUT_S = 3 * 3600
# An item that hangs is stopped; the longest, standard_shards at 300 pages, takes about
# 15 minutes on an idle 2-core machine.
ITEM_TIMEOUT_S = 1800


def run_item(name: str, mode: Mode, work: Path) -> dict[str, Any]:
    out = work / f"{name}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(LAYER), str(TOOLS)])}
    started = time.perf_counter()
    print(f"[bench] {name} ...", file=sys.stderr, flush=True)
    try:
        subprocess.run(
            [sys.executable, "-m", "bench.runner", name, str(mode), str(out)],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=ON_DEMAND_TIMEOUT_S if name in ON_DEMAND else ITEM_TIMEOUT_S,
            stdout=subprocess.DEVNULL,
        )
        item: dict[str, Any] = json.loads(out.read_text())
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        item = {"name": name, "title": name, "error": str(exc), "targets": [], "tables": []}
    item["seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"[bench] {name}: {time.perf_counter() - started:.0f} s, "
        + ", ".join(
            f"{t['id']}={t['measured']} ({'met' if t['met'] else 'MISSED'})"
            for t in item.get("targets", [])
        ),
        file=sys.stderr,
        flush=True,
    )
    return item


def _committed_items() -> dict[str, Any]:
    path = COMMITTED / "latest.json"
    if not path.exists():
        return {}
    items: dict[str, Any] = json.loads(path.read_text()).get("items", {})
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="small inputs, few rounds (smoke run)")
    parser.add_argument("--only", default=None, help=f"comma-separated items: {', '.join(ALL)}")
    parser.add_argument("--out", type=Path, default=None, help="report directory")
    args = parser.parse_args(argv)

    if args.only is None:
        selected = [name for name in ALL if name not in ON_DEMAND]
    else:
        selected = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in selected if s not in ALL]
    if unknown:
        parser.error(f"unknown item(s): {', '.join(unknown)}; choose from {', '.join(ALL)}")
    mode = Mode.QUICK if args.quick else Mode.FULL
    full = mode is Mode.FULL and args.only is None
    out_dir = args.out or (COMMITTED if full else SCRATCH)

    env = report.environment()
    started = time.perf_counter()
    items: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-") as tmp:
        for name in selected:
            if name != "cost":
                items[name] = run_item(name, mode, Path(tmp))
    if "cost" in selected:
        inputs = {**_committed_items(), **items}
        items["cost"] = cost.compute(
            inputs.get("parse"), inputs.get("e2e"), inputs.get("coldstart")
        ).to_dict()
        if not ({"parse", "e2e"} <= set(items)):
            items["cost"]["notes"].append(
                "inputs from the committed report for the items not run now"
            )
    seconds = time.perf_counter() - started
    built = report.build(items, env, str(mode), seconds)
    json_path, md_path = report.write(built, out_dir)
    summary = built["summary"]
    print(
        f"[bench] {summary['met']}/{summary['targets']} targets met in {seconds:.0f} s; "
        f"reports: {md_path.relative_to(ROOT) if md_path.is_relative_to(ROOT) else md_path}, "
        f"{json_path.name}",
        file=sys.stderr,
    )
    return 0 if not any(i.get("error") for i in items.values()) else 2


if __name__ == "__main__":
    sys.exit(main())
