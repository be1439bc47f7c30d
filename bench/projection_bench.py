"""Item 1, projection: load + project + serialize against docling-core's own work.

Builds the benchmark documents deterministically
(``tests/support/gen_fixtures.build_large_document``:
2,000 paragraphs and 50 tables, about 2.9 MB of DoclingDocument JSON, and a 10x larger
one), then times, round-robin over several rounds:

* ``load``: ``DoclingDocument.model_validate_json`` of the JSON bytes (the bare load);
* ``chunker``: docling-core's ``HierarchicalChunker`` over the same loaded document;
* ``project``: ``richdoc.projection.project`` over the same loaded document;
* ``serialize``: ``Projection.to_json_bytes``;
* ``load_project_serialize``: the projection part of what the project handler does
  between S3 calls;
* ``markdown``: ``richdoc.markdown.render_markdown`` (docling-core's Markdown export) and
  ``table_csvs``: the tables as CSV, the handler's other outputs, against the same load
  (reported as ratios to it, no target).

Targets: ``project`` at most 0.25x the chunker; load + project + serialize at most 2x the
bare load. Verdicts use CPU time (all of it runs in this process).

Then the whole step as a user runs it, in fresh processes side by side (CPU time of each
child from ``wait4``, interleaved rounds, median of the per-round ratios): ``richdoc
project`` on a 4 MB DoclingDocument (imports, load, projection, serialization, exit)
against a process that loads the same document and runs the chunker. Target: at most
0.25x.

    python -m bench.projection_bench [--repeat N] [--quick]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/projection_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import (
    ItemResult,
    Mode,
    Sample,
    Table,
    Target,
    interleaved,
    item_main,
    mb,
    median_s,
    ratio,
)

PROJECT_VS_CHUNKER = 0.25
PIPELINE_VS_LOAD = 2.0
PROCESS_VS_CHUNKER_PROCESS = 0.25


@dataclass(frozen=True)
class Document:
    label: str
    paragraphs: int
    tables: int
    rounds: int


def documents(mode: Mode, repeat: int | None = None) -> list[Document]:
    if mode is Mode.QUICK:
        return [Document("200 paragraphs + 5 tables", 200, 5, repeat or 3)]
    return [
        Document("2,000 paragraphs + 50 tables", 2000, 50, repeat or 5),
        # Ten times larger: a round takes about 30 s here (the chunker alone 12 s), so two
        # rounds keep the suite within its time budget; CPU-time ratios move little.
        Document("20,000 paragraphs + 500 tables (10x)", 20000, 500, repeat or 2),
    ]


@dataclass(frozen=True)
class Run:
    document: Document
    shape: dict[str, float | int]
    samples: dict[str, list[Sample]]

    @property
    def project_vs_chunker(self) -> dict[str, float]:
        return ratio(self.samples["project"], self.samples["chunker"])

    @property
    def pipeline_vs_load(self) -> dict[str, float]:
        return ratio(self.samples["load_project_serialize"], self.samples["load"])

    @property
    def markdown_vs_load(self) -> dict[str, float]:
        return ratio(self.samples["markdown"], self.samples["load"])

    @property
    def table_csvs_vs_load(self) -> dict[str, float]:
        return ratio(self.samples["table_csvs"], self.samples["load"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": {"label": self.document.label, **self.shape},
            "rounds": self.document.rounds,
            "median_s": {name: median_s(values) for name, values in self.samples.items()},
            "ratios": {
                "project_vs_chunker": self.project_vs_chunker,
                "pipeline_vs_load": self.pipeline_vs_load,
                "markdown_vs_load": self.markdown_vs_load,
                "table_csvs_vs_load": self.table_csvs_vs_load,
            },
        }


MEASUREMENTS = (
    "load",
    "chunker",
    "project",
    "serialize",
    "load_project_serialize",
    "markdown",
    "table_csvs",
)


def measure(document: Document) -> Run:
    from docling_core.transforms.chunker.hierarchical_chunker import HierarchicalChunker
    from docling_core.types.doc import DoclingDocument

    from richdoc.markdown import render_markdown
    from richdoc.projection import load_docling, project
    from richdoc_client.projection import ProjectionSource
    from richdoc_client.tables import table_csvs
    from tests.support.gen_fixtures import build_large_document

    data = build_large_document(document.paragraphs, document.tables).model_dump_json().encode()
    doc = DoclingDocument.model_validate_json(data)
    source = ProjectionSource(name="large.docling.json")
    projection = project(doc, source)  # warm-up, and the shape to report
    chunks: list[int] = []  # counted inside the timed runs: one chunker pass at 10x is 12 s
    samples = interleaved(
        {
            "load": lambda: DoclingDocument.model_validate_json(data),
            "chunker": lambda: chunks.append(len(list(HierarchicalChunker().chunk(doc)))),
            "project": lambda: project(doc, source),
            "serialize": projection.to_json_bytes,
            "load_project_serialize": lambda: project(load_docling(data), source).to_json_bytes(),
            "markdown": lambda: render_markdown(doc),
            "table_csvs": lambda: table_csvs(projection),
        },
        document.rounds,
        collect=True,
    )
    shape: dict[str, float | int] = {
        "paragraphs": document.paragraphs,
        "tables": document.tables,
        "docling_json_mb": mb(len(data)),
        "texts": len(doc.texts),
        "nodes": len(projection.nodes),
        "spans": len(projection.spans),
        "chunks": chunks[0],
        "projection_json_mb": mb(len(projection.to_json_bytes())),
    }
    return Run(document, shape, samples)


BASIS = "CPU time, median of the per-round ratios (all in this process)"
PROCESS_BASIS = "CPU time of each child process (wait4), median of the per-round ratios"

# The reference process: what a consumer of the DoclingDocument does with docling-core
# alone, from a fresh interpreter (imports, load, one chunk per block).
CHUNKER_PROCESS = """
import sys
from docling_core.transforms.chunker.hierarchical_chunker import HierarchicalChunker
from docling_core.types.doc import DoclingDocument

