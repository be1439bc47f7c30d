"""What ``richdoc run`` prints: its progress bar's labels and the results table (or
JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import count_text, print_table
from richdoc_tools.terminal import markup

if TYPE_CHECKING:
    from richdoc.jobs import Job, Progress
    from richdoc_tools.run import Counts, RunResult

RUN_COLUMNS = (
    "file",
    "job id",
    "status",
    "failure kind",
    "feature",
    "attempts",
    "tier",
    "shards",
    "ocr pages",
    "nodes",
    "edges",
    "spans",
    "ambiguities",
    "seconds",
)


def progress_label(job: Job) -> str:
    """A finished job on `richdoc run`'s progress bar (rich markup)."""
    return f"{markup(job.source.key)} {job.status}"


def open_jobs_label(progress: Sequence[Progress]) -> str:
    """What the jobs still open are doing, on `richdoc run`'s progress bar: how many in
    each phase (the shards finished of a sharded parse, when one is)."""
    counts: dict[str, int] = {}
    for seen in progress:
        label = seen.describe()
        counts[label] = counts.get(label, 0) + 1
    return " · ".join(label if n == 1 else f"{n} {label}" for label, n in sorted(counts.items()))


def ocr_pages_text(counts: Counts) -> str:
    """What OCR did to a document's pages without a text layer: ``2 read``, ``unread 3``
    (OcrMode off), both, or "-" for a document without such pages."""
    parts = []
    if counts.ocr_page_count:
        parts.append(f"{counts.ocr_page_count} read")
    if counts.unread_pages:
        parts.append(f"unread {','.join(str(page) for page in counts.unread_pages)}")
    return ", ".join(parts) or "-"


def unread_notes(results: Sequence[RunResult]) -> list[str]:
    """A line for each document with pages left unread: it succeeded without their text."""
    notes = []
    for r in results:
        unread = r.counts.unread_pages
        if unread:
            pages = ", ".join(str(page) for page in unread)
            notes.append(
                f"{r.key}: page(s) {pages} have no text layer and were not read (OcrMode "
                "off): their text is not in the results"
            )
    return notes


def run_results(results: Sequence[RunResult], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
        return
    rows: list[list[object]] = []
    for r in results:
        c = r.counts
        rows.append(
            [
                r.key,
                r.job_id[:12],  # a prefix `richdoc jobs show` accepts
                r.status,
                r.failure_kind,
                r.feature,
                len(r.attempts),
                r.tier,
                r.shards,
                ocr_pages_text(c),
                c.nodes,
                c.edges,
                c.spans,
                " ".join([count_text(c.ambiguities), *r.ambiguity_kinds]),
                r.seconds,
            ]
        )
    print_table(RUN_COLUMNS, rows, Console())
