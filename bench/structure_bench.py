"""Item ``structure``: what each PDF pipeline reads of a document's structure, against
docling's own reference outputs, and what it costs a page.

Each pipeline (native: text lines, no models; light: CDLA layout and SLANet-plus tables
from their wheels; standard: docling's heron and TableFormer, here on synthesised random
weights, so its quality figures measure plumbing only) parses the development PDFs
through the isolated worker as the parse step does (OCR on the pages without a text
layer, two threads on two cores), and each result is scored against the
DoclingDocument docling made of the same PDF with its trained models
(``bench.structure_metrics``): heading recall and precision, tables found and matched,
TEDS and cell-text recall of the matched tables, body-text word edit distance, the
documents whose body text was lost (to a figure); and the child's CPU seconds a page
and peak resident set.

The development PDFs: the three committed with the project (``tests/data/docling_pdfs``),
and, when ``RICHDOC_DOCLING_TESTS`` names a checkout of docling's repository, every other
PDF of its ``tests/data/pdf/sources`` that has a reference in ``.../groundtruth`` except
the three reserved for evaluation (never read here).

Targets (light pipeline): heading recall >= 0.8 at precision >= 0.9, tables matched >=
0.8 with mean TEDS >= 0.8, cell-text recall >= 0.75, word edit distance <= 0.08, CPU
<= 0.6 s a page, no document whose body text is lost.

    python -m bench.structure_bench [--quick]
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/structure_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ROOT, ItemResult, Mode, Table, Target, fmt, item_main
from bench.structure_metrics import Scores, score

COMMITTED = ROOT / "tests" / "data" / "docling_pdfs"
DOCLING_TESTS_ENV = "RICHDOC_DOCLING_TESTS"
# docling's test PDFs kept for evaluating the pipelines: never read by the benchmark.
RESERVED = frozenset({"redp5110_sampled", "multi_page", "2305.03393v1-pg9"})
PIPELINES = ("native", "light", "standard")

HEADING_RECALL, HEADING_PRECISION = 0.8, 0.9
TABLES_MATCHED, TEDS = 0.8, 0.8
CELL_RECALL, WORD_DISTANCE = 0.75, 0.08
CPU_PER_PAGE = 0.6


@dataclass(frozen=True)
class Development:
    """One development PDF and docling's reference DoclingDocument of it."""

    name: str
    pdf: Path
    reference: Path


def development_pdfs(mode: Mode) -> list[Development]:
    """The committed PDFs, and those of a docling checkout when one is named (none of the
    reserved ones); one in a quick run."""
    found = {
        path.stem: Development(path.stem, path, path.with_suffix(".json"))
        for path in sorted(COMMITTED.glob("*.pdf"))
    }
    checkout = os.environ.get(DOCLING_TESTS_ENV)
    if checkout and mode is Mode.FULL:
        data = Path(checkout) / "tests" / "data" / "pdf"
        for pdf in sorted((data / "sources").glob("*.pdf")):
            reference = data / "groundtruth" / f"{pdf.stem}.json"
            if pdf.stem in RESERVED or pdf.stem in found or not reference.is_file():
                continue
            found[pdf.stem] = Development(pdf.stem, pdf, reference)
    documents = sorted(found.values(), key=lambda d: d.name)
    return documents[:1] if mode is Mode.QUICK else documents


@dataclass
class Run:
    """A pipeline's results over the development PDFs."""

    scores: Scores
    per_document: list[tuple[str, Scores, int, float, float]]  # name, scores, pages, CPU, RSS

    @property
    def pages(self) -> int:
        return sum(pages for _, _, pages, _, _ in self.per_document)

    @property
    def cpu_per_page(self) -> float:
        return sum(cpu for *_, cpu, _ in self.per_document) / max(1, self.pages)

    @property
    def peak_rss_mb(self) -> float:
        return max((rss for *_, rss in self.per_document), default=0.0)


def _settings(pipeline: str, work: Path) -> Any:
    from richdoc.parse.settings import ParserSettings, Pipeline

    if pipeline == "standard":
        from richdoc_tools.weights import cached

        from bench.standard_pipeline import WEIGHTS_CACHE

        return ParserSettings(Pipeline.STANDARD, str(cached(WEIGHTS_CACHE)))
    return ParserSettings(Pipeline(pipeline))


def run_pipeline(pipeline: str, documents: list[Development], work: Path) -> Run:
    """Parse every document through a worker of ``pipeline`` and score it."""
    from docling_core.types.doc import DoclingDocument

    from richdoc.formats import DocFormat
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import ParseWorker, staged_path

    limits = ParseLimits(max_pages=2000, timeout_s=1800.0, mem_ceiling_mb=8192)
    worker = ParseWorker(_settings(pipeline, work), quiet=True)
    total = Scores()
    per_document = []
    try:
        for document in documents:
            folder = work / pipeline / document.name
            folder.mkdir(parents=True)
            staged = staged_path(folder, DocFormat.PDF)
            staged.symlink_to(document.pdf.resolve())
            out = folder / "docling.json"
            report, outcome = worker.convert(
                staged, DocFormat.PDF, out, limits, accept_partial=True
            )
            candidate = DoclingDocument.model_validate_json(out.read_bytes())
            reference = DoclingDocument.model_validate_json(document.reference.read_bytes())
            scores = score(document.name, reference, candidate)
            total.add(scores)
            per_document.append(
                (document.name, scores, report.page_count or 0, outcome.cpu_s, outcome.peak_rss_mb)
            )
    finally:
        worker.close()
    return Run(total, per_document)


