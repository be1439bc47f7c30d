"""The run's Markdown (richdoc.markdown) and its tables as CSV (richdoc_client.tables): the
golden files of the golden corpus, byte for byte; CSVs that read back to the projection's
cells; RFC 4180 quoting; Markdown that holds every block the projection has, with page
breaks marked."""

from __future__ import annotations

import html
import re
import unicodedata

import pytest
from docling_core.types.doc import DocItemLabel
from hypothesis import given
from hypothesis import strategies as st

from richdoc.markdown import PAGE_BREAK, render_markdown
from richdoc.projection import load_docling
from richdoc_client.projection import (
    ParagraphNode,
    SectionNode,
    TableNode,
    TableRowNode,
)
from richdoc_client.tables import (
    read_table_csv,
    table_csv,
    table_csv_name,
    table_csvs,
    table_node_of,
)
from tests.support.gen_fixtures import GOLDEN, OCR_CONVERTED
from tests.support.outline_projection import Paragraph, Table, outline
from tests.support.output_goldens import (
    MARKDOWN,
    committed_tables,
    fixtures,
    markdown,
    projection,
    tables,
)

FIXTURES = fixtures()


@pytest.mark.parametrize("name", FIXTURES)
def test_golden_markdown_is_byte_stable(name: str) -> None:
    assert markdown(name) == (GOLDEN / name / MARKDOWN).read_bytes()


@pytest.mark.parametrize("name", FIXTURES)
def test_golden_table_csvs_are_byte_stable(name: str) -> None:
    assert tables(name) == committed_tables(name)


def test_the_corpus_has_tables_to_check() -> None:
    assert sum(len(tables(name)) for name in FIXTURES) >= 8


@pytest.mark.parametrize("name", FIXTURES)
def test_each_table_csv_reads_back_to_the_projection_cells(name: str) -> None:
    graph = projection(name)
    nodes = {node.id: node for node in graph.nodes}
    csvs = table_csvs(graph)
    assert list(csvs) == [node.id for node in graph.nodes if isinstance(node, TableNode)]
    for node_id, data in csvs.items():
        table = nodes[node_id]
        assert isinstance(table, TableNode)
        rows = [
            row.props.cells
            for edge in sorted(graph.edges, key=lambda e: e.ord)
            if edge.src == node_id and isinstance(row := nodes[edge.dst], TableRowNode)
        ]
        read = read_table_csv(data)
        assert read.columns == table.props.columns
        assert read.records() == rows
        assert data.endswith(b"\r\n") and not data.startswith(b"\xef\xbb\xbf")


def test_csv_quotes_as_rfc_4180_says() -> None:
    data = table_csv(
        ["Item", 'Size "L"', "Note"],
        [
            {"Item": "Tea, green", 'Size "L"': "3.50", "Note": "line one\nline two"},
            {"Item": "Café", 'Size "L"': "", "Note": "plain"},
        ],
    )
    assert (
        data
        == (
            'Item,"Size ""L""",Note\r\n"Tea, green",3.50,"line one\nline two"\r\nCafé,,plain\r\n'
        ).encode()
    )


def test_a_table_whose_rows_were_all_dropped_is_its_header_line() -> None:
    graph = outline(Paragraph("before"), Table(("a", "b"), ()))
    assert list(table_csvs(graph).values()) == [b"a,b\r\n"]


cell = st.text(st.characters(codec="utf-8"), max_size=12)


@given(
    st.lists(cell, min_size=1, max_size=4, unique=True).flatmap(
        lambda columns: st.tuples(
            st.just(columns),
            st.lists(st.lists(cell, min_size=len(columns), max_size=len(columns)), max_size=5),
        )
    )
)
def test_any_cells_read_back_unchanged(table: tuple[list[str], list[list[str]]]) -> None:
    columns, rows = table
    records = [dict(zip(columns, row, strict=True)) for row in rows]
    read = read_table_csv(table_csv(columns, records))
    assert (read.columns, read.rows) == (columns, rows)


def test_a_csv_name_says_its_table_node() -> None:
    assert table_csv_name(12) == "table-12.csv"
    assert table_node_of("jobs/j/run-001/tables/table-12.csv") == 12
    assert [table_node_of(n) for n in ("table-012.csv", "table-1.csv.bak", "x.csv")] == [
        None,
        None,
        None,
    ]


def _words(text: str) -> set[str]:
    """The words of a text (NFC, as the projection normalises), whatever the Markdown
    around them: emphasis, links, escapes and table pipes are not words."""
    return set(re.findall(r"\w+", unicodedata.normalize("NFC", html.unescape(text))))


@pytest.mark.parametrize("name", FIXTURES)
def test_the_markdown_holds_every_word_of_every_block_of_the_projection(name: str) -> None:
    """docling-core renders what the projection reads: each heading, paragraph and table
    cell of projection.json has its words in document.md (which adds formatting, and the
    formulas and picture texts the projection skips)."""
    words = _words(markdown(name).decode())
    for node in projection(name).nodes:
        if isinstance(node, SectionNode):
            assert _words(node.props.title) <= words, node
        elif isinstance(node, ParagraphNode):
            assert _words(node.props.text) <= words, node
        elif isinstance(node, TableRowNode):
            assert _words(" ".join(node.props.cells.values())) <= words, node


def test_the_markdown_marks_each_page_break_and_ends_in_one_newline() -> None:
    data = markdown("pages_bbox")
    assert data.count(f"\n{PAGE_BREAK}\n".encode()) == 1
    assert data.endswith(b"\n") and not data.endswith(b"\n\n")


def test_an_empty_document_is_one_empty_line() -> None:
    doc = load_docling((GOLDEN / "empty" / "docling.json").read_bytes())
    assert render_markdown(doc) == b"\n"


def test_the_markdown_holds_no_record_of_the_parse_only_the_text() -> None:
    """An OCR'd item carries its confidence, and the document the OCR record, in docling's
    metadata (``meta``): for the projection, not for readers; docling-core's serializer
    would print each after its item (``{'confidence': 0.995}``)."""
    from docling_core.types.doc import DoclingDocument
    from docling_core.types.doc.common.meta import BaseMeta

    from richdoc.parse.ocr.mode import OcrMode
    from richdoc.parse.ocr.record import META_FIELD, OcrRecord, Transcription

    doc = DoclingDocument(name="scan")
    line = doc.add_text(label=DocItemLabel.TEXT, text="Signed on February 14, 2025.")
    line.meta = BaseMeta()
    setattr(line.meta, META_FIELD, Transcription(confidence=0.995).model_dump(mode="json"))
    doc.body.meta = BaseMeta()
    record = OcrRecord(engine="rapidocr", mode=OcrMode.AUTO, ocr_pages=[1], unread_pages=[])
    setattr(doc.body.meta, META_FIELD, record.model_dump(mode="json"))

    assert render_markdown(doc) == b"Signed on February 14, 2025.\n"


@pytest.mark.parametrize("name", sorted(OCR_CONVERTED))
def test_the_markdown_of_a_scan_is_the_text_ocr_read_and_nothing_else(name: str) -> None:
    """A scanned PDF, a PDF with a scanned page, an image: every word of document.md is a
    word the DoclingDocument's text items hold, or a placeholder's."""
    doc = load_docling((GOLDEN / name / "docling.json").read_bytes())
    read = set().union(*(_words(item.text) for item in doc.texts))
    placeholders = _words(f"{PAGE_BREAK} <!-- image -->")
    assert read and _words(markdown(name).decode()) <= read | placeholders
