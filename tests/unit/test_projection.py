"""The projection rules (docs/projection.md), one behaviour per test."""

from __future__ import annotations

import gc
import json

import pytest
from docling_core.types.doc import (
    BoundingBox,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    GraphData,
    RichTableCell,
    Size,
    TableCell,
    TableData,
)
from docling_core.types.doc.document import ContentLayer
from richdoc_tools.cli import main

from richdoc.graph import Projection
from richdoc.projection import load_docling, normalize_text, project
from richdoc.taxonomy import CorruptInput, UnsupportedFeature
from richdoc_client.projection import ProjectionSource
from tests.support.gen_fixtures import GOLDEN, build_large_document, grid_table, provenance
from tests.support.projection_invariants import (
    assert_graph_invariants,
    props_of,
    span_slice_audit,
    stats_of,
)

SOURCE = ProjectionSource(name="test")


def run(doc: DoclingDocument) -> Projection:
    projection = project(doc, SOURCE)
    assert_graph_invariants(projection)
    return projection


def shape(projection: Projection) -> list[tuple[int, str, str]]:
    """(parent id, label, text) per node after DOCUMENT, in id order."""
    parent = {edge.dst: edge.src for edge in projection.edges}
    return [
        (parent[n.id], n.label.value, props_of(n).get("title", props_of(n).get("text", "")))
        for n in projection.nodes[1:]
    ]


# --------------------------------------------------------------------------------------
# Document, sections and paragraphs
# --------------------------------------------------------------------------------------


def test_document_node_is_id_0_and_carries_the_source_name():
    doc = DoclingDocument(name="document")  # the parse step's staged copy
    projection = project(doc, ProjectionSource(name="inbox/contract.docx"))
    assert projection.nodes[0].model_dump(mode="json") == {
        "id": 0,
        "label": "DOCUMENT",
        "props": {"name": "inbox/contract.docx"},
    }


def test_title_is_a_level_0_section_and_the_first_one_titles_the_document():
    doc = DoclingDocument(name="d")
    doc.add_title("Slide one")
    doc.add_heading("Agenda", level=1)
    doc.add_title("Slide two")
    doc.add_text(DocItemLabel.TEXT, "closing")
    projection = run(doc)
    assert shape(projection) == [
        (0, "SECTION", "Slide one"),
        (1, "SECTION", "Agenda"),
        (0, "SECTION", "Slide two"),
        (3, "PARAGRAPH", "closing"),
    ]
    assert props_of(projection.nodes[0])["title"] == "Slide one"
    assert [s.kind for s in projection.spans] == ["title", "heading", "title", "paragraph"]


def test_content_attaches_to_the_innermost_open_section():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "preamble")
    doc.add_heading("A", level=1)
    doc.add_heading("A.1", level=2)
    doc.add_text(DocItemLabel.TEXT, "in A.1")
    doc.add_heading("B", level=1)
    doc.add_text(DocItemLabel.TEXT, "in B")
    assert shape(run(doc)) == [
        (0, "PARAGRAPH", "preamble"),
        (0, "SECTION", "A"),
        (2, "SECTION", "A.1"),
        (3, "PARAGRAPH", "in A.1"),
        (0, "SECTION", "B"),
        (5, "PARAGRAPH", "in B"),
    ]


def test_skipped_heading_levels_are_trusted_not_repaired():
    doc = DoclingDocument(name="d")
    doc.add_heading("H1", level=1)
    doc.add_heading("H3", level=3)
    doc.add_heading("H2", level=2)
    projection = run(doc)
    assert shape(projection) == [(0, "SECTION", "H1"), (1, "SECTION", "H3"), (1, "SECTION", "H2")]
    assert [props_of(n).get("level") for n in projection.nodes[1:]] == [1, 3, 2]


def test_all_heading_1_documents_give_sibling_sections():
    doc = DoclingDocument(name="d")
    for name in "ABC":
        doc.add_heading(name, level=1)
        doc.add_text(DocItemLabel.TEXT, name.lower())
    parents = [parent for parent, label, _ in shape(run(doc)) if label == "SECTION"]
    assert parents == [0, 0, 0]


def test_section_nesting_follows_heading_levels_not_the_docling_tree():
    # DOCX conversions hang later content (even headings) below earlier items.
    doc = DoclingDocument(name="d")
    h1 = doc.add_heading("One", level=1)
    h2 = doc.add_heading("Two", level=2, parent=h1)
    doc.add_heading("Other one", level=1, parent=h2)
    doc.add_text(DocItemLabel.TEXT, "under other one", parent=h2)
    assert shape(run(doc)) == [
        (0, "SECTION", "One"),
        (1, "SECTION", "Two"),
        (0, "SECTION", "Other one"),
        (3, "PARAGRAPH", "under other one"),
    ]


