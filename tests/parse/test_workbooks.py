"""Workbooks through the real parse worker, as a user's spreadsheet is parsed: each sheet
with content is a SECTION of the projection, its name the heading and the heading path of
its chunks; the Markdown heads each sheet and marks no page break between sheets; date
cells read as the ISO dates they show."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from docling_core.types.doc import DoclingDocument

from richdoc.markdown import PAGE_BREAK, render_markdown
from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
from richdoc.parse.step import parse_file, shared_worker
from richdoc.parse.workbook import cell_text, shows_time
from richdoc.projection import project, source_of
from richdoc_client.chunking import build_chunks
from richdoc_client.projection import NotProjected, SectionNode, TableRowNode

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

LIMITS = ParseLimits(max_pages=100, timeout_s=300, mem_ceiling_mb=4096)


def _workbook(path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    suppliers = book.active
    assert suppliers is not None
    suppliers.title = "Suppliers"
    suppliers.append(["Supplier", "Contract signed", "Amount"])
    suppliers.append(["Acme Corp", dt.date(2024, 3, 1), 1200])
    suppliers.append(["Beta LLC", dt.date(2024, 5, 2), 800])
    prices = book.create_sheet("Prices 2024")
    prices.append(["Item", "Price"])
    prices.append(["Pallet wrap", 12])
    book.create_sheet("Empty")
    hidden = book.create_sheet("Old rates")
    hidden.append(["Item", "Price"])
    hidden.append(["Pallet wrap", 9])
    hidden.sheet_state = "hidden"
    book.save(path)
    return path


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> DoclingDocument:
    folder = tmp_path_factory.mktemp("workbook")
    out = folder / "book.json"
    worker = shared_worker(ParserSettings(Pipeline.NATIVE), quiet=True)
    parse_file(_workbook(folder / "book.xlsx"), out, LIMITS, worker=worker)
    return DoclingDocument.model_validate_json(out.read_bytes())


def test_each_sheet_with_content_is_a_section_its_name_the_chunks_heading_path(
    parsed: DoclingDocument,
) -> None:
    projection = project(parsed, source_of(parsed))
    sections = [node for node in projection.nodes if isinstance(node, SectionNode)]
    # The empty sheet adds nothing; the hidden one is hidden, its heading too.
    assert [(s.props.title, s.props.level) for s in sections] == [
        ("Suppliers", 1),
        ("Prices 2024", 1),
    ]
    chunks = build_chunks(projection, document_id="0" * 32)
    rows = {
        chunk.text.rsplit("\n\n", 1)[-1]: chunk.heading_path
        for chunk in chunks
        if chunk.table is not None
    }
    assert rows == {
        "Supplier: Beta LLC | Contract signed: 2024-05-02 | Amount: 800": ["Suppliers"],
        "Item: Pallet wrap | Price: 12": ["Prices 2024"],
    }
    # The hidden sheet's heading and table are counted as hidden, not projected.
    assert projection.stats.not_projected[NotProjected.INVISIBLE] == 2


def test_date_cells_read_as_the_iso_dates_they_show(parsed: DoclingDocument) -> None:
    projection = project(parsed, source_of(parsed))
    signed = [
        node.props.cells["Contract signed"]
        for node in projection.nodes
        if isinstance(node, TableRowNode) and "Contract signed" in node.props.cells
    ]
    assert signed == ["2024-03-01", "2024-05-02"]  # not "2024-03-01 00:00:00"


def test_a_workbooks_markdown_heads_each_sheet_and_marks_no_page_break(
    parsed: DoclingDocument,
) -> None:
    markdown = render_markdown(parsed).decode()
    assert PAGE_BREAK not in markdown
    assert markdown.index("## Suppliers") < markdown.index("Acme Corp")
    assert markdown.index("Beta LLC") < markdown.index("## Prices 2024")
    assert markdown.index("## Prices 2024") < markdown.index("Pallet wrap")
    assert "Empty" not in markdown and "2024-03-01 00:00:00" not in markdown


@pytest.mark.parametrize(
    ("value", "number_format", "text"),
    [
        (dt.datetime(2024, 3, 1), "yyyy-mm-dd", "2024-03-01"),
        (dt.datetime(2024, 3, 1), "mm-dd-yy", "2024-03-01"),
        (dt.datetime(2024, 3, 1, 14, 30), "d/m/yyyy", "2024-03-01"),  # shows the date only
        (dt.datetime(2024, 3, 1, 14, 30), "yyyy-mm-dd hh:mm", "2024-03-01T14:30:00"),
        (dt.datetime(2024, 3, 1, 14, 30, 5), "DD.MM.YYYY HH:MM:SS", "2024-03-01T14:30:05"),
        (dt.datetime(2024, 3, 1), '"Signed "yyyy-mm-dd', "2024-03-01"),  # quoted text
        (dt.date(2024, 3, 1), "yyyy-mm-dd", "2024-03-01"),
        (dt.time(9, 15), "h:mm", "09:15:00"),
        (1200, "General", None),
        ("2024-03-01 00:00:00", "@", None),  # text is text
    ],
)
def test_a_cell_value_reads_as_iso_by_what_its_format_shows(value, number_format, text) -> None:
    assert cell_text(value, number_format) == text


def test_a_format_shows_the_time_only_with_hours_or_seconds() -> None:
    assert [shows_time(f) for f in ("yyyy-mm-dd", "mmm yyyy", "[Red]d/m/yy", None)] == [
        False,
        False,
        False,
        False,
    ]
    assert [shows_time(f) for f in ("h:mm", "yyyy-mm-dd hh:mm", "[h]:mm:ss")] == [True] * 3
