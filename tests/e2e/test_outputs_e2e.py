"""A run of samples/ through the real state machine writes, beside each projection, the
document as Markdown and one CSV per table, with the projection's content: every word of
every block in document.md, every TABLE_ROW's cells in its table's CSV, one CSV per TABLE
node; `richdoc run --out` writes them, and the completion event and manifest name them."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.document_results import job_results_prefix, written_keys
from richdoc_client.projection import (
    ParagraphNode,
    Projection,
    SectionNode,
    TableNode,
    TableRowNode,
)
from richdoc_client.reader import ResultsReader
from richdoc_client.tables import read_table_csv, table_csv_name
from tests.support.paths import SAMPLES

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", unicodedata.normalize("NFC", text)))


def _rows(projection: Projection, table: TableNode) -> list[dict[str, str]]:
    nodes = {node.id: node for node in projection.nodes}
    return [
        row.props.cells
        for edge in sorted(projection.edges, key=lambda e: e.ord)
        if edge.src == table.id and isinstance(row := nodes[edge.dst], TableRowNode)
    ]


def test_a_run_of_the_samples_writes_markdown_and_csvs_with_the_projection_content(
    stack: Any, tmp_path: Path
) -> None:
    from richdoc_tools.run import run_files, write_outputs

    files = sorted(p for p in SAMPLES.iterdir() if p.is_file())
    results = run_files(stack, files, clarify=False, timeout_s=300)
    write_outputs(results, stack, tmp_path)
    reader = ResultsReader.s3(stack.outputs["ArtifactBucketName"], client=stack.client("s3"))
    succeeded = [r for r in results if r.status == "SUCCEEDED"]
    assert {r.key for r in succeeded} >= {"contract.docx", "inventory.xlsx", "team-notes.md"}
    tables_seen = 0
    for result in succeeded:
        folder = tmp_path / result.key
        projection = Projection.model_validate_json((folder / "projection.json").read_bytes())
        markdown = (folder / "document.md").read_text(encoding="utf-8")
        words = _words(markdown)
        for node in projection.nodes:
            if isinstance(node, SectionNode):
                assert _words(node.props.title) <= words, (result.key, node)
            elif isinstance(node, ParagraphNode):
                assert _words(node.props.text) <= words, (result.key, node)
            elif isinstance(node, TableRowNode):
                assert _words(" ".join(node.props.cells.values())) <= words, (result.key, node)
        tables = [n for n in projection.nodes if isinstance(n, TableNode)]
        written = sorted(p.name for p in (folder / "tables").glob("*.csv"))
        assert written == sorted(table_csv_name(t.id) for t in tables), result.key
        assert result.counts.tables == len(tables)
        for table in tables:
            csv = read_table_csv((folder / "tables" / table_csv_name(table.id)).read_bytes())
            assert csv.columns == table.props.columns
            assert csv.records() == _rows(projection, table)
            tables_seen += 1
        # The reader finds the same files where the run wrote them and where the
        # document's manifest names them (the copies kept with the document).
        job = stack.jobs.get(result.job_id)
        assert wait_until(stack.notifications_delivered, 60)
        manifest = reader.manifest_of(stack.outputs["IngestBucketName"], result.key)
        assert manifest.result is not None
        kept = manifest.result.outputs
        assert kept.markdown_key == f"{job_results_prefix(job)}run-001/document.md"
        for run in (written_keys(job, stack.outputs["ArtifactBucketName"]), kept):
            assert run is not None
            assert reader.markdown(run) == markdown
            assert [t.node for t in reader.tables(run)] == [t.id for t in tables]
    assert tables_seen >= 4  # the contract's, the sheet's, the notes' and the report's tables
    # The PDF report, read by the light pipeline here (no model hub): its headings are
    # sections with their levels, its table is keyed by its header, its paragraphs whole.
    report = Projection.model_validate_json(
        (tmp_path / "field-report.pdf" / "projection.json").read_bytes()
    )
    assert report.source.pipeline == "light"
    levels = [(n.props.title, n.props.level) for n in report.nodes if isinstance(n, SectionNode)]
    assert levels[:4] == [
        ("Field Report: Warehouse Audit", 1),
        ("1. Scope", 2),
        ("1.1 Loading bays", 3),
        ("2. Findings", 2),
    ]
    [table] = [n for n in report.nodes if isinstance(n, TableNode)]
    assert table.props.columns == ["Area", "Checked", "Issues", "Due"]
    assert any(
        "on the morning of the 3rd of June 2025 and ended" in n.props.text
        for n in report.nodes
        if isinstance(n, ParagraphNode)
    )
