"""The standard PDF pipeline (layout model + TableFormer) on synthesised weights: three
ratios, each measured side by side in one run (``bench.standard_pipeline`` has the per-page
and per-document figures behind docs/parse.md's sizing table).

* ``standard_isolation``: a warm isolated parse (``ParseWorker.convert``: a child forked
  from the warm zygote, torch raised to the CPUs) against the same conversion in this
  process with a ``DocumentConverter`` built from the same options and threads; rounds
  interleaved. Target: isolated / in-process wall time <= 1.1.
* ``standard_shards``: a text PDF through ``richdoc run`` on the embedded stack (the
  standard pipeline: ``DOCLING_ARTIFACTS_PATH`` set), sharded against whole, artifact cache
  emptied before each run. Target: sharded / whole wall time <= 0.6 on 2 cores, outputs
  byte-identical. The full size is 300 pages; ``RICHDOC_BENCH_STANDARD_PAGES`` chooses
  another (each page costs about 2 CPU seconds here).
* ``standard_coldstart``: a fresh interpreter that starts the parse worker (zygote warm-up
  with both models) and converts a 1-page PDF, against a fresh interpreter that builds a
  ``DocumentConverter`` and converts the same page; rounds alternate. Target: worker /
  in-process wall time <= 1.2.

Weights: ``richdoc_tools.weights.cached`` (seed 0, the layout model detects text), so the
models' forward passes cost what the real ones cost. OpenMP's passive wait policy on both
sides, as the worker sets it for its children.

    python -m bench.standard_bench {isolation,shards,coldstart} [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/standard_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ROOT, ItemResult, Mode, Sample, Table, Target, ratio
from bench.standard_pipeline import WEIGHTS_CACHE, cpu_of_children, write_pdf

ISOLATION_TARGET = 1.1
SHARDS_TARGET = 0.6
COLDSTART_TARGET = 1.2
PAGES_ENV = "RICHDOC_BENCH_STANDARD_PAGES"
# Both sides: OpenMP threads sleep between parallel regions (the worker's setting).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@dataclass(frozen=True)
class Sizes:
    isolation_pages: int
    isolation_rounds: int
    shard_document_pages: int
    shard_pages: int
    shard_rounds: int
    coldstart_rounds: int

    @classmethod
    def for_mode(cls, mode: Mode) -> Sizes:
        if mode is Mode.QUICK:
            return cls(2, 1, 4, 2, 1, 1)
        pages = int(os.environ.get(PAGES_ENV) or 300)
        return cls(10, 3, pages, max(1, pages // 6), 1, 3)


def _weights() -> Path:
    from richdoc_tools.weights import cached

    return cached(WEIGHTS_CACHE)


def _settings(weights: Path) -> Any:
    from richdoc.parse.settings import ParserSettings, Pipeline

    return ParserSettings(Pipeline.STANDARD, str(weights))


def in_process_converter(weights: Path) -> Callable[[Path], object]:
    """A PDF converter built here from the worker's own options, torch at the CPUs the
    worker's child would take (``threads_for`` one conversion)."""
    import torch
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    from richdoc.formats import DocFormat
    from richdoc.parse.convert import paged_format_option
    from richdoc.parse.settings import available_cpus, threads_for

    converter = DocumentConverter(
        allowed_formats=[InputFormat.PDF],
        format_options={InputFormat.PDF: paged_format_option(_settings(weights), DocFormat.PDF)},
    )
    converter.initialize_pipeline(InputFormat.PDF)
    torch.set_num_threads(threads_for(1, available_cpus()))

    def convert(source: Path) -> object:
        return converter.convert(source, raises_on_error=True)

    return convert


# ---- isolated against in-process ---------------------------------------------------------


