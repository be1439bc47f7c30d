"""Projection benchmark: ``python bench/projection_bench.py [--repeat N]``.

Run it on a quiet machine: the measurements are interleaved round by round, but on a
shared CPU the medians still move by tens of percent between runs.

Builds the large benchmark document deterministically (2,000 paragraphs and 50 tables,
``tests/gen_fixtures.build_large_document``), then reports medians in seconds and the
two ratios the projection is held to, as one JSON object on stdout:

* ``project_vs_chunker``: ``project()`` alone against docling-core's HierarchicalChunker
  on the same loaded document (target: at most 0.25);
* ``pipeline_vs_load``: load + project + serialize against the bare load,
  ``DoclingDocument.model_validate_json`` (target: at most 2.0).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "docling"), str(ROOT / "tests")]

from docling_core.transforms.chunker.hierarchical_chunker import HierarchicalChunker  # noqa: E402
from docling_core.types.doc import DoclingDocument  # noqa: E402
from gen_fixtures import build_large_document  # noqa: E402

from richdoc.projection import SourceInfo, load_docling, project  # noqa: E402


def seconds(func: Callable[[], Any]) -> float:
    gc.collect()  # every measurement starts from a collected heap
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()

    data = build_large_document().model_dump_json().encode("utf-8")
    doc = DoclingDocument.model_validate_json(data)
    source = SourceInfo(name="large.docling.json")
    projection = project(doc, source)

    # Round-robin, so that every measurement sees the same background load.
    samples: dict[str, list[float]] = {
        "load": [],
        "chunker": [],
        "project": [],
        "serialize": [],
        "load_project_serialize": [],
    }
    for _ in range(args.repeat):
        samples["load"].append(seconds(lambda: DoclingDocument.model_validate_json(data)))
        samples["chunker"].append(seconds(lambda: list(HierarchicalChunker().chunk(doc))))
        samples["project"].append(seconds(lambda: project(doc, source)))
        samples["serialize"].append(seconds(projection.to_json_bytes))
        samples["load_project_serialize"].append(
            seconds(lambda: project(load_docling(data), source).to_json_bytes())
        )
    median = {name: statistics.median(values) for name, values in samples.items()}
    report = {
        "document": {
            "docling_json_bytes": len(data),
            "texts": len(doc.texts),
            "tables": len(doc.tables),
            "nodes": len(projection.nodes),
            "spans": len(projection.spans),
            "projection_json_bytes": len(projection.to_json_bytes()),
        },
        "repeat": args.repeat,
        "median_s": {name: round(value, 4) for name, value in median.items()},
        "ratios": {
            "project_vs_chunker": round(median["project"] / median["chunker"], 3),
            "pipeline_vs_load": round(median["load_project_serialize"] / median["load"], 3),
        },
        "targets": {"project_vs_chunker": 0.25, "pipeline_vs_load": 2.0},
    }
    print(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
