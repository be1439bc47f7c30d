"""Run one benchmark item in this (fresh) interpreter and write its result as JSON.

``python -m bench`` starts one of these per item, so that every item starts from a clean
process: its own imports, heap, garbage-collector state and peak-RSS counter, and no
patched module (the embedded stack patches moto and botocore) leaks into the next one.

    python -m bench.runner ITEM MODE RESULT.json
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

from bench.common import Mode

# In the suite's order (the cost model, item 7, is computed from their results).
ITEMS: dict[str, str] = {
    "projection": "bench.projection_bench",
    "detection": "bench.detection_bench",
    "parse": "bench.parse_bench",
    "coldstart": "bench.coldstart_bench",
    "e2e": "bench.e2e_bench",
    "scaling": "bench.scaling_bench",
    "shards": "bench.shards_bench",
    "standard_isolation": "bench.standard_bench:run_isolation",
    "standard_shards": "bench.standard_bench:run_shards",
    "standard_coldstart": "bench.standard_bench:run_coldstart",
    "chunking": "bench.chunking_bench",
    "strict_stack": "bench.strict_bench",
    "admission": "bench.admission_bench",
    "admission_reprocess": "bench.reprocess_bench",
    "admission_sweep": "bench.sweep_bench",
    "ocr": "bench.ocr_bench",
    "drain": "bench.drain_bench",
    "contracts": "bench.contracts_bench",
    "contracts_pdf": "bench.contracts_bench:run_pdf_parity",
    "speed_patches": "bench.speed_patches_bench",
    "structure": "bench.structure_bench",
}


def main(argv: list[str]) -> int:
    name, mode, out = argv
    # "module" (its run) or "module:function".
    module_name, _, function = ITEMS[name].partition(":")
    run = getattr(importlib.import_module(module_name), function or "run")
    load_before = os.getloadavg()
    started = time.perf_counter()
    result = run(Mode(mode))
    payload = {
        **result.to_dict(),
        "seconds": round(time.perf_counter() - started, 1),
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }
    Path(out).write_text(json.dumps(payload, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