def run_isolation(mode: Mode) -> ItemResult:
    from richdoc.formats import DocFormat
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import ParseWorker

    sizes = Sizes.for_mode(mode)
    result = ItemResult(
        "standard_isolation", "Standard pipeline: warm isolated parse against in-process"
    )
    weights = _weights()
    limits = ParseLimits(max_pages=2000, timeout_s=3600.0, mem_ceiling_mb=20_000)
    samples: dict[str, list[Sample]] = {"isolated": [], "in_process": []}
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-std-") as tmp:
        work = Path(tmp)
        pdf = write_pdf(work / "doc.pdf", "text", sizes.isolation_pages)
        worker = ParseWorker(_settings(weights), quiet=True)
        try:
            out = work / "isolated" / "out.json"
            out.parent.mkdir()
            worker.convert(pdf, DocFormat.PDF, out, limits, accept_partial=True)  # warm
            zygote = worker.server.zygote_pid
            assert zygote is not None
            convert_here = in_process_converter(weights)
            convert_here(pdf)  # the same first-conversion costs on this side

            def isolated() -> Sample:
                cpu, wall = cpu_of_children(zygote), time.perf_counter()
                worker.convert(pdf, DocFormat.PDF, out, limits, accept_partial=True)
                return Sample(time.perf_counter() - wall, cpu_of_children(zygote) - cpu)

            def in_process() -> Sample:
                cpu, wall = time.process_time(), time.perf_counter()
                convert_here(pdf)
                return Sample(time.perf_counter() - wall, time.process_time() - cpu)

            sides = {"isolated": isolated, "in_process": in_process}
            for round_ in range(sizes.isolation_rounds):
                for name in sides if round_ % 2 == 0 else reversed(list(sides)):
                    samples[name].append(sides[name]())
            hello = worker.server.hello
            assert hello is not None
            zygote_mb = round(hello.rss_mb)
        finally:
            worker.close()
    measured = ratio(samples["isolated"], samples["in_process"])
    result.measurements = {
        "pages": sizes.isolation_pages,
        "rounds": sizes.isolation_rounds,
        "samples": {
            k: [(round(s.wall, 2), round(s.cpu, 2)) for s in v] for k, v in samples.items()
        },
        "ratio": measured,
        "zygote_rss_mb": zygote_mb,
    }
    result.targets.append(
        Target(
            "standard_isolated_over_in_process",
            f"standard pipeline, {sizes.isolation_pages}-page text PDF: warm isolated parse "
            "over in-process docling on the same weights, wall time",
            measured["wall"],
            ISOLATION_TARGET,
            "x",
            "median of the per-round ratios; isolated CPU is the zygote's reaped children",
        )
    )
    result.tables.append(
        Table(
            f"{sizes.isolation_pages} pages: median seconds",
            ["side", "wall", "CPU"],
            [
                [name, statistics.median(s.wall for s in v), statistics.median(s.cpu for s in v)]
                for name, v in samples.items()
            ]
            + [["ratio", measured["wall"], measured["cpu"]]],
        )
    )
    return result


# ---- sharded against whole ---------------------------------------------------------------


def run_shards(mode: Mode) -> ItemResult:
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import run_files

    from bench.e2e_bench import Clock
    from bench.shards_bench import one_run
    from richdoc.parse.settings import ARTIFACTS_ENV, PDF_PIPELINE_ENV
    from richdoc.parse.step import shared_worker

    sizes = Sizes.for_mode(mode)
    pages, shard_pages = sizes.shard_document_pages, sizes.shard_pages
    result = ItemResult("standard_shards", "Standard pipeline: page-range shards against whole")
    os.environ[ARTIFACTS_ENV] = str(_weights())
    os.environ.pop(PDF_PIPELINE_ENV, None)
    clock = Clock()
    runs = []
    # One tier large enough for the whole document on both sides, and the longest parse
    # timeout the template allows (docling stops at 80 % of it: 672 s, about 300 pages
    # on 2 cores): no escalation, no partial result.
    tiers = {f"ParseTier{n}MemoryMB": "10240" for n in (1, 2, 3)}
    tiers["ParseTimeoutSeconds"] = "840"
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-std-shards-") as tmp:
        work = Path(tmp)
        pdf = write_pdf(work / "long.pdf", "text", pages)
        warm = write_pdf(work / "warm.pdf", "text", 2)
        with EmbeddedStack(
            StackSettings(parameters=tiers, log_path=work / "functions.log")
        ) as stack:
            started = time.perf_counter()
            os.environ["RICHDOC_SHARD_PAGES"] = "1"
            run_files(stack, [warm], clarify=True)  # every handler imported, zygote warm
            warm_s = time.perf_counter() - started
            clock.attach(shared_worker().server.zygote_pid)
            variants = ["sharded", "whole"]
            for round_ in range(sizes.shard_rounds):
                for variant in variants if round_ % 2 == 0 else reversed(variants):
                    runs.append(one_run(stack, pdf, variant, clock, shard_pages))
    sharded = [r for r in runs if r.variant == "sharded"]
    whole = [r for r in runs if r.variant == "whole"]
    wall = statistics.median(s.wall / w.wall for s, w in zip(sharded, whole, strict=True))
    cpu = statistics.median(s.cpu / w.cpu for s, w in zip(sharded, whole, strict=True))
    identical = all(r.outputs == whole[0].outputs for r in runs)
    result.measurements = {
        "pages": pages,
        "shard_pages": shard_pages,
        "rounds": sizes.shard_rounds,
        "warm_up_s": round(warm_s, 1),
        "runs": [
            {"variant": r.variant, "wall_s": round(r.wall, 1), "cpu_s": round(r.cpu, 1)}
            | {"shards": r.shards, "steps_s": r.steps}
            for r in runs
        ],
        "ratio": {"wall": round(wall, 3), "cpu": round(cpu, 3)},
        "identical_outputs": identical,
    }
    result.targets += [
        Target(
            "standard_sharded_over_whole",
            f"standard pipeline, {pages}-page text PDF through richdoc run: sharded "
            f"({shard_pages} pages a shard) over whole, wall time, 2 cores",
            round(wall, 3),
            SHARDS_TARGET,
            "x",
            "median of the per-round ratios of the job's wall time, cache emptied before each",
        ),
        Target(
            "standard_sharded_identical",
            "projection.json and detection.json differ between sharded and whole runs",
            0 if identical else 1,
            0,
            "count",
            "byte comparison of every run's outputs",
        ),
    ]
    result.tables.append(
        Table(
            f"{pages} pages, {shard_pages} a shard: seconds",
            ["variant", "wall", "CPU", "shards", "slowest shard", "parse (whole)"],
            [
                [
                    r.variant,
                    round(r.wall, 1),
                    round(r.cpu, 1),
                    r.shards,
                    r.steps.get("shard_max", "-"),
                    r.steps.get("parse", "-"),
                ]
                for r in runs
            ],
        )
    )
    if pages != 300:
        result.notes.append(f"run at {pages} pages ({PAGES_ENV}); the full size is 300")
    return result


