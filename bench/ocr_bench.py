"""Item 13, ocr: what OCR of a page without a text layer reads, and what it costs
(docs/parse.md, "OCR").

* Accuracy: the character error rate (edit distance over the length of the known text,
  whitespace runs counted as one space) of pages this suite scans itself
  (``tests.support.scans``: known English text typeset by reportlab, rendered by pdfium
  at 150, 200 and 300 dpi, clean and degraded with 2 % noise and a 1 degree skew, stored
  as image-only PDFs), read through the parse worker exactly as the parse step reads them
  (the native pipeline, docling's RapidOCR stage on the bundled PP-OCRv6 models, full
  page). Target: CER <= 2 % on clean 200-dpi print. Real scans with their known text
  are read from ``bench/data/ocr/`` (its README names each file's source and licence:
  Tesseract's own test scan).
* Cost: seconds and child peak RSS per OCR page at one and two onnxruntime threads (a
  3,008 or 4,096 MB parse tier buys 1.7 or 2.3 vCPUs), against a text page of the same
  document type; a scanned PDF through ``richdoc run`` on the embedded stack whole
  against sharded (``ShardPages`` small enough to split it); and the dollars per 1,000
  OCR pages at tier 1 (Lambda's GB-second price times the measured seconds) beside
  Textract DetectDocumentText's published price per 1,000 pages.

    python -m bench.ocr_bench [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from richdoc.parse.reports import ParseReport
    from richdoc.parse.step import ParseWorker

if __package__ in (None, ""):  # run as a file: python bench/ocr_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ROOT, ItemResult, Mode, Table, Target, fmt, item_main

CER_TARGET = 0.02
REAL_SCANS = ROOT / "bench" / "data" / "ocr"
TIER_1_MB = 4096

# Known text: plain English of the kind the detector reads (dates, parties, amounts),
# wrapped to lines of a printed page.
PARAGRAPHS = (
    "This Services Agreement is effective as of March 1, 2024 and is made between Acme "
    "Corporation, a Delaware corporation, and Beta Logistics LLC. Beta Logistics provides "
    "the warehousing and delivery services described in Schedule A, at the prices listed "
    "in Schedule B, for an initial term of twenty-four months.",
    "Invoices are issued on the first business day of each month and are payable within "
    "thirty days. Late payments bear interest at 1.5 percent per month. Either party may "
    "terminate this Agreement with sixty days written notice to the other party.",
    "The parties signed this Agreement on February 14, 2025. Notices go to 1200 Harbor "
    "Street, Suite 400, Oakland, CA 94607, or to any other address a party gives in "
    "writing. Amendments are valid only when signed by both parties.",
)
LINES_PER_PAGE = 24


@dataclass(frozen=True)
class Condition:
    dpi: int
    noise: float
    skew: float

    @property
    def label(self) -> str:
        degraded = f", noise {self.noise:.0%}, skew {self.skew:g} deg" if self.noise else ", clean"
        return f"{self.dpi} dpi{degraded}"


def known_pages(pages: int) -> list[list[str]]:
    lines = [line for p in PARAGRAPHS for line in textwrap.wrap(p, 78)]
    text = (lines * (pages * LINES_PER_PAGE // len(lines) + 1))[: pages * LINES_PER_PAGE]
    return [text[i : i + LINES_PER_PAGE] for i in range(0, len(text), LINES_PER_PAGE)]


def normalized(text: str) -> str:
    return " ".join(text.split())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), one row at a time."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(truth: str, read: str) -> float:
    truth, read = normalized(truth), normalized(read)
    return edit_distance(truth, read) / max(1, len(truth))


def page_texts(docling_json: bytes) -> dict[int, str]:
    """The text items of a DoclingDocument joined per page, in reading order."""
    from docling_core.types.doc import DoclingDocument, TextItem

    doc = DoclingDocument.model_validate_json(docling_json)
    pages: dict[int, list[str]] = {}
    for item, _ in doc.iterate_items():
        if isinstance(item, TextItem) and item.prov:
            pages.setdefault(item.prov[0].page_no, []).append(item.text)
    return {page: " ".join(texts) for page, texts in pages.items()}


def _worker() -> ParseWorker:
    from richdoc.parse.ocr.mode import OcrMode
    from richdoc.parse.settings import ParserSettings, Pipeline
    from richdoc.parse.step import ParseWorker

    return ParseWorker(ParserSettings(Pipeline.NATIVE, ocr_mode=OcrMode.AUTO), quiet=True)


def _parse(worker: ParseWorker, path: Path) -> tuple[ParseReport, bytes]:
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file

    limits = ParseLimits(max_pages=2000, timeout_s=1800, mem_ceiling_mb=8192)
    out = path.with_suffix(".json")
    report = parse_file(path, out, limits, worker=worker)
    return report, out.read_bytes()


# ---- accuracy -------------------------------------------------------------------------


def accuracy(mode: Mode, work: Path, result: ItemResult) -> None:
    from tests.support import scans

    pages = known_pages(1 if mode is Mode.QUICK else 2)
    conditions = [Condition(200, 0.0, 0.0)]
    if mode is Mode.FULL:
        conditions = [
            Condition(dpi, noise, skew)
            for dpi in (150, 200, 300)
            for noise, skew in ((0.0, 0.0), (0.02, 1.0))
        ]
    worker = _worker()
    rows, measured = [], {}
    try:
        for condition in conditions:
            path = work / f"known-{condition.dpi}-{condition.noise}.pdf"
            path.write_bytes(
                scans.scanned_pdf(
                    pages, dpi=condition.dpi, noise=condition.noise, skew=condition.skew
                )
            )
            report, data = _parse(worker, path)
            read = page_texts(data)
            rates = [cer(" ".join(lines), read.get(n, "")) for n, lines in enumerate(pages, 1)]
            rate = statistics.fmean(rates)
            measured[condition.label] = {"cer": round(rate, 4), "pages": len(pages)}
            rows.append([condition.label, len(pages), f"{rate:.2%}", fmt(report.timings.convert_s)])
        real = [p for p in sorted(REAL_SCANS.glob("*")) if p.suffix in (".pdf", ".tif", ".png")]
        for scan in real:
            truth = scan.with_suffix(".txt").read_text(encoding="utf-8")
            report, data = _parse(worker, scan)
            rate = cer(truth, " ".join(page_texts(data).values()))
            measured[scan.name] = {"cer": round(rate, 4), "pages": report.page_count}
            rows.append(
                [
                    f"{scan.name} (real scan)",
                    report.page_count,
                    f"{rate:.2%}",
                    fmt(report.timings.convert_s),
                ]
            )
    finally:
        worker.close()
    result.measurements["accuracy"] = measured
    result.tables.append(
        Table(
            "Character error rate against the known text",
            ["scan", "pages", "CER", "convert s"],
            rows,
        )
    )
    clean = measured[Condition(200, 0.0, 0.0).label]["cer"]
    result.targets.append(
        Target(
            "ocr_cer_clean_200dpi",
            "CER of clean 200-dpi print (RapidOCR PP-OCRv6 through docling, full page)",
            clean,
            CER_TARGET,
            "x",
            f"{len(pages)} pages of known text scanned by the suite, edit distance / length",
        )
    )


# ---- cost -----------------------------------------------------------------------------


def cost_per_page(mode: Mode, work: Path, result: ItemResult) -> float:
    """Seconds a page and the child's peak RSS, scanned against typeset, with the worker
    pinned to one core and to two (it gives a conversion the CPUs it may run on); returns
    the seconds of an OCR page on two (tier 1's 2.3 vCPUs)."""
    from tests.support import scans

    count = 2 if mode is Mode.QUICK else 10
    pages = known_pages(count)
    scanned, typeset = work / "cost-scan.pdf", work / "cost-text.pdf"
    scanned.write_bytes(scans.scanned_pdf(pages))
    typeset.write_bytes(scans.typeset(pages))
    every_cpu = os.sched_getaffinity(0)
    rows: list[list[Any]] = []
    seconds: dict[tuple[str, int], float] = {}
    for cpus in (1, 2):
        # Before the worker starts: its zygote and children inherit the affinity.
        os.sched_setaffinity(0, set(sorted(every_cpu)[:cpus]))
        worker = _worker()
        try:
            for name, path in (("scanned", scanned), ("text", typeset)):
                report, _ = _parse(worker, path)
                per_page = report.timings.convert_s / count
                seconds[(name, cpus)] = per_page
                rows.append([name, cpus, count, fmt(per_page), fmt(report.peak_rss_mb or 0)])
        finally:
            worker.close()
            os.sched_setaffinity(0, every_cpu)
    result.measurements["per_page_s"] = {f"{k[0]}@{k[1]}": round(v, 3) for k, v in seconds.items()}
    result.measurements["ocr_to_text_page"] = round(
        seconds[("scanned", 2)] / seconds[("text", 2)], 1
    )
    result.tables.append(
        Table(
            "Seconds per page and child peak RSS (native pipeline; OCR pages read full-page)",
            ["pages", "CPUs", "count", "s / page", "peak RSS MB"],
            rows,
        )
    )
    return seconds[("scanned", 2)]


def whole_against_sharded(mode: Mode, work: Path, result: ItemResult) -> None:
    """A scanned PDF through ``richdoc run`` on the embedded stack, whole
    (``RICHDOC_SHARD_PAGES=0``) against sharded, the artifact cache emptied before each
    (bench item shards' runs)."""
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack

    from bench.e2e_bench import Clock
    from bench.shards_bench import one_run
    from tests.support import scans

    count = 2 if mode is Mode.QUICK else 50
    # A scanned page costs 3 text pages: shards of 10 pages (1 in the quick run).
    shard_pages = 3 if mode is Mode.QUICK else 30
    path = work / f"scan-{count}.pdf"
    path.write_bytes(scans.scanned_pdf(known_pages(count)))
    rows = []
    timings = {}
    with EmbeddedStack(StackSettings(log_path=work / "functions.log")) as stack:
        clock = Clock()
        for variant in ("sharded", "whole"):
            done = one_run(stack, path, variant, clock, shard_pages=shard_pages)
            timings[variant] = done.wall
            rows.append(
                [variant, count, done.shards, fmt(done.wall), fmt(done.steps.get("shard_max", 0))]
            )
    result.measurements["scan_whole_vs_sharded_s"] = {k: round(v, 1) for k, v in timings.items()}
    result.measurements["scan_sharded_to_whole"] = round(timings["sharded"] / timings["whole"], 3)
    result.tables.append(
        Table(
            f"A {count}-page scanned PDF through richdoc run (embedded stack, 2 cores, one parse "
            "per core): sharded against whole",
            ["run", "pages", "shards", "wall s", "slowest shard s"],
            rows,
        )
    )


def dollars(seconds_per_page: float, result: ItemResult) -> None:
    from bench.cost import MANAGED, PRICES

    gb_s = seconds_per_page * TIER_1_MB / 1024
    usd = gb_s * PRICES["lambda_gb_s"].usd * 1000
    textract = next(m for m in MANAGED if "DetectDocumentText" in m.name)
    result.measurements["usd_per_1000_ocr_pages"] = round(usd, 3)
    result.tables.append(
        Table(
            "Dollars per 1,000 OCR pages (Lambda compute of the parse at tier 1, us-east-1, x86)",
            ["what", "$ / 1,000 pages", "basis"],
            [
                [
                    "richdoc OCR, tier 1",
                    round(usd, 3),
                    f"{seconds_per_page:.2f} s a page x {TIER_1_MB} MB",
                ],
                [textract.name, textract.usd, f"published price ({textract.status})"],
            ],
        )
    )


def run(mode: Mode) -> ItemResult:
    result = ItemResult("ocr", "OCR of pages without a text layer: accuracy and cost")
    with tempfile.TemporaryDirectory(prefix="richdoc-ocr-bench-") as tmp:
        work = Path(tmp)
        accuracy(mode, work, result)
        seconds = cost_per_page(mode, work, result)
        dollars(seconds, result)
        whole_against_sharded(mode, work, result)
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run))