def test_empty_and_whitespace_blocks_are_dropped_and_counted():
    doc = DoclingDocument(name="d")
    doc.add_heading("  ", level=1)
    doc.add_text(DocItemLabel.TEXT, "")
    doc.add_text(DocItemLabel.TEXT, "\r\n\t")
    doc.add_text(DocItemLabel.TEXT, "kept")
    projection = run(doc)
    assert shape(projection) == [(0, "PARAGRAPH", "kept")]
    assert stats_of(projection)["not_projected"]["empty_blocks"] == 3


def test_code_captions_and_references_are_paragraphs_with_their_own_span_kind():
    doc = DoclingDocument(name="d")
    doc.add_code("x = 1\r\n")
    doc.add_text(DocItemLabel.CAPTION, "Table 1")
    doc.add_text(DocItemLabel.REFERENCE, "[1] Ref")
    doc.add_text(DocItemLabel.PARAGRAPH, "para")
    projection = run(doc)
    assert [n.label.value for n in projection.nodes[1:]] == ["PARAGRAPH"] * 4
    assert [s.kind for s in projection.spans] == ["code", "caption", "paragraph", "paragraph"]
    assert props_of(projection.nodes[1])["text"] == "x = 1\n"


# --------------------------------------------------------------------------------------
# Lists and inline groups
# --------------------------------------------------------------------------------------


def test_list_items_are_paragraphs_with_list_level_counting_nested_lists():
    doc = DoclingDocument(name="d")
    outer = doc.add_list_group()
    one = doc.add_list_item("one", parent=outer)
    middle = doc.add_list_group(parent=one)
    two = doc.add_list_item("two", parent=middle)
    inner = doc.add_list_group(parent=two)
    doc.add_list_item("three", parent=inner)
    doc.add_list_item("one again", parent=outer)
    projection = run(doc)
    assert [(props_of(n)["text"], props_of(n)["list_level"]) for n in projection.nodes[1:]] == [
        ("one", 1),
        ("two", 2),
        ("three", 3),
        ("one again", 1),
    ]
    assert {s.kind for s in projection.spans} == {"list_item"}
    assert all(parent == 0 for parent, _, _ in shape(projection))  # flat, not nested


def test_a_heading_inside_a_list_ends_the_list_nesting_below_it():
    doc = DoclingDocument(name="d")
    outer = doc.add_list_group()
    doc.add_list_item("outer item", parent=outer)
    heading = doc.add_heading("Heading", level=1, parent=outer)
    later = doc.add_list_group(parent=heading)
    doc.add_list_item("later item", parent=later)
    doc.add_text(DocItemLabel.TEXT, "plain", parent=heading)
    projection = run(doc)
    props = {props_of(n).get("text"): props_of(n) for n in projection.nodes}
    assert props["later item"]["list_level"] == 1
    assert "list_level" not in props["plain"]


def test_a_formatted_list_item_takes_the_text_of_its_inline_group():
    doc = DoclingDocument(name="d")
    group = doc.add_list_group()
    item = doc.add_list_item("", parent=group)
    parts = doc.add_inline_group(parent=item)
    doc.add_text(DocItemLabel.TEXT, "bold", parent=parts)
    doc.add_text(DocItemLabel.TEXT, "words", parent=parts)
    projection = run(doc)
    assert shape(projection) == [(0, "PARAGRAPH", "bold words")]
    assert props_of(projection.nodes[1])["list_level"] == 1


def test_an_enumerated_list_item_reads_marker_space_text_and_keeps_its_marker():
    doc = DoclingDocument(name="d")
    clauses = doc.add_list_group()
    doc.add_list_item("Interest", parent=clauses, enumerated=True, marker="2.3.4.")
    projection = run(doc)
    assert props_of(projection.nodes[1]) == {
        "list_level": 1,
        "marker": "2.3.4.",
        "text": "2.3.4. Interest",
    }
    assert projection.canonical_text == "2.3.4. Interest"
    assert projection.spans[0].end == len("2.3.4. Interest")


def test_a_bullet_marker_is_a_prop_but_not_part_of_the_text():
    doc = DoclingDocument(name="d")
    bullets = doc.add_list_group()
    doc.add_list_item("coffee", parent=bullets, marker="\u2022")
    doc.add_list_item("tea", parent=bullets, marker="")  # DOCX, HTML and Markdown bullets
    projection = run(doc)
    assert [props_of(n) for n in projection.nodes[1:]] == [
        {"list_level": 1, "marker": "\u2022", "text": "coffee"},
        {"list_level": 1, "text": "tea"},
    ]
    assert projection.canonical_text == "coffee\n\ntea"


def test_a_marker_is_one_line_and_a_marker_without_text_is_an_empty_block():
    doc = DoclingDocument(name="d")
    items = doc.add_list_group()
    doc.add_list_item("spread", parent=items, enumerated=True, marker=" Article\r\n 7 ")
    doc.add_list_item("  ", parent=items, enumerated=True, marker="8.")
    projection = run(doc)
    assert shape(projection) == [(0, "PARAGRAPH", "Article 7 spread")]
    assert stats_of(projection)["not_projected"]["empty_blocks"] == 1


