"""The standard PDF pipeline (layout model + TableFormer, OCR off) on synthesised weights.

Measures, per document and per page, for text-only and table-heavy PDFs of 1, 10, 50 and
200 pages:

- ``worker``: a parse through the isolated worker, as Lambda and ``richdoc parse`` run it
  (``ParseWorker.convert``): wall seconds, the child's CPU seconds (what the zygote's
  ``cutime + cstime`` grew by once it reaped the child), the child's peak RSS (which
  counts the zygote's pages it maps) and the zygote's RSS and warm-up once warm;
- ``in_process``: the same conversion with a ``DocumentConverter`` built in a fresh
  interpreter (``StandardPdfPipeline`` options as the worker sets them, ``--threads``
  torch threads, 1 by default: on a loaded 2-core machine OpenMP's spinning threads
  make more than one thread many times slower): wall and CPU seconds, peak RSS
  (``VmHWM``).

The weights come from ``richdoc_tools.weights`` (random, real architectures; the layout
model detects ``--label`` on every query, so TableFormer runs only with ``--label
table``). They make the model forward passes cost what the real models cost; the stages
after the layout model carry the random weights' load, not a real document's (see that
module). This machine is shared: compare CPU seconds first.

    python -m bench.standard_pipeline [--worker-pages 1,10,50,200] [--kinds text,tables]
        [--in-process-pages 1,10,50,200] [--threads 1] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/standard_pipeline.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ROOT, peak_rss_mb

KINDS = ("text", "tables")
WEIGHTS_CACHE = ROOT / "bench" / "reports" / "tmp" / "models"


def write_pdf(path: Path, kind: str, pages: int) -> Path:
    from tests.support.parse_inputs import page_pdf

    return page_pdf(path, pages=pages, tables=kind == "tables")


def cpu_of_children(pid: int) -> float:
    """CPU seconds of ``pid``'s reaped children (``cutime + cstime`` of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def measure_worker(
    weights: Path, documents: Sequence[tuple[str, int, Path]], work: Path
) -> list[dict[str, Any]]:
    from richdoc.formats import DocFormat
    from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
    from richdoc.parse.step import ParseWorker

    worker = ParseWorker(ParserSettings(Pipeline.STANDARD, str(weights)), quiet=True)
    limits = ParseLimits(max_pages=2000, timeout_s=3600.0, mem_ceiling_mb=20_000)
    rows: list[dict[str, Any]] = []
    try:
        for kind, pages, source in documents:
            staged = work / f"{kind}-{pages}" / "document.pdf"
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(source.read_bytes())
            zygote = worker.server.zygote_pid
            before = cpu_of_children(zygote) if zygote else 0.0
            started = time.perf_counter()
            report, outcome = worker.convert(
                staged, DocFormat.PDF, staged.with_name("out.json"), limits, accept_partial=True
            )
            wall = time.perf_counter() - started
            zygote = worker.server.zygote_pid
            assert zygote is not None
            cpu = cpu_of_children(zygote) - before
            hello = worker.server.hello
            assert hello is not None
            rows.append(
                {
                    "side": "worker",
                    "kind": kind,
                    "pages": pages,
                    "pipeline": str(report.pipeline),
                    "wall_s": round(wall, 2),
                    "child_s": round(outcome.seconds, 2),
                    "convert_s": round(report.convert_s, 2),
                    "cpu_s": round(cpu, 2),
                    "cpu_s_per_page": round(cpu / pages, 3),
                    "wall_s_per_page": round(outcome.seconds / pages, 3),
                    "child_peak_rss_mb": round(outcome.peak_rss_mb),
                    "zygote_rss_mb": round(hello.rss_mb),
                    "zygote_threads": hello.threads,
                    "zygote_warmup_s": round(hello.warmup_s, 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    finally:
        worker.close()
    return rows


def measure_in_process(
    weights: Path, kind: str, pages: int, source: Path, threads: int
) -> dict[str, Any]:
    """One conversion in a fresh interpreter (clean peak RSS and CPU)."""
    command = [sys.executable, "-m", "bench.standard_pipeline", "--one", str(weights), str(source)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    row.update(side="in_process", kind=kind, pages=pages)
    row["cpu_s_per_page"] = round(row["cpu_s"] / pages, 3)
    row["wall_s_per_page"] = round(row["convert_wall_s"] / pages, 3)
    print(json.dumps(row), flush=True)
    return row


def _convert_here(weights: Path, source: Path) -> dict[str, Any]:
    import torch
    from docling.datamodel.accelerator_options import AcceleratorOptions
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.pipeline_options import (
        TableFormerMode,
        TableStructureOptions,
        ThreadedPdfPipelineOptions,
    )
    from docling.document_converter import DocumentConverter, PdfFormatOption

    started = time.perf_counter()
    options = ThreadedPdfPipelineOptions(
        artifacts_path=str(weights),
        do_ocr=False,
        do_table_structure=True,
        table_structure_options=TableStructureOptions(mode=TableFormerMode.ACCURATE),
        accelerator_options=AcceleratorOptions(
            num_threads=int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1),
            device="cpu",
        ),
    )
    converter = DocumentConverter(
        allowed_formats=[InputFormat.PDF],
        format_options={InputFormat.PDF: PdfFormatOption(pipeline_options=options)},
    )
    converter.initialize_pipeline(InputFormat.PDF)
    init_s = time.perf_counter() - started
    rss_before = peak_rss_mb()
    cpu_before = time.process_time()
    started = time.perf_counter()
    result = converter.convert(source)
    return {
        "status": str(result.status.value),
        "init_s": round(init_s, 2),
        "convert_wall_s": round(time.perf_counter() - started, 2),
        "cpu_s": round(time.process_time() - cpu_before, 2),
        "peak_rss_mb_after_init": round(rss_before),
        "peak_rss_mb": round(peak_rss_mb()),
        "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "torch_threads": torch.get_num_threads(),
        "threads_after": len(os.listdir("/proc/self/task")),
    }


def _csv_ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.standard_pipeline")
    parser.add_argument("--worker-pages", type=_csv_ints, default=[1, 10, 50, 200])
    parser.add_argument("--in-process-pages", type=_csv_ints, default=[1, 10, 50, 200])
    parser.add_argument("--threads", type=int, default=1, help="torch threads in process")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--label", default="text", help="what the layout model detects")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_convert_here(*args.one)))
        return 0

    from richdoc_tools.weights import cached

    started = time.perf_counter()
    weights = cached(WEIGHTS_CACHE, label=args.label)
    print(json.dumps({"weights": str(weights), "s": round(time.perf_counter() - started, 1)}))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sizes = sorted({*args.worker_pages, *args.in_process_pages})
        documents = [
            (kind, pages, write_pdf(work / f"{kind}-{pages}.pdf", kind, pages))
            for kind in args.kinds.split(",")
            for pages in sizes
        ]
        for kind, pages, source in documents:
            if pages in args.in_process_pages:
                rows.append(measure_in_process(weights, kind, pages, source, args.threads))
        if args.worker_pages:
            # A 1-page warm-up, so that no measured document pays for the zygote's start.
            warm = write_pdf(work / "warm.pdf", "text", 1)
            chosen = [d for d in documents if d[1] in args.worker_pages]
            rows += measure_worker(weights, [("warm-up", 1, warm), *chosen], work)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
