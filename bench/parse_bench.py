"""Item 3, parse worker: warm isolated parse against in-process docling, and stage costs.

For each input (a 50-page DOCX, a 50-page PDF through the native pipeline, and a tiny
Markdown file whose parse costs next to nothing, to show the fixed cost) it measures,
after one warm-up run each, interleaved round by round:

- ``isolated``: ``richdoc.parse.parse_file`` through a warm zygote (fork, inspection,
  conversion, JSON written, child reaped), as the Lambda handler and the CLI run it;
- ``in_process``: ``DocumentConverter.convert`` of the same file in this process, with
  the same converter the zygote builds (the baseline does not write the JSON; the
  isolated side does).

The conversion runs in another process on the isolated side, so the ratio is taken on
wall-clock time (median of the per-round ratios). Target: at most 1.2x. It also reports
the child's peak RSS, the zygote's RSS and warm-up, and this process's peak RSS before
docling was imported here (what a parse handler process holds).

For the cost model (item 7) it parses the typical documents of ``docs/cost.md`` (a 5-page
DOCX, a 50-page and a 300-page PDF) and times the project and detect steps on their
output, as the handlers run them (load, step, serialize).

    python -m bench.parse_bench [--repeat 4] [--quick]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/parse_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import ItemResult, Mode, Table, Target, item_main, mb, peak_rss_mb

TARGET = 1.2


@dataclass(frozen=True)
class Config:
    pages: int  # of the DOCX and the PDF of the comparison
    repeat: int  # interleaved rounds
    cost_docs: tuple[tuple[str, str, int], ...]  # (label, format, pages)
    cost_repeat: int

    @classmethod
    def for_mode(cls, mode: Mode, repeat: int | None = None) -> Config:
        if mode is Mode.QUICK:
            return cls(
                5, repeat or 2, (("DOCX, 2 pages", "docx", 2), ("PDF, 10 pages", "pdf", 10)), 1
            )
        return cls(
            50,
            repeat or 6,
            (
                ("DOCX, 5 pages", "docx", 5),
                ("PDF, 50 pages", "pdf", 50),
                ("PDF, 300 pages", "pdf", 300),
            ),
            2,
        )


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _make(work: Path, fmt: str, pages: int, name: str) -> Path:
    from tests.support import parse_inputs

    if fmt == "docx":
        return parse_inputs.docx(work / f"{name}.docx", pages=pages)
    if fmt == "pdf":
        return parse_inputs.pdf(work / f"{name}.pdf", pages=pages)
    return parse_inputs.markdown(work / f"{name}.md")


def _stage_costs(docling_json: Path, repeat: int) -> dict[str, float]:
    """The project and detect handlers' work on one parse output: median seconds."""
    from richdoc.detection import detect
    from richdoc.graph import Projection
    from richdoc.projection import load_docling, project
    from richdoc_client.projection import ProjectionSource

    data = docling_json.read_bytes()
    source = ProjectionSource(name=docling_json.name)
    projection_bytes = project(load_docling(data), source).to_json_bytes()

    def project_step() -> None:
        project(load_docling(data), source).to_json_bytes()

    def detect_step() -> None:
        detect(Projection.model_validate_json(projection_bytes), clarify=True).to_json_bytes()

    project_step()  # warm-up
    detect_step()
    return {
        "docling_json_mb": mb(len(data)),
        "projection_json_mb": mb(len(projection_bytes)),
        "project_s": round(statistics.median(_seconds(project_step) for _ in range(repeat)), 4),
        "detect_s": round(statistics.median(_seconds(detect_step) for _ in range(repeat)), 4),
    }


def _sides(
    path: Path, out: Path, converter: Any, limits: Any, worker: Any
) -> dict[str, Callable[[], object]]:
    from richdoc.parse.step import parse_file

    def isolated() -> object:
        return parse_file(path, out, limits, worker=worker)

    def in_process() -> object:
        return converter.convert(path)

    return {"isolated": isolated, "in_process": in_process}


