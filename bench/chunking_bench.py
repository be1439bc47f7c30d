"""Item 10, retrieval chunks: ``richdoc_client.chunking.build_chunks`` against docling-core's
``HierarchicalChunker`` on the same documents.

Uses the projection item's documents (``bench.projection_bench.documents``: 2,000
paragraphs and 50 tables, and a 10x larger one, built deterministically), loads each
once, projects it once, then times, round-robin:

* ``chunker``: ``HierarchicalChunker().chunk(doc)`` over the loaded DoclingDocument,
  every chunk materialized (the reference: what an application would run on docling's
  output itself);
* ``chunks``: ``build_chunks(projection)`` at the default size limit, and
  ``chunks_jsonl`` of the result (what the pipeline adds per run);
* ``project_and_chunks``: ``project()`` then the same, from the loaded document (both
  steps a consumer of the DoclingDocument would need to get these chunks).

Target: ``chunks`` at most 0.5x the chunker, on CPU time (all in this process). It also
reports both chunkers' counts and sizes (UTF-8 bytes of chunk text) on these documents
and on the converted golden documents: the chunker makes one chunk per text item and
per table with no size limit; these chunks gather a section's blocks up to the limit.

    python -m bench.chunking_bench [--repeat N] [--quick]
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/chunking_bench.py
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
    median_s,
    ratio,
)
from bench.projection_bench import Document, documents

CHUNKS_VS_CHUNKER = 0.5
BASIS = "CPU time, median of the per-round ratios (all in this process)"
DOCUMENT_ID = "0" * 32
# The converted documents of the golden corpus (real DOCX, HTML, Markdown, PPTX, PDF).
GOLDEN_CONVERTED = ("docx_real", "html_real", "md_real", "pptx_real", "pdf_native")


def sizes(texts: list[str]) -> dict[str, float | int]:
    lengths = [len(text.encode("utf-8")) for text in texts] or [0]
    return {
        "count": len(texts),
        "mean_bytes": round(statistics.mean(lengths), 1),
        "max_bytes": max(lengths),
    }


@dataclass(frozen=True)
class Run:
    document: Document
    samples: dict[str, list[Sample]]
    ours: dict[str, float | int]
    theirs: dict[str, float | int]

    @property
    def chunks_vs_chunker(self) -> dict[str, float]:
        return ratio(self.samples["chunks"], self.samples["chunker"])

    @property
    def project_and_chunks_vs_chunker(self) -> dict[str, float]:
        return ratio(self.samples["project_and_chunks"], self.samples["chunker"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.document.label,
            "rounds": self.document.rounds,
            "median_s": {name: median_s(values) for name, values in self.samples.items()},
            "ratios": {
                "chunks_vs_chunker": self.chunks_vs_chunker,
                "project_and_chunks_vs_chunker": self.project_and_chunks_vs_chunker,
            },
            "richdoc_chunks": self.ours,
            "hierarchical_chunker": self.theirs,
        }


def measure(document: Document) -> Run:
    from docling_core.transforms.chunker.hierarchical_chunker import HierarchicalChunker
    from docling_core.types.doc import DoclingDocument

    from richdoc.projection import project
    from richdoc_client.chunking import build_chunks, chunks_jsonl
    from richdoc_client.projection import ProjectionSource
    from tests.support.gen_fixtures import build_large_document

    data = build_large_document(document.paragraphs, document.tables).model_dump_json().encode()
    doc = DoclingDocument.model_validate_json(data)
    source = ProjectionSource(name="large.docling.json")
    projection = project(doc, source)
    ours = build_chunks(projection, document_id=DOCUMENT_ID)
    theirs = list(HierarchicalChunker().chunk(doc))
    samples = interleaved(
        {
            "chunker": lambda: list(HierarchicalChunker().chunk(doc)),
            "chunks": lambda: chunks_jsonl(build_chunks(projection, document_id=DOCUMENT_ID)),
            "project_and_chunks": lambda: chunks_jsonl(
                build_chunks(project(doc, source), document_id=DOCUMENT_ID)
            ),
        },
        document.rounds,
        collect=True,
    )
    return Run(document, samples, sizes([c.text for c in ours]), sizes([c.text for c in theirs]))


def golden_counts() -> list[list[Any]]:
    """Per converted golden document: chunk count and mean bytes, ours and the chunker's."""
    from docling_core.transforms.chunker.hierarchical_chunker import HierarchicalChunker

    from richdoc.projection import load_docling
    from richdoc_client.chunking import build_chunks
    from richdoc_client.projection import Projection
    from tests.support.gen_fixtures import GOLDEN

    rows = []
    for name in GOLDEN_CONVERTED:
        doc = load_docling((GOLDEN / name / "docling.json").read_bytes())
        projection = Projection.model_validate_json(
            (GOLDEN / name / "projection.json").read_bytes()
        )
        ours = sizes([c.text for c in build_chunks(projection, document_id=DOCUMENT_ID)])
        theirs = sizes([c.text for c in HierarchicalChunker().chunk(doc)])
        rows.append(
            [name, ours["count"], ours["mean_bytes"], theirs["count"], theirs["mean_bytes"]]
        )
    return rows


def run(mode: Mode, repeat: int | None = None) -> ItemResult:
    result = ItemResult("chunking", "10. Retrieval chunks against docling-core's chunker")
    runs = [measure(d) for d in documents(mode, repeat)]
    result.measurements["documents"] = [r.to_dict() for r in runs]
    for r in runs:
        label = r.document.label
        result.targets.append(
            Target(
                f"chunks_vs_chunker[{label}]",
                f"build_chunks() + chunks_jsonl / HierarchicalChunker, {label}",
                r.chunks_vs_chunker["cpu"],
                CHUNKS_VS_CHUNKER,
                "x",
                BASIS,
            )
        )
    result.tables.append(
        Table(
            "Medians per round (seconds) and ratios to the chunker (CPU)",
            [
                "document",
                "chunker CPU s",
                "chunks CPU s",
                "project + chunks CPU s",
                "chunks / chunker",
                "project + chunks / chunker",
            ],
            [
                [
                    r.document.label,
                    median_s(r.samples["chunker"])["cpu"],
                    median_s(r.samples["chunks"])["cpu"],
                    median_s(r.samples["project_and_chunks"])["cpu"],
                    r.chunks_vs_chunker["cpu"],
                    r.project_and_chunks_vs_chunker["cpu"],
                ]
                for r in runs
            ],
        )
    )
    result.tables.append(
        Table(
            "Chunks made (sizes in UTF-8 bytes of chunk text)",
            [
                "document",
                "richdoc chunks",
                "mean",
                "max",
                "HierarchicalChunker chunks",
                "mean",
                "max",
            ],
            [
                [
                    r.document.label,
                    *(r.ours[k] for k in ("count", "mean_bytes", "max_bytes")),
                    *(r.theirs[k] for k in ("count", "mean_bytes", "max_bytes")),
                ]
                for r in runs
            ],
        )
    )
    golden = golden_counts()
    result.measurements["golden"] = golden
    result.tables.append(
        Table(
            "Converted golden documents",
            ["fixture", "richdoc chunks", "mean bytes", "HierarchicalChunker chunks", "mean bytes"],
            golden,
        )
    )
    result.notes.append(
        "HierarchicalChunker has no size limit: one chunk per text item, one per table; "
        "build_chunks gathers a section's blocks up to 2,048 bytes and cuts bigger blocks"
    )
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run, repeat="rounds per document"))