def test_a_formatted_enumerated_list_item_puts_its_marker_before_the_inline_text():
    doc = DoclingDocument(name="d")
    group = doc.add_list_group()
    item = doc.add_list_item("", parent=group, enumerated=True, marker="1.")
    parts = doc.add_inline_group(parent=item)
    doc.add_text(DocItemLabel.TEXT, "Payment", parent=parts)
    doc.add_text(DocItemLabel.TEXT, "within 30 days", parent=parts)
    assert shape(run(doc)) == [(0, "PARAGRAPH", "1. Payment within 30 days")]


def test_an_inline_group_is_one_paragraph_located_by_its_parts():
    doc = DoclingDocument(name="d")
    doc.add_page(page_no=1, size=Size(width=100, height=100))
    group = doc.add_inline_group()
    doc.add_text(
        DocItemLabel.TEXT,
        "left",
        parent=group,
        prov=provenance(1, (0, 0, 10, 5), CoordOrigin.TOPLEFT),
    )
    doc.add_formula("x^2", parent=group)
    doc.add_text(
        DocItemLabel.TEXT,
        "right",
        parent=group,
        prov=provenance(1, (20, 0, 40, 8), CoordOrigin.TOPLEFT),
    )
    projection = run(doc)
    assert props_of(projection.nodes[1]) == {"text": "left right", "page": 1, "bbox": [0, 0, 40, 8]}
    assert stats_of(projection)["skipped_features"]["formulas"] == 1


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def rows_of(projection: Projection) -> list[dict]:
    return [props_of(n) for n in projection.nodes if n.label.value == "TABLE_ROW"]


def test_header_row_names_the_keys_and_every_other_row_is_a_table_row():
    doc = DoclingDocument(name="d")
    doc.add_table(data=grid_table([["Name", "Age"], ["Ada", "36"], ["Alan", "41"]], header_rows=1))
    projection = run(doc)
    assert props_of(projection.nodes[1]) == {"columns": ["Name", "Age"], "header_rows": 1}
    assert rows_of(projection) == [
        {"cells": {"Name": "Ada", "Age": "36"}, "row": 1, "text": "Name: Ada | Age: 36"},
        {"cells": {"Name": "Alan", "Age": "41"}, "row": 2, "text": "Name: Alan | Age: 41"},
    ]
    assert [e.ord for e in projection.edges if e.src == 1] == [0, 1]


def test_headerless_columns_are_positional_and_their_row_text_is_bare_values():
    doc = DoclingDocument(name="d")
    doc.add_table(data=grid_table([["a", "b"], ["c", "d"]]))
    projection = run(doc)
    assert [r["cells"] for r in rows_of(projection)] == [
        {"col_0": "a", "col_1": "b"},
        {"col_0": "c", "col_1": "d"},
    ]
    assert [r["text"] for r in rows_of(projection)] == ["a | b", "c | d"]


def test_a_table_of_only_header_rows_is_read_as_headerless():
    doc = DoclingDocument(name="d")
    doc.add_table(data=grid_table([["only", "row"]], header_rows=1))
    projection = run(doc)
    assert props_of(projection.nodes[1])["header_rows"] == 0
    assert rows_of(projection)[0]["cells"] == {"col_0": "only", "col_1": "row"}


def test_a_row_with_an_unflagged_non_empty_cell_ends_the_header_block():
    cells = grid_table([["Key", "Value"], ["Name", "Ada"]], header_rows=2).table_cells
    cells[3].column_header = False  # "Ada" is data: row 1 is not a header row
    doc = DoclingDocument(name="d")
    doc.add_table(data=TableData(table_cells=cells, num_rows=2, num_cols=2))
    assert rows_of(run(doc))[0]["cells"] == {"Key": "Name", "Value": "Ada"}


def test_a_data_row_docling_flags_as_header_names_the_keys_and_is_no_row():
    # An XLSX sheet without a header row: docling flags the first row of every table.
    doc = DoclingDocument(name="d")
    doc.add_page(page_no=1, size=Size(width=3, height=4))  # the used range, in cells
    sheet_range = provenance(1, (1, 2, 3, 4), CoordOrigin.TOPLEFT, 0)  # B3:C4
    doc.add_table(
        data=grid_table([["Tea", "3.50"], ["Coffee", "4.20"]], header_rows=1), prov=sheet_range
    )
    projection = run(doc)
    assert props_of(projection.nodes[1]) == {
        "bbox": [1.0, 2.0, 3.0, 4.0],
        "columns": ["Tea", "3.50"],
        "header_rows": 1,
        "page": 1,
    }
    assert rows_of(projection) == [
        {
            "cells": {"Tea": "Coffee", "3.50": "4.20"},
            "page": 1,
            "row": 1,
            "text": "Tea: Coffee | 3.50: 4.20",
        }
    ]


def test_duplicate_and_empty_header_names_are_disambiguated_left_to_right():
    doc = DoclingDocument(name="d")
    header = ["Name", "Name", "", "Name_2", "  Two\nlines "]
    doc.add_table(data=grid_table([header, ["a", "b", "c", "d", "e"]], header_rows=1))
    projection = run(doc)
    assert props_of(projection.nodes[1])["columns"] == [
        "Name",
        "Name_2",
        "col_2",
        "Name_2_2",
        "Two lines",
    ]
    assert rows_of(projection)[0]["text"] == (
        "Name: a | Name_2: b | c | Name_2_2: d | Two lines: e"
    )


