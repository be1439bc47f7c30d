"""Projection benchmark: ``python bench/projection_bench.py [--repeat N]``.

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


def median_seconds(func: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    data = build_large_document().model_dump_json().encode("utf-8")
    doc = DoclingDocument.model_validate_json(data)
    source = SourceInfo(name="large.docling.json")
    projection = project(doc, source)

    load = median_seconds(lambda: DoclingDocument.model_validate_json(data), args.repeat)
    chunk = median_seconds(lambda: list(HierarchicalChunker().chunk(doc)), args.repeat)
    proj = median_seconds(lambda: project(doc, source), args.repeat)
    serialize = median_seconds(projection.to_json_bytes, args.repeat)
    pipeline = median_seconds(
        lambda: project(load_docling(data), source).to_json_bytes(), args.repeat
    )
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
        "median_s": {
            "load": round(load, 4),
            "chunker": round(chunk, 4),
            "project": round(proj, 4),
            "serialize": round(serialize, 4),
            "load_project_serialize": round(pipeline, 4),
        },
        "ratios": {
            "project_vs_chunker": round(proj / chunk, 3),
            "pipeline_vs_load": round(pipeline / load, 3),
        },
        "targets": {"project_vs_chunker": 0.25, "pipeline_vs_load": 2.0},
    }
    print(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