def _row(name: str, scores: Scores, *rest: Any) -> list[Any]:
    return [
        name,
        f"{scores.matched_headings}/{scores.ref_headings} ({scores.found_headings} found)",
        fmt(scores.heading_recall),
        fmt(scores.heading_precision),
        f"{scores.matched_tables}/{scores.ref_tables} ({scores.found_tables} found)",
        fmt(scores.mean_teds),
        fmt(scores.cell_recall),
        fmt(scores.word_distance),
        *rest,
    ]


HEADERS = [
    "headings matched",
    "recall",
    "precision",
    "tables matched",
    "TEDS",
    "cell-text recall",
    "word distance",
]


def run(mode: Mode) -> ItemResult:
    result = ItemResult("structure", "PDF structure: each pipeline against docling's references")
    documents = development_pdfs(mode)
    runs: dict[str, Run] = {}
    with tempfile.TemporaryDirectory(prefix="richdoc-structure-") as tmp:
        for pipeline in PIPELINES if mode is Mode.FULL else ("light",):
            runs[pipeline] = run_pipeline(pipeline, documents, Path(tmp))
    result.tables.append(
        Table(
            f"Per pipeline, over {len(documents)} development PDFs "
            f"({sum(1 for _ in documents)} documents, {runs['light'].pages} pages)",
            ["pipeline", *HEADERS, "CPU s a page", "peak RSS MB", "lost"],
            [
                _row(
                    name,
                    r.scores,
                    fmt(r.cpu_per_page),
                    fmt(r.peak_rss_mb),
                    ", ".join(r.scores.lost) or "none",
                )
                for name, r in runs.items()
            ],
        )
    )
    light = runs["light"]
    result.tables.append(
        Table(
            "Light pipeline, per document",
            ["document", *HEADERS, "pages", "CPU s", "peak RSS MB"],
            [
                _row(name, scores, pages, fmt(cpu), fmt(rss))
                for name, scores, pages, cpu, rss in light.per_document
            ],
        )
    )
    result.measurements = {
        name: {
            "documents": [name for name, *_ in r.per_document],
            "pages": r.pages,
            "heading_recall": r.scores.heading_recall,
            "heading_precision": r.scores.heading_precision,
            "tables_matched": r.scores.tables_matched,
            "teds": r.scores.mean_teds,
            "cell_recall": r.scores.cell_recall,
            "word_distance": r.scores.word_distance,
            "lost": r.scores.lost,
            "cpu_s_per_page": round(r.cpu_per_page, 3),
            "peak_rss_mb": round(r.peak_rss_mb, 1),
        }
        for name, r in runs.items()
    }
    s = light.scores
    basis = f"light pipeline over {len(documents)} development PDFs, {light.pages} pages"
    candidates = [
        ("heading_recall", "heading recall", s.heading_recall, HEADING_RECALL),
        ("heading_precision", "heading precision", s.heading_precision, HEADING_PRECISION),
        ("tables_matched", "reference tables matched", s.tables_matched, TABLES_MATCHED),
        ("table_teds", "mean TEDS (structure) of the matched tables", s.mean_teds, TEDS),
        ("cell_recall", "table-cell text recall", s.cell_recall, CELL_RECALL),
    ]
    for target_id, description, measured, limit in candidates:
        if measured is not None:
            result.targets.append(
                Target(
                    f"structure_{target_id}",
                    description,
                    round(measured, 3),
                    limit,
                    "x",
                    basis,
                    at_least=True,
                )
            )
    if s.word_distance is not None:
        result.targets.append(
            Target(
                "structure_word_distance",
                "body-text word edit distance (mean over documents)",
                round(s.word_distance, 3),
                WORD_DISTANCE,
                "x",
                basis,
            )
        )
    result.targets.append(
        Target(
            "structure_cpu_per_page",
            "the parse child's CPU seconds a page (2 threads)",
            round(light.cpu_per_page, 3),
            CPU_PER_PAGE,
            "s",
            basis,
        )
    )
    result.targets.append(
        Target(
            "structure_lost", "documents whose body text is lost", len(s.lost), 0, "count", basis
        )
    )
    checkout = os.environ.get(DOCLING_TESTS_ENV)
    result.notes.append(
        "Documents: "
        + ", ".join(d.name for d in documents)
        + "; "
        + (
            f"the committed ones and those of the docling checkout at {checkout}"
            if checkout
            else f"the committed ones only (set {DOCLING_TESTS_ENV} to a docling checkout "
            "for the rest of the development set)"
        )
        + ". The standard pipeline runs on synthesised random weights: its quality figures "
        "are not docling's."
    )
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run))