def test_spanning_cells_fill_every_column_they_cover_but_appear_once_in_the_row_text():
    def cell(text, rows, cols, header=False):
        return TableCell(
            text=text,
            start_row_offset_idx=rows[0],
            end_row_offset_idx=rows[1],
            start_col_offset_idx=cols[0],
            end_col_offset_idx=cols[1],
            column_header=header,
        )

    cells = [
        cell("Year", (0, 1), (0, 2), header=True),  # one header over two columns
        cell("Q1", (1, 2), (0, 1), header=True),
        cell("Q2", (1, 2), (1, 2), header=True),
        cell("both quarters", (2, 4), (0, 2)),  # a 2x2 body cell
    ]
    doc = DoclingDocument(name="d")
    doc.add_table(data=TableData(table_cells=cells, num_rows=4, num_cols=2))
    projection = run(doc)
    assert props_of(projection.nodes[1])["columns"] == ["Year / Q1", "Year / Q2"]
    value = {"Year / Q1": "both quarters", "Year / Q2": "both quarters"}
    assert rows_of(projection) == [
        {"cells": value, "row": 2, "text": "Year / Q1: both quarters"},
        {"cells": value, "row": 3, "text": "Year / Q1: both quarters"},
    ]


def test_a_table_of_contents_is_a_list_of_its_entries_not_a_table():
    doc = DoclingDocument(name="d")
    doc.add_heading("Contents")
    contents = grid_table([["1. Scope", "1"], ["2. Findings", "2"], ["", ""], ["Annex", "7"]])
    doc.add_table(data=contents, label=DocItemLabel.DOCUMENT_INDEX)
    projection = run(doc)
    assert [n.label.value for n in projection.nodes] == [
        "DOCUMENT",
        "SECTION",
        "PARAGRAPH",
        "PARAGRAPH",
        "PARAGRAPH",
    ]
    assert [props_of(n) for n in projection.nodes[2:]] == [
        {"text": "1. Scope 1", "list_level": 1},
        {"text": "2. Findings 2", "list_level": 1},
        {"text": "Annex 7", "list_level": 1},
    ]
    assert [span.kind.value for span in projection.spans[1:]] == ["list_item"] * 3
    assert stats_of(projection)["not_projected"]["empty_rows"] == 1
    span_slice_audit(projection)


def test_all_empty_rows_are_dropped_and_cell_values_are_stripped():
    doc = DoclingDocument(name="d")
    doc.add_table(data=grid_table([["H"], [" "], [" padded\r\n"]], header_rows=1))
    projection = run(doc)
    assert rows_of(projection) == [{"cells": {"H": "padded"}, "row": 2, "text": "H: padded"}]
    assert stats_of(projection)["not_projected"]["empty_rows"] == 1


def test_text_inside_table_cells_is_projected_only_through_the_rows():
    doc = DoclingDocument(name="d")
    data = TableData(num_rows=1, num_cols=2)
    item = doc.add_table(data=data)
    group = doc.add_group(parent=item)
    doc.add_text(DocItemLabel.TEXT, "rich content", parent=group)
    doc.add_table_cell(
        item,
        RichTableCell(
            text="rich content",
            ref=group.get_ref(),
            start_row_offset_idx=0,
            end_row_offset_idx=1,
            start_col_offset_idx=0,
            end_col_offset_idx=1,
        ),
    )
    doc.add_table_cell(
        item,
        TableCell(
            text="plain",
            start_row_offset_idx=0,
            end_row_offset_idx=1,
            start_col_offset_idx=1,
            end_col_offset_idx=2,
        ),
    )
    caption = doc.add_text(DocItemLabel.CAPTION, "Table caption", parent=item)
    item.captions.append(caption.get_ref())
    projection = run(doc)
    assert shape(projection) == [
        (0, "TABLE", ""),
        (1, "TABLE_ROW", "rich content | plain"),
        (0, "PARAGRAPH", "Table caption"),
    ]


def _cell(text: str, row: int, col: int, *, header: bool = False) -> TableCell:
    return TableCell(
        text=text,
        start_row_offset_idx=row,
        end_row_offset_idx=row + 1,
        start_col_offset_idx=col,
        end_col_offset_idx=col + 1,
        column_header=header,
    )


def _rich_cell(doc: DoclingDocument, table, row: int, col: int, text: str, header: bool = False):
    """A rich cell at (row, col) of ``table``; returns the group that holds its content.

    ``text`` is docling's own text of the cell, which the projection does not read.
    """
    group = doc.add_group(parent=table)
    plain = _cell(text, row, col, header=header)
    cell = RichTableCell(ref=group.get_ref(), **plain.model_dump())
    doc.add_table_cell(table, cell)
    return group