doc = DoclingDocument.model_validate_json(open(sys.argv[1], "rb").read())
for _ in HierarchicalChunker().chunk(doc):
    pass
"""


def process_document(mode: Mode, repeat: int | None = None) -> Document:
    if mode is Mode.QUICK:
        return Document("200 paragraphs + 5 tables", 200, 5, repeat or 2)
    return Document("2,800 paragraphs + 70 tables (4 MB)", 2800, 70, repeat or 5)


def child(command: list[str]) -> Sample:
    """Run ``command`` as a fresh process: its wall time, and its CPU time from ``wait4``."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command[:2]}: exit {status}: {stderr[-2000:]}")
    return Sample(time.perf_counter() - started, usage.ru_utime + usage.ru_stime)


@dataclass(frozen=True)
class ProcessRun:
    document: Document
    docling_json_mb: float
    samples: dict[str, list[Sample]]

    @property
    def process_vs_chunker(self) -> dict[str, float]:
        return ratio(self.samples["richdoc_project"], self.samples["chunker_process"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": {"label": self.document.label, "docling_json_mb": self.docling_json_mb},
            "rounds": self.document.rounds,
            "median_s": {name: median_s(values) for name, values in self.samples.items()},
            "ratios": {"process_vs_chunker_process": self.process_vs_chunker},
        }


def measure_processes(document: Document) -> ProcessRun:
    """``richdoc project`` (the installed command beside this interpreter) against the
    chunker's process, both on the same file, interleaved with alternating order."""
    from tests.support.gen_fixtures import build_large_document

    richdoc = Path(sys.executable).with_name("richdoc")
    if not richdoc.is_file():
        raise RuntimeError(f"no richdoc command beside {sys.executable}: run make setup")
    data = build_large_document(document.paragraphs, document.tables).model_dump_json().encode()
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-") as tmp:
        source = Path(tmp) / "large.docling.json"
        source.write_bytes(data)
        commands = {
            "richdoc_project": [
                str(richdoc),
                "project",
                str(source),
                "-o",
                str(Path(tmp) / "projection.json"),
            ],
            "chunker_process": [sys.executable, "-c", CHUNKER_PROCESS, str(source)],
        }
        samples: dict[str, list[Sample]] = {name: [] for name in commands}
        names = list(commands)
        for round_ in range(document.rounds):
            for name in names if round_ % 2 == 0 else reversed(names):
                samples[name].append(child(commands[name]))
    return ProcessRun(document, mb(len(data)), samples)


def run(mode: Mode, repeat: int | None = None) -> ItemResult:
    result = ItemResult("projection", "1. Projection against docling-core")
    runs = [measure(d) for d in documents(mode, repeat)]
    processes = measure_processes(process_document(mode, repeat))
    result.measurements["documents"] = [r.to_dict() for r in runs]
    result.measurements["processes"] = processes.to_dict()
    for r in runs:
        label = r.document.label
        result.targets += [
            Target(
                f"project_vs_chunker[{label}]",
                f"project() / HierarchicalChunker, {label}",
                r.project_vs_chunker["cpu"],
                PROJECT_VS_CHUNKER,
                "x",
                BASIS,
            ),
            Target(
                f"pipeline_vs_load[{label}]",
                f"load + project + serialize / bare load, {label}",
                r.pipeline_vs_load["cpu"],
                PIPELINE_VS_LOAD,
                "x",
                BASIS,
            ),
        ]
    label = processes.document.label
    result.targets.append(
        Target(
            f"process_vs_chunker_process[{label}]",
            f"richdoc project, whole process / load + HierarchicalChunker process, {label}",
            processes.process_vs_chunker["cpu"],
            PROCESS_VS_CHUNKER_PROCESS,
            "x",
            PROCESS_BASIS,
        )
    )
    result.tables.append(
        Table(
            "Medians per round (seconds)",
            ["document", "measurement", "CPU s", "wall s"],
            [
                [
                    r.document.label,
                    name,
                    median_s(r.samples[name])["cpu"],
                    median_s(r.samples[name])["wall"],
                ]
                for r in runs
                for name in MEASUREMENTS
            ],
        )
    )
    result.tables.append(
        Table(
            "Documents",
            [
                "document",
                "DoclingDocument JSON MB",
                "texts",
                "nodes",
                "spans",
                "chunks",
                "projection JSON MB",
            ],
            [
                [
                    r.document.label,
                    *(
                        r.shape[k]
                        for k in (
                            "docling_json_mb",
                            "texts",
                            "nodes",
                            "spans",
                            "chunks",
                            "projection_json_mb",
                        )
                    ),
                ]
                for r in runs
            ],
        )
    )
    result.tables.append(
        Table(
            "Whole processes (medians, seconds)",
            ["document", "process", "CPU s", "wall s"],
            [
                [label, name, median_s(values)["cpu"], median_s(values)["wall"]]
                for name, values in processes.samples.items()
            ],
        )
    )
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run, repeat="rounds per document"))
