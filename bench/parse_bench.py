"""Warm per-document cost of the isolated parse worker against in-process docling.

For each input (a 50-page DOCX, a 50-page PDF through the native pipeline, and a tiny
Markdown file whose parse costs next to nothing, to show the fixed cost) it measures,
after one warm-up run each, interleaved:

- ``isolated``: ``richdoc.parse.parse_file`` through a warm zygote (fork, inspection,
  conversion, JSON written, child reaped), as the Lambda handler and the CLI run it;
- ``in_process``: ``DocumentConverter.convert`` of the same file in this process, with
  the same converter the zygote builds (the baseline does not write the JSON; the
  isolated side does).

It prints one JSON report: medians over ``--repeat`` runs, their ratio (target: at
most 1.2), the child's peak RSS, the zygote's RSS and warm-up time, and this process's
peak RSS before docling was imported here (what a handler process holds).

    PYTHONPATH=layers/docling python bench/parse_bench.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "docling"), str(ROOT)]

from richdoc.formats import DocFormat  # noqa: E402
from richdoc.parse import (  # noqa: E402
    ParseLimits,
    ParserSettings,
    ParseWorker,
    Pipeline,
    build_converters,
    parse_file,
)
from tests import parse_inputs  # noqa: E402


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(run: Any) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--pages", type=int, default=50)
    args = parser.parse_args()

    limits = ParseLimits.resolve()
    settings = ParserSettings(Pipeline.NATIVE)
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp:
        work = Path(tmp)
        inputs = {
            "docx": parse_inputs.docx(work / "bench.docx", pages=args.pages),
            "pdf": parse_inputs.pdf(work / "bench.pdf", pages=args.pages),
            # A one-paragraph file: what is left is the fixed cost per document.
            "md": parse_inputs.markdown(work / "bench.md"),
        }
        out = work / "out.json"

        # Phase 1, as a handler process runs it: docling never imported here.
        worker = ParseWorker(settings, quiet=True)
        cold_s = _timed(lambda: parse_file(inputs["pdf"], out, limits, worker=worker))
        reports = {name: parse_file(p, out, limits, worker=worker) for name, p in inputs.items()}
        parent_rss_mb = _rss_mb()

        # Phase 2: the same converter in this process; runs interleaved so that load
        # from other processes on the machine hits both sides alike.
        converters = build_converters(settings)
        samples: dict[str, dict[str, list[float]]] = {
            name: {"isolated": [], "in_process": []} for name in inputs
        }
        for name, path in inputs.items():
            converters[DocFormat(name)].convert(path)  # warm-up
        for rep in range(args.repeat):
            for name, path in inputs.items():
                runs = {
                    "isolated": lambda p=path: parse_file(p, out, limits, worker=worker),
                    "in_process": lambda p=path, n=name: converters[DocFormat(n)].convert(p),
                }
                for side in sorted(runs, reverse=rep % 2 == 1):
                    samples[name][side].append(_timed(runs[side]))
        hello = worker.server.hello
        worker.close()

    documents = {}
    for name, report in reports.items():
        isolated = statistics.median(samples[name]["isolated"])
        in_process = statistics.median(samples[name]["in_process"])
        documents[name] = {
            "pages": report.pages,
            "pipeline": str(report.pipeline),
            "isolated_median_s": round(isolated, 4),
            "in_process_median_s": round(in_process, 4),
            "overhead_s": round(isolated - in_process, 4),
            "ratio": round(isolated / in_process, 3),
            "child_peak_rss_mb": round(report.peak_rss_mb or 0.0, 1),
        }
    print(
        json.dumps(
            {
                "repeat": args.repeat,
                "cold_start_s": round(cold_s, 3),
                "zygote": {
                    "warmup_s": round(hello["warmup_s"], 3),
                    "rss_mb": round(hello["rss_mb"], 1),
                    "threads": hello["threads"],
                },
                "parent_peak_rss_mb": round(parent_rss_mb, 1),
                "documents": documents,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