def _outer_table(doc: DoclingDocument, item: str):
    """A 2x2 table, header Item | Details, with ``item`` in the first data cell."""
    table = doc.add_table(data=TableData(num_rows=2, num_cols=2))
    for cell in (_cell("Item", 0, 0, header=True), _cell("Details", 0, 1, header=True)):
        doc.add_table_cell(table, cell)
    doc.add_table_cell(table, _cell(item, 1, 0))
    return table


def test_a_table_nested_in_a_cell_gives_its_cell_values_to_that_cell_row_by_row():
    doc = DoclingDocument(name="d")
    outer = _outer_table(doc, "Tea")
    content = _rich_cell(doc, outer, 1, 1, "Loose leaf:")  # DOCX's text: without the table
    doc.add_text(DocItemLabel.TEXT, "Loose leaf:", parent=content)
    inner = grid_table([["Size", "Price"], ["Small", "3.50"], ["Large", "4.20"]], header_rows=1)
    doc.add_table(data=inner, parent=content)
    projection = run(doc)
    details = "Loose leaf: Size Price Small 3.50 Large 4.20"
    assert rows_of(projection) == [
        {
            "cells": {"Item": "Tea", "Details": details},
            "row": 1,
            "text": f"Item: Tea | Details: {details}",
        }
    ]
    assert stats_of(projection)["nodes_by_label"]["TABLE"] == 1  # the nested table is no node


def test_a_rich_cell_joins_its_blocks_with_one_space_and_counts_what_it_skips():
    doc = DoclingDocument(name="d")
    outer = _outer_table(doc, "Terms")
    content = _rich_cell(doc, outer, 1, 1, "First paragraph.\nbold and plain")
    doc.add_text(DocItemLabel.TEXT, "First paragraph.", parent=content)
    parts = doc.add_inline_group(parent=content)
    doc.add_text(DocItemLabel.TEXT, "bold", parent=parts)
    doc.add_text(DocItemLabel.TEXT, "and plain", parent=parts)
    steps = doc.add_list_group(parent=content)
    doc.add_list_item("Sign", parent=steps, enumerated=True, marker="1.")
    doc.add_picture(parent=content)
    doc.add_formula("x^2", parent=content)
    doc.add_text(DocItemLabel.CAPTION, "Caption in a cell", parent=content)
    projection = run(doc)
    assert rows_of(projection)[0]["cells"]["Details"] == "First paragraph. bold and plain 1. Sign"
    assert stats_of(projection)["skipped_features"]["pictures"] == 1
    assert stats_of(projection)["skipped_features"]["formulas"] == 1
    # A caption below a table is projected once, after its rows, wherever it hangs.
    assert [text for _, _, text in shape(projection)] == [
        "",
        "Item: Terms | Details: First paragraph. bold and plain 1. Sign",
        "Caption in a cell",
    ]


def test_a_rich_header_cell_names_its_column_by_its_content():
    doc = DoclingDocument(name="d")
    table = doc.add_table(data=TableData(num_rows=2, num_cols=1))
    header = _rich_cell(doc, table, 0, 0, "Unit price", header=True)
    doc.add_text(DocItemLabel.TEXT, "Unit ", parent=header)  # DOCX: one item per run
    doc.add_text(DocItemLabel.TEXT, "price", parent=header)
    doc.add_table_cell(table, _cell("3.50", 1, 0))
    assert rows_of(run(doc)) == [
        {"cells": {"Unit price": "3.50"}, "row": 1, "text": "Unit price: 3.50"}
    ]


# --------------------------------------------------------------------------------------
# Provenance: page and bbox
# --------------------------------------------------------------------------------------


def test_bottom_left_boxes_are_flipped_to_a_top_left_origin_with_the_page_height():
    doc = DoclingDocument(name="d")
    doc.add_page(page_no=3, size=Size(width=600, height=800))
    doc.add_text(
        DocItemLabel.TEXT, "t", prov=provenance(3, (10, 700, 110, 650), CoordOrigin.BOTTOMLEFT)
    )
    assert props_of(run(doc).nodes[1]) == {"text": "t", "page": 3, "bbox": [10, 100, 110, 150]}


def test_top_left_boxes_keep_their_coordinates_in_the_page_units():
    doc = DoclingDocument(name="d")
    doc.add_page(page_no=1, size=Size(width=9144000, height=6858000))  # a slide, in EMU
    box = (457200, 274638, 8686800, 1417638)
    doc.add_text(DocItemLabel.TEXT, "t", prov=provenance(1, box, CoordOrigin.TOPLEFT))
    assert props_of(run(doc).nodes[1])["bbox"] == [457200, 274638, 8686800, 1417638]


def test_coordinates_are_rounded_to_three_decimals():
    doc = DoclingDocument(name="d")
    doc.add_page(page_no=1, size=Size(width=595.2756, height=841.8898))
    box = (72.0, 728.616, 172.0319, 717.516)
    doc.add_text(DocItemLabel.TEXT, "t", prov=provenance(1, box, CoordOrigin.BOTTOMLEFT))
    assert props_of(run(doc).nodes[1])["bbox"] == [72.0, 113.274, 172.032, 124.374]


