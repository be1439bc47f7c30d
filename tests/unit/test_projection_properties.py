"""Invariants of the projection over generated DoclingDocuments (hypothesis).

Documents mix headings at random levels (titles included), paragraphs of arbitrary
unicode (combining marks, emoji, CR and CRLF), lists nested up to three deep, inline
groups, tables with random header rows and spanning cells (and tables nested in their
cells), pictures and formulas, with or without provenance in either coordinate origin.
"""

from __future__ import annotations

from docling_core.types.doc import (
    BoundingBox,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    NodeItem,
    ProvenanceItem,
    RichTableCell,
    Size,
    TableCell,
    TableData,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from richdoc.projection import load_docling, project
from richdoc.taxonomy import UnsupportedFeature
from richdoc_client.projection import ProjectionSource
from tests.support.projection_invariants import assert_graph_invariants, props_of, span_slice_audit

TRICKY = [
    "e\u0301",  # decomposed: NFC composes it
    "\u212b",  # angstrom sign: NFC maps it to U+00C5
    "\u0308",  # a lone combining mark
    "\r\n",
    "\r",
    "\n",
    " ",
    "\U0001f600",
    "\U0001f469\u200d\U0001f4bb",  # a ZWJ sequence
    "\U0001f1e9\U0001f1ea",  # a flag
    "\ufb01",
    "|",
    ": ",
]
texts = st.lists(st.text(max_size=6) | st.sampled_from(TRICKY), max_size=5).map("".join)
# List markers as converters give them (numbers, bullets, none), and arbitrary text.
markers = st.sampled_from(["", "-", "\u2022", "1.", "2.3.4.", " a) ", "Article\r\n7"]) | texts
KNOWN_PAGES = (1, 2)
SOURCE = ProjectionSource(name="generated", sha256="0" * 64, pipeline="hypothesis")


@st.composite
def provenance(draw: st.DrawFn) -> ProvenanceItem | None:
    if not draw(st.booleans()):
        return None
    coords = st.floats(0, 1000, allow_nan=False, allow_infinity=False)
    left, right = sorted((draw(coords), draw(coords)))
    low, high = sorted((draw(coords), draw(coords)))
    origin = draw(st.sampled_from(CoordOrigin))
    top, bottom = (low, high) if origin is CoordOrigin.TOPLEFT else (high, low)
    page = draw(st.sampled_from((*KNOWN_PAGES, 7)))  # page 7 has no size: no flip possible
    bbox = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=origin)
    return ProvenanceItem(page_no=page, bbox=bbox, charspan=(0, 0))


@st.composite
def tables(draw: st.DrawFn) -> TableData:
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    header_rows = draw(st.integers(0, rows))
    taken: set[tuple[int, int]] = set()
    cells = []
    for r in range(rows):
        for c in range(cols):
            if (r, c) in taken or draw(st.integers(0, 9)) == 0:  # sometimes no cell at all
                continue
            height = draw(st.integers(1, rows - r))
            width = 1
            while c + width < cols and (r, c + width) not in taken and draw(st.booleans()):
                width += 1
            taken |= {(r + i, c + j) for i in range(height) for j in range(width)}
            cells.append(
                TableCell(
                    text=draw(texts),
                    start_row_offset_idx=r,
                    end_row_offset_idx=r + height,
                    start_col_offset_idx=c,
                    end_col_offset_idx=c + width,
                    row_span=height,
                    col_span=width,
                    column_header=r < header_rows and draw(st.integers(0, 5)) > 0,
                )
            )
    return TableData(table_cells=cells, num_rows=rows, num_cols=cols)


@st.composite
def documents(draw: st.DrawFn) -> DoclingDocument:
    doc = DoclingDocument(name="generated")
    for page in KNOWN_PAGES:
        doc.add_page(page_no=page, size=Size(width=1000, height=1000))

    def add_list(parent: NodeItem | None, depth: int) -> None:
        group = doc.add_list_group(parent=parent)
        for _ in range(draw(st.integers(1, 3))):
            item = doc.add_list_item(
                draw(texts),
                parent=group,
                prov=draw(provenance()),
                enumerated=draw(st.booleans()),
                marker=draw(markers),
            )
            if depth < 3 and draw(st.booleans()):
                add_list(item, depth + 1)

    blocks = st.sampled_from(
        ["heading", "title", "text", "list", "inline", "table", "nested", "picture", "formula"]
    )
    for block in draw(st.lists(blocks, max_size=12)):
        if block == "heading":
            level = draw(st.integers(1, 6))
            doc.add_heading(draw(texts), level=level, prov=draw(provenance()))
        elif block == "title":
            doc.add_title(draw(texts), prov=draw(provenance()))
        elif block == "text":
            doc.add_text(DocItemLabel.TEXT, draw(texts), prov=draw(provenance()))
        elif block == "list":
            add_list(None, 1)
        elif block == "inline":
            group = doc.add_inline_group()
            for _ in range(draw(st.integers(1, 3))):
                doc.add_text(DocItemLabel.TEXT, draw(texts), parent=group, prov=draw(provenance()))
        elif block == "table":
            doc.add_table(data=draw(tables()), prov=draw(provenance()))
        elif block == "nested":  # a rich cell holding a paragraph and a table
            table = doc.add_table(data=draw(tables()), prov=draw(provenance()))
            cells = table.data.table_cells
            if cells:
                index = draw(st.integers(0, len(cells) - 1))
                content = doc.add_group(parent=table)
                doc.add_text(DocItemLabel.TEXT, draw(texts), parent=content)
                doc.add_table(data=draw(tables()), parent=content)
                cells[index] = RichTableCell(ref=content.get_ref(), **cells[index].model_dump())
        elif block == "picture":
            doc.add_picture(prov=draw(provenance()))
        else:
            doc.add_formula(draw(texts), prov=draw(provenance()))
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_projection_invariants_hold_for_generated_documents(doc):
    try:
        projection = project(doc, SOURCE)
    except UnsupportedFeature as exc:
        # Only when nothing but pictures and formulas carries content.
        assert exc.feature in ("pictures", "formulas")
        assert not doc.tables
        assert all(
            not item.text.strip() or item.label is DocItemLabel.FORMULA for item in doc.texts
        )
        return
    assert span_slice_audit(projection) == []
    assert_graph_invariants(projection)
    data = projection.to_json_bytes()
    # Deterministic, and the same through a JSON round trip of the input.
    assert project(doc, SOURCE).to_json_bytes() == data
    assert project(load_docling(doc.model_dump_json().encode()), SOURCE).to_json_bytes() == data
    # Provenance is never invented: every located node's page is a page docling gave.
    given_pages = {p.page_no for item in (*doc.texts, *doc.tables) for p in item.prov}
    for node in projection.nodes:
        props = props_of(node)
        if "page" in props:
            assert props["page"] in given_pages
        if "bbox" in props:
            x0, y0, x1, y1 = props["bbox"]
            assert x0 <= x1 and y0 <= y1