def run(mode: Mode, repeat: int | None = None) -> ItemResult:
    from richdoc.formats import DocFormat
    from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
    from richdoc.parse.step import ParseWorker, parse_file

    config = Config.for_mode(mode, repeat)
    limits = ParseLimits.resolve()
    settings = ParserSettings(Pipeline.NATIVE)
    result = ItemResult("parse", "3. Parse worker against in-process DocumentConverter")
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-parse-") as tmp:
        work = Path(tmp)
        inputs = {
            "docx": _make(work, "docx", config.pages, "bench"),
            "pdf": _make(work, "pdf", config.pages, "bench"),
            "md": _make(work, "md", 1, "bench"),  # one paragraph: the fixed cost
        }
        out = work / "out.json"

        # Phase 1, as a handler process runs it: docling is never imported here.
        worker = ParseWorker(settings, quiet=True)
        cold_s = _seconds(lambda: parse_file(inputs["pdf"], out, limits, worker=worker))
        reports = {name: parse_file(p, out, limits, worker=worker) for name, p in inputs.items()}
        parent_rss_mb = peak_rss_mb()

        # The typical documents of the cost model, through the same warm worker.
        costs: list[dict[str, Any]] = []
        for label, fmt, pages in config.cost_docs:
            path = _make(work, fmt, pages, f"cost-{fmt}-{pages}")
            produced = work / f"cost-{fmt}-{pages}.docling.json"
            parse_s, report = [], None
            # A 300-page parse takes about 10 s here: once is enough for a cost estimate.
            for _ in range(config.cost_repeat if pages <= 100 else 1):
                started = time.perf_counter()
                report = parse_file(path, produced, limits, worker=worker)
                parse_s.append(time.perf_counter() - started)
            assert report is not None
            costs.append(
                {
                    "label": label,
                    "format": fmt,
                    "pages": pages,
                    "file_mb": mb(path.stat().st_size),
                    "parse_s": round(statistics.median(parse_s), 3),
                    "child_peak_rss_mb": round(report.peak_rss_mb or 0.0, 1),
                    **_stage_costs(produced, 3),
                }
            )

        # Phase 2: the same converters in this process; runs interleaved, order
        # alternating, so that load from other processes hits both sides alike.
        from richdoc.parse.convert import build_converters

        converters = build_converters(settings)
        samples: dict[str, dict[str, list[float]]] = {
            name: {"isolated": [], "in_process": []} for name in inputs
        }
        for name, path in inputs.items():
            converters[DocFormat(name)].convert(path)  # warm-up
        for round_ in range(config.repeat):
            for name, path in inputs.items():
                sides = _sides(path, out, converters[DocFormat(name)], limits, worker)
                for side in sorted(sides, reverse=round_ % 2 == 1):
                    samples[name][side].append(_seconds(sides[side]))
        hello = worker.server.hello
        assert hello is not None  # the worker has run documents
        worker.close()

    documents: dict[str, dict[str, Any]] = {}
    for name, report in reports.items():
        isolated, in_process = samples[name]["isolated"], samples[name]["in_process"]
        documents[name] = {
            "pages": config.pages if name != "md" else 1,
            "docling_pages": report.page_count,
            "pipeline": str(report.pipeline),
            "isolated_median_s": round(statistics.median(isolated), 4),
            "in_process_median_s": round(statistics.median(in_process), 4),
            "overhead_s": round(statistics.median(isolated) - statistics.median(in_process), 4),
            "ratio": round(
                statistics.median(i / p for i, p in zip(isolated, in_process, strict=True)), 3
            ),
            "child_peak_rss_mb": round(report.peak_rss_mb or 0.0, 1),
        }
    result.measurements = {
        "repeat": config.repeat,
        "cold_start_s": round(cold_s, 3),
        "zygote": {
            "warmup_s": round(hello.warmup_s, 3),
            "rss_mb": round(hello.rss_mb, 1),
            "threads": hello.threads,
        },
        "parent_peak_rss_mb": round(parent_rss_mb, 1),
        "documents": documents,
        "cost_documents": costs,
    }
    labels = {"docx": f"DOCX, {config.pages} pages", "pdf": f"PDF, {config.pages} pages (native)"}
    for name, label in labels.items():
        result.targets.append(
            Target(
                f"isolated_vs_in_process[{name}]",
                f"warm isolated parse_file / in-process convert, {label}",
                documents[name]["ratio"],
                TARGET,
                "x",
                "wall time (the conversion runs in a child process), median of per-round ratios",
            )
        )
    result.tables.append(
        Table(
            "Warm per-document time (medians)",
            ["document", "isolated s", "in-process s", "overhead s", "ratio", "child peak RSS MB"],
            [
                [
                    labels.get(name, "Markdown, one paragraph (fixed cost)"),
                    d["isolated_median_s"],
                    d["in_process_median_s"],
                    d["overhead_s"],
                    d["ratio"],
                    d["child_peak_rss_mb"],
                ]
                for name, d in documents.items()
            ],
        )
    )
    result.tables.append(
        Table(
            "Processes",
            ["process", "value"],
            [
                [
                    "handler process peak RSS before docling is imported (parent)",
                    f"{parent_rss_mb:.0f} MB",
                ],
                ["zygote RSS after warm-up", f"{hello.rss_mb:.0f} MB"],
                ["zygote threads after warm-up", hello.threads],
                ["zygote warm-up (import docling, build converters)", f"{hello.warmup_s:.1f} s"],
                ["first document, cold (warm-up included)", f"{cold_s:.1f} s"],
            ],
        )
    )
    result.tables.append(
        Table(
            "Stage durations of the cost model's documents (warm, this machine)",
            [
                "document",
                "file MB",
                "parse s",
                "child peak RSS MB",
                "DoclingDocument MB",
                "project s",
                "detect s",
            ],
            [
                [
                    c["label"],
                    c["file_mb"],
                    c["parse_s"],
                    c["child_peak_rss_mb"],
                    c["docling_json_mb"],
                    c["project_s"],
                    c["detect_s"],
                ]
                for c in costs
            ],
        )
    )
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run, repeat="interleaved rounds"))