# ---- cold start --------------------------------------------------------------------------


def _cold(side: str, weights: Path, pdf: Path) -> dict[str, Any]:
    """One side of the cold start, in this fresh interpreter: to the first page converted."""
    started = time.perf_counter()
    if side == "worker":
        from richdoc.formats import DocFormat
        from richdoc.parse.settings import ParseLimits
        from richdoc.parse.step import ParseWorker

        worker = ParseWorker(_settings(weights), quiet=True)
        out = pdf.with_name("cold") / "out.json"
        out.parent.mkdir(exist_ok=True)
        limits = ParseLimits(max_pages=10, timeout_s=600.0, mem_ceiling_mb=20_000)
        worker.convert(pdf, DocFormat.PDF, out, limits, accept_partial=False)
        seconds = time.perf_counter() - started
        hello = worker.server.hello
        warmup = round(hello.warmup_s, 2) if hello else None
        worker.close()
        return {"first_page_s": round(seconds, 2), "zygote_warmup_s": warmup}
    convert = in_process_converter(weights)
    ready = time.perf_counter() - started
    convert(pdf)
    return {"first_page_s": round(time.perf_counter() - started, 2), "init_s": round(ready, 2)}


def _spawn(side: str, weights: Path, pdf: Path) -> tuple[Sample, dict[str, Any]]:
    """A fresh interpreter for ``side``: wall to its exit, CPU of it and its descendants."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.standard_bench", "--cold", side, str(weights), str(pdf)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Sample(wall, cpu), json.loads(done.stdout.strip().splitlines()[-1])


def run_coldstart(mode: Mode) -> ItemResult:
    sizes = Sizes.for_mode(mode)
    result = ItemResult(
        "standard_coldstart", "Standard pipeline: cold start to the first page converted"
    )
    weights = _weights()
    samples: dict[str, list[Sample]] = {"worker": [], "in_process": []}
    details: dict[str, list[dict[str, Any]]] = {"worker": [], "in_process": []}
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-std-cold-") as tmp:
        pdf = write_pdf(Path(tmp) / "one.pdf", "text", 1)
        sides = list(samples)
        for round_ in range(sizes.coldstart_rounds):
            for side in sides if round_ % 2 == 0 else reversed(sides):
                sample, detail = _spawn(side, weights, pdf)
                samples[side].append(sample)
                details[side].append(detail)
    measured = ratio(samples["worker"], samples["in_process"])
    result.measurements = {
        "rounds": sizes.coldstart_rounds,
        "samples": {
            k: [(round(s.wall, 2), round(s.cpu, 2)) for s in v] for k, v in samples.items()
        },
        "details": details,
        "ratio": measured,
    }
    result.targets.append(
        Target(
            "standard_coldstart_worker_over_in_process",
            "standard pipeline: a fresh process to its first page, parse worker (zygote "
            "warm-up with both models, then a forked child) over in-process "
            "DocumentConverter initialisation and conversion, wall time",
            measured["wall"],
            COLDSTART_TARGET,
            "x",
            "median of the per-round ratios, each side a fresh interpreter (imports included)",
        )
    )
    result.tables.append(
        Table(
            "1 page, fresh interpreter: median seconds",
            ["side", "wall", "CPU (with descendants)"],
            [
                [name, statistics.median(s.wall for s in v), statistics.median(s.cpu for s in v)]
                for name, v in samples.items()
            ]
            + [["ratio", measured["wall"], measured["cpu"]]],
        )
    )
    return result


ITEMS = {"isolation": run_isolation, "shards": run_shards, "coldstart": run_coldstart}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("item", nargs="?", choices=sorted(ITEMS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cold", nargs=3, metavar=("SIDE", "WEIGHTS", "PDF"))
    args = parser.parse_args(argv)
    if args.cold:
        side, weights, pdf = args.cold
        print(json.dumps(_cold(side, Path(weights), Path(pdf))))
        return 0
    if args.item is None:
        parser.error("an item is required")
    return ITEMS[args.item](Mode.QUICK if args.quick else Mode.FULL).print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