def test_page_and_bbox_are_absent_where_docling_gives_no_provenance():
    doc = DoclingDocument(name="d")
    doc.add_heading("h", level=1)
    doc.add_text(DocItemLabel.TEXT, "t")
    doc.add_table(data=grid_table([["a"]]))
    projection = run(doc)
    assert all("page" not in props_of(n) and "bbox" not in props_of(n) for n in projection.nodes)


def test_a_bottom_left_box_on_an_unknown_page_keeps_only_the_page():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "t", prov=provenance(4, (0, 10, 5, 0), CoordOrigin.BOTTOMLEFT))
    assert props_of(run(doc).nodes[1]) == {"text": "t", "page": 4}


def test_multi_provenance_items_are_located_on_their_first_page_enclosing_its_boxes():
    doc = DoclingDocument(name="d")
    item = doc.add_text(
        DocItemLabel.TEXT, "t", prov=provenance(2, (10, 10, 50, 20), CoordOrigin.TOPLEFT)
    )
    item.prov.append(provenance(2, (5, 20, 40, 30), CoordOrigin.TOPLEFT))
    item.prov.append(provenance(3, (0, 0, 100, 100), CoordOrigin.TOPLEFT))
    assert props_of(run(doc).nodes[1]) == {"text": "t", "page": 2, "bbox": [5, 10, 50, 30]}


def test_rows_of_a_single_page_table_carry_its_page_and_their_cell_boxes():
    def cell(text, r, box):
        left, top, right, bottom = box
        return TableCell(
            text=text,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=0,
            end_col_offset_idx=1,
            bbox=BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=CoordOrigin.BOTTOMLEFT),
        )

    doc = DoclingDocument(name="d")
    doc.add_page(page_no=1, size=Size(width=100, height=100))
    data = TableData(
        table_cells=[cell("a", 0, (0, 90, 50, 80)), cell("b", 1, (0, 80, 50, 70))],
        num_rows=2,
        num_cols=1,
    )
    doc.add_table(data=data, prov=provenance(1, (0, 90, 50, 70), CoordOrigin.BOTTOMLEFT))
    projection = run(doc)
    assert props_of(projection.nodes[1])["bbox"] == [0, 10, 50, 30]
    assert [(r["page"], r["bbox"]) for r in rows_of(projection)] == [
        (1, [0, 10, 50, 20]),
        (1, [0, 20, 50, 30]),
    ]


def test_rows_of_a_table_spanning_pages_are_not_located():
    doc = DoclingDocument(name="d")
    first_page = provenance(1, (0, 0, 5, 5), CoordOrigin.TOPLEFT)
    item = doc.add_table(data=grid_table([["a"], ["b"]]), prov=first_page)
    item.prov.append(provenance(2, (0, 0, 5, 5), CoordOrigin.TOPLEFT))
    projection = run(doc)
    assert props_of(projection.nodes[1])["page"] == 1
    assert all("page" not in row for row in rows_of(projection))


# --------------------------------------------------------------------------------------
# Canonical text and spans
# --------------------------------------------------------------------------------------


def test_canonical_text_joins_blocks_with_a_blank_line_and_spans_are_utf8_byte_offsets():
    doc = DoclingDocument(name="d")
    doc.add_heading("Caf\u00e9", level=1)
    doc.add_text(DocItemLabel.TEXT, "\U0001f600 ok")
    projection = run(doc)
    assert projection.canonical_text == "Caf\u00e9\n\n\U0001f600 ok"
    assert [(s.start, s.end) for s in projection.spans] == [(0, 5), (7, 14)]


def test_text_is_nfc_normalised_with_lf_line_ends():
    assert normalize_text("e\u0301\r\nx\ry") == "\u00e9\nx\ny"
    assert normalize_text("\u212b") == "\u00c5"  # NFC, not NFKC: ligatures stay
    assert normalize_text("\ufb01") == "\ufb01"


def test_lone_surrogates_become_replacement_characters():
    assert normalize_text("a\ud800b") == "a\ufffdb"


def test_normalised_text_is_what_the_props_and_spans_hold():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "A\u030a\r\nB")
    projection = run(doc)
    assert props_of(projection.nodes[1])["text"] == "\u00c5\nB"
    assert span_slice_audit(projection) == []


# --------------------------------------------------------------------------------------
# Feature matrix v1: skipped features, unsupported-only documents, furniture
# --------------------------------------------------------------------------------------


def _graph() -> GraphData:
    return GraphData(cells=[], links=[])


FEATURE_ITEMS = {
    "pictures": lambda doc: doc.add_picture(),
    "formulas": lambda doc: doc.add_formula("E = mc^2"),
    "footnotes": lambda doc: doc.add_text(DocItemLabel.FOOTNOTE, "1 note"),
    "forms": lambda doc: doc.add_key_values(graph=_graph()),
}


@pytest.mark.parametrize("feature", sorted(FEATURE_ITEMS))
def test_unsupported_features_beside_other_content_are_skipped_with_a_warning(feature):
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "content")
    FEATURE_ITEMS[feature](doc)
    FEATURE_ITEMS[feature](doc)
    stats = stats_of(run(doc))
    assert stats["skipped_features"][feature] == 2
    assert stats["warnings"] == [
        {
            "code": "skipped_feature",
            "feature": feature,
            "count": 2,
            "message": f"{feature}: 2 skipped, not supported by projection v1",
        }
    ]


@pytest.mark.parametrize("feature", sorted(FEATURE_ITEMS))
def test_a_document_of_only_unsupported_content_raises_unsupported_feature(feature):
    doc = DoclingDocument(name="d")
    FEATURE_ITEMS[feature](doc)
    with pytest.raises(UnsupportedFeature) as caught:
        project(doc, SOURCE)
    assert caught.value.feature == feature
    assert caught.value.exit_code == 20


def test_the_tag_of_a_mixed_unsupported_document_is_its_first_skipped_feature():
    doc = DoclingDocument(name="d")
    doc.add_formula("x")
    doc.add_picture()
    doc.add_picture()
    with pytest.raises(UnsupportedFeature) as caught:
        project(doc, SOURCE)
    assert caught.value.feature == "formulas"
    assert "2 pictures" in caught.value.reason and "1 formulas" in caught.value.reason


@pytest.mark.parametrize(
    "label", [DocItemLabel.CHECKBOX_SELECTED, DocItemLabel.CHECKBOX_UNSELECTED]
)
def test_checkboxes_and_form_items_count_as_forms(label):
    doc = DoclingDocument(name="d")
    doc.add_text(label, "I agree")
    doc.add_form(graph=_graph())
    doc.add_text(DocItemLabel.TEXT, "content")
    assert stats_of(run(doc))["skipped_features"]["forms"] == 2


def test_a_picture_caption_is_content_so_the_picture_is_only_skipped():
    doc = DoclingDocument(name="d")
    picture = doc.add_picture()
    caption = doc.add_text(DocItemLabel.CAPTION, "Figure 1", parent=picture)
    picture.captions.append(caption.get_ref())
    doc.add_text(DocItemLabel.TEXT, "not a caption: never read", parent=picture)
    projection = run(doc)
    assert shape(projection) == [(0, "PARAGRAPH", "Figure 1")]
    assert stats_of(projection)["skipped_features"]["pictures"] == 1


def test_the_empty_document_is_a_valid_projection_with_only_the_document_node():
    projection = run(DoclingDocument(name="empty"))
    assert len(projection.nodes) == 1
    assert projection.edges == [] and projection.spans == []
    assert projection.canonical_text == ""
    assert stats_of(projection)["empty_document"] is True
    assert stats_of(projection)["warnings"] == [
        {"code": "empty_document", "message": "the document has no content"}
    ]


def test_furniture_and_other_layers_are_not_projected_but_counted():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.PAGE_HEADER, "header", content_layer=ContentLayer.FURNITURE)
    doc.add_text(DocItemLabel.PAGE_FOOTER, "footer label in the body")
    doc.add_text(DocItemLabel.TEXT, "notes", content_layer=ContentLayer.NOTES)
    doc.add_text(DocItemLabel.TEXT, "watermark", content_layer=ContentLayer.BACKGROUND)
    doc.add_text(DocItemLabel.TEXT, "hidden", content_layer=ContentLayer.INVISIBLE)
    doc.add_text(DocItemLabel.TEXT, "body")
    projection = run(doc)
    assert shape(projection) == [(0, "PARAGRAPH", "body")]
    assert stats_of(projection)["not_projected"] == {
        "background": 1,
        "empty_blocks": 0,
        "empty_rows": 0,
        "furniture": 2,
        "invisible": 1,
        "markers": 0,
        "notes": 1,
        "unknown": 0,
    }


def test_a_document_of_only_furniture_is_empty_not_unsupported():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.PAGE_FOOTER, "Page 1", content_layer=ContentLayer.FURNITURE)
    assert stats_of(run(doc))["empty_document"] is True


def test_stats_count_nodes_edges_spans_and_bytes():
    doc = DoclingDocument(name="d")
    doc.add_heading("H", level=1)
    doc.add_table(data=grid_table([["k"], ["v"]], header_rows=1))
    stats = stats_of(run(doc))
    assert stats["nodes"] == 4 and stats["edges"] == 3 and stats["spans"] == 2
    assert stats["nodes_by_label"] == {
        "DOCUMENT": 1,
        "SECTION": 1,
        "PARAGRAPH": 0,
        "TABLE": 1,
        "TABLE_ROW": 1,
    }
    assert stats["spans_by_kind"]["table_row"] == 1 and stats["spans_by_kind"]["heading"] == 1
    assert stats["canonical_text_bytes"] == len("H\n\nk: v")


# --------------------------------------------------------------------------------------
# Loading, serialization and determinism
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data", [b"", b"not json", b"[]", b'{"schema_name": "DoclingDocument"}', b'{"name": 5}']
)
def test_anything_but_docling_document_json_is_corrupt_input(data):
    with pytest.raises(CorruptInput, match="not a valid DoclingDocument JSON"):
        load_docling(data)


def test_a_dangling_reference_in_the_item_tree_is_corrupt_input():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "t")
    doc.texts.clear()  # the body still points at #/texts/0
    with pytest.raises(CorruptInput, match="inconsistent"):
        project(doc, SOURCE)


def test_a_cycle_in_the_item_tree_is_corrupt_input():
    doc = DoclingDocument(name="d")
    group = doc.add_group()
    group.children.append(group.get_ref())  # the group contains itself
    with pytest.raises(CorruptInput, match="inconsistent"):
        project(doc, SOURCE)


def test_a_box_with_non_finite_coordinates_is_not_a_location():
    doc = DoclingDocument(name="d")
    doc.add_text(
        DocItemLabel.TEXT, "t", prov=provenance(1, (0, 0, float("nan"), 1), CoordOrigin.TOPLEFT)
    )
    assert props_of(run(doc).nodes[1]) == {"text": "t", "page": 1}


def test_serialization_has_sorted_keys_one_element_per_line_and_parses_back():
    doc = DoclingDocument(name="d")
    doc.add_heading("H", level=1)
    doc.add_text(DocItemLabel.TEXT, 'caf\u00e9 "quoted" \\ \u2028')
    projection = run(doc)
    data = projection.to_json_bytes()
    assert data.endswith(b"}\n")
    assert Projection.model_validate_json(data) == projection
    parsed = json.loads(data)
    assert list(parsed) == sorted(parsed)
    assert parsed == json.loads(json.dumps(projection.model_dump(mode="json", by_alias=True)))
    lines = data.decode().splitlines()
    assert lines[lines.index(' "nodes": [') + 1].startswith('  {"id": 0, "label": "DOCUMENT"')
    assert "caf\u00e9" in data.decode()  # UTF-8, not \\u escapes


def test_empty_arrays_serialize_inline():
    data = run(DoclingDocument(name="e")).to_json_bytes().decode()
    assert ' "edges": [],\n' in data and ' "spans": [],\n' in data


def test_the_large_document_passes_the_audit_and_projects_byte_identically_twice():
    data = build_large_document().model_dump_json().encode()
    first = project(load_docling(data), SOURCE)
    second = project(load_docling(data), SOURCE)
    assert first.to_json_bytes() == second.to_json_bytes()
    assert len(first.spans) == 2000 + 50 + 50 * 12  # paragraphs, headings, table rows
    assert span_slice_audit(first) == []
    assert_graph_invariants(first)


def test_projection_leaves_the_cyclic_collector_as_it_found_it():
    doc = DoclingDocument(name="d")
    doc.add_text(DocItemLabel.TEXT, "one paragraph")
    only_a_picture = DoclingDocument(name="p")
    only_a_picture.add_picture()
    assert gc.isenabled()
    project(doc, SOURCE)
    assert gc.isenabled()
    gc.disable()
    try:
        project(doc, SOURCE)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(UnsupportedFeature):
        project(only_a_picture, SOURCE)
    assert gc.isenabled()


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def test_cli_project_writes_the_projection_file(tmp_path):
    golden = GOLDEN / "md_real"
    source = json.loads((golden / "source.json").read_bytes())
    out = tmp_path / "nested" / "projection.json"
    code = main(
        [
            "project",
            str(golden / "docling.json"),
            "-o",
            str(out),
            "--source-name",
            source["name"],
            "--source-sha256",
            source["sha256"],
            "--pipeline",
            source["pipeline"],
        ]
    )
    assert code == 0
    assert out.read_bytes() == (golden / "projection.json").read_bytes()


def test_cli_project_names_the_source_after_the_document_origin_by_default(tmp_path):
    out = tmp_path / "p.json"
    assert main(["project", str(GOLDEN / "docx_real" / "docling.json"), "-o", str(out)]) == 0
    assert json.loads(out.read_bytes())["source"] == {
        "name": "input.docx",
        "pipeline": None,
        "sha256": None,
    }


def test_cli_project_exits_20_with_a_json_line_for_a_pictures_only_document(tmp_path, capsys):
    doc = DoclingDocument(name="scan")
    doc.add_picture()
    doc.add_picture()
    path = tmp_path / "scan.json"
    path.write_text(doc.model_dump_json())
    out = tmp_path / "p.json"
    assert main(["project", str(path), "-o", str(out)]) == 20
    failure = json.loads(capsys.readouterr().err.strip())
    assert failure["kind"] == "unsupported_feature"
    assert failure["feature"] == "pictures"
    assert not out.exists()


def test_cli_project_exits_10_for_a_file_that_is_not_docling_json(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{"hello": "world"}')
    assert main(["project", str(path), "-o", str(tmp_path / "p.json")]) == 10
    assert json.loads(capsys.readouterr().err.strip())["kind"] == "corrupt_input"
