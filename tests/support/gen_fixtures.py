"""Build the golden corpus of the projection: ``python tests/support/gen_fixtures.py``.

Two kinds of fixtures, each in ``tests/data/golden/<name>/``:

* constructed: a DoclingDocument built with docling-core's constructors, written as
  ``docling.json`` (the projection's input);
* converted: a small DOCX, PPTX, XLSX, HTML, Markdown or PDF file generated here with
  every timestamp and zip date pinned (``input.<ext>``), converted by docling's
  ``DocumentConverter`` into ``docling.json`` (a workbook with richdoc's backend);
* converted with OCR: a scanned PDF, a PDF with a scanned page and an image, converted by
  richdoc's parse worker with OCR (``OCR_CONVERTED``).

For both, ``source.json`` holds the ProjectionSource the projection is given and
``projection.json`` the expected output. Regenerating must leave ``git status`` clean;
``tests/parse/test_projection_golden.py`` fails when any committed file differs from a fresh
build. The builders are importable (the tests and ``bench/`` use them); docling itself is
imported only by the converted fixtures.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from docling_core.types.doc import (
    BoundingBox,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    GraphCell,
    GraphCellLabel,
    GraphData,
    ProvenanceItem,
    Size,
    TableCell,
    TableData,
)
from docling_core.types.doc.document import ContentLayer

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "layers" / "docling"))

from richdoc.projection import project  # noqa: E402
from richdoc_client.projection import ProjectionSource  # noqa: E402

CONSTRUCTED_PIPELINE = "docling-core constructors"
# Every generated office file carries this moment; zip entries carry the zip epoch.
PINNED_TIME = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


# --------------------------------------------------------------------------------------
# Constructed fixtures
# --------------------------------------------------------------------------------------


def grid_table(rows: list[list[str]], header_rows: int = 0) -> TableData:
    """A grid table without spans; the first ``header_rows`` rows are column headers."""
    cells = [
        TableCell(
            text=text,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r < header_rows,
        )
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    ]
    return TableData(table_cells=cells, num_rows=len(rows), num_cols=len(rows[0]))


def _span_cell(
    text: str, rows: tuple[int, int], cols: tuple[int, int], *, header: bool = False
) -> TableCell:
    return TableCell(
        text=text,
        start_row_offset_idx=rows[0],
        end_row_offset_idx=rows[1],
        start_col_offset_idx=cols[0],
        end_col_offset_idx=cols[1],
        row_span=rows[1] - rows[0],
        col_span=cols[1] - cols[0],
        column_header=header,
    )


def build_headings_deep() -> DoclingDocument:
    doc = DoclingDocument(name="headings_deep")
    doc.add_title("Handbook")
    doc.add_text(DocItemLabel.TEXT, "Preface under the title.")
    for level in range(1, 7):
        doc.add_heading(f"Level {level} heading", level=level)
        doc.add_text(DocItemLabel.TEXT, f"Body at level {level}.")
    doc.add_heading("Back to level 2", level=2)
    doc.add_text(DocItemLabel.TEXT, "Closes levels 2 to 6.")
    doc.add_heading("Second chapter", level=1)
    doc.add_text(DocItemLabel.TEXT, "Closes everything below the title.")
    return doc


def build_headings_skipped() -> DoclingDocument:
    doc = DoclingDocument(name="headings_skipped")
    doc.add_text(DocItemLabel.TEXT, "Content before any heading belongs to the document.")
    doc.add_heading("One", level=1)
    doc.add_heading("Three, skipping two", level=3)
    doc.add_text(DocItemLabel.TEXT, "Under three.")
    doc.add_heading("Two", level=2)
    doc.add_text(DocItemLabel.TEXT, "Under two, a sibling of three.")
    doc.add_heading("Four", level=4)
    doc.add_text(DocItemLabel.TEXT, "Under four, inside two.")
    doc.add_heading("   ", level=2)  # empty headings are not projected
    doc.add_text(DocItemLabel.TEXT, "Still under four.")
    return doc


def build_headings_all_h1() -> DoclingDocument:
    doc = DoclingDocument(name="headings_all_h1")
    for name in ("Introduction", "Methods", "Results"):
        doc.add_heading(name, level=1)
        doc.add_text(DocItemLabel.TEXT, f"{name} text.")
    return doc


def build_lists_nested() -> DoclingDocument:
    doc = DoclingDocument(name="lists_nested")
    doc.add_heading("Checklist", level=1)
    outer = doc.add_list_group()
    first = doc.add_list_item("first", parent=outer, marker="-")
    middle = doc.add_list_group(parent=first)
    second = doc.add_list_item("second level", parent=middle, marker="-")
    inner = doc.add_list_group(parent=second)
    doc.add_list_item("third level", parent=inner, marker="-")
    doc.add_list_item("third level again", parent=inner, marker="-")
    doc.add_list_item("back to second", parent=middle, marker="-")
    formatted = doc.add_list_item("", parent=outer, marker="-")
    parts = doc.add_inline_group(parent=formatted)
    doc.add_text(DocItemLabel.TEXT, "formatted", parent=parts)
    doc.add_text(DocItemLabel.TEXT, "item", parent=parts)
    doc.add_text(DocItemLabel.TEXT, "A paragraph between two lists.")
    numbered = doc.add_list_group()
    for n in (1, 2):
        doc.add_list_item(f"numbered {n}", parent=numbered, enumerated=True, marker=f"{n}.")
    return doc


def build_table_header() -> DoclingDocument:
    doc = DoclingDocument(name="table_header")
    doc.add_heading("Price list", level=1)
    caption = doc.add_text(DocItemLabel.CAPTION, "Table 1: prices valid from 2024-03-01")
    rows = [
        ["Item", "Price", "Valid from"],
        ["Tea", "3.50", "2024-03-01"],
        ["", "", ""],
        ["Coffee\r\nlarge", "4.20", ""],
    ]
    table = doc.add_table(data=grid_table(rows, header_rows=1), caption=caption)
    # A caption docling hangs below the table: projected after the table's rows.
    note = doc.add_text(DocItemLabel.CAPTION, "Source: internal price list", parent=table)
    table.captions.append(note.get_ref())
    doc.add_text(DocItemLabel.TEXT, "Text after the table.")
    return doc


def build_table_headerless() -> DoclingDocument:
    doc = DoclingDocument(name="table_headerless")
    doc.add_table(data=grid_table([["a", "b"], ["c", ""]]))
    # Every row flagged as a header: no row would be left to key, so no header.
    doc.add_table(data=grid_table([["only", "row"]], header_rows=1))
    return doc


def build_table_spans() -> DoclingDocument:
    doc = DoclingDocument(name="table_spans")
    cells = [
        _span_cell("Region", (0, 2), (0, 1), header=True),
        _span_cell("2024", (0, 1), (1, 3), header=True),
        _span_cell("Q1", (1, 2), (1, 2), header=True),
        _span_cell("Q2", (1, 2), (2, 3), header=True),
        _span_cell("North", (2, 4), (0, 1)),
        _span_cell("10", (2, 3), (1, 2)),
        _span_cell("11", (2, 3), (2, 3)),
        _span_cell("n/a for the year", (3, 4), (1, 3)),
        _span_cell("South", (4, 5), (0, 1)),
        _span_cell("7", (4, 5), (1, 2)),
    ]
    doc.add_table(data=TableData(table_cells=cells, num_rows=5, num_cols=3))
    return doc


def build_table_duplicate_headers() -> DoclingDocument:
    doc = DoclingDocument(name="table_duplicate_headers")
    rows = [
        ["Name", "Name", "", "col_1", "Name_2", " Multi\nline  name "],
        ["a", "b", "c", "d", "e", "f"],
    ]
    doc.add_table(data=grid_table(rows, header_rows=1))
    return doc


def provenance(
    page: int, box: tuple[float, float, float, float], origin: CoordOrigin, n: int = 1
) -> ProvenanceItem:
    """Provenance of the first ``n`` characters of an item on ``page``, ``box`` in ``origin``."""
    left, top, right, bottom = box
    bbox = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=origin)
    return ProvenanceItem(page_no=page, bbox=bbox, charspan=(0, n))


def build_pages_bbox() -> DoclingDocument:
    doc = DoclingDocument(name="pages_bbox")
    doc.add_page(page_no=1, size=Size(width=612.0, height=792.0))
    doc.add_page(page_no=2, size=Size(width=612.0, height=792.0))
    top, bottom = CoordOrigin.TOPLEFT, CoordOrigin.BOTTOMLEFT
    doc.add_heading("Top-left heading", level=1, prov=provenance(1, (72, 72, 300, 90), top, 16))
    doc.add_text(
        DocItemLabel.TEXT,
        "Bottom-left paragraph",
        prov=provenance(1, (72.5, 700.25, 400.125, 680.0), bottom, 21),
    )
    spread = doc.add_text(
        DocItemLabel.TEXT,
        "Paragraph on two lines and two pages",
        prov=provenance(1, (72, 100, 500, 112), top, 10),
    )
    spread.prov.append(provenance(1, (60, 112, 480, 124), top, 20))
    spread.prov.append(provenance(2, (72, 72, 200, 84), top, 36))
    doc.add_text(DocItemLabel.TEXT, "No provenance at all")
    # A bottom-left box on a page the document does not describe cannot be flipped.
    doc.add_text(
        DocItemLabel.TEXT, "Page without size", prov=provenance(9, (1, 20, 2, 10), bottom, 17)
    )

    def cell(text: str, r: int, c: int, box: tuple[float, float, float, float]) -> TableCell:
        left, top_, right, bottom_ = box
        return TableCell(
            text=text,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r == 0,
            bbox=BoundingBox(l=left, t=top_, r=right, b=bottom_, coord_origin=bottom),
        )

    data = TableData(
        table_cells=[
            cell("Key", 0, 0, (72, 500, 150, 488)),
            cell("Value", 0, 1, (150, 500, 300, 488)),
            cell("alpha", 1, 0, (72, 488, 150, 476)),
            cell("1", 1, 1, (150, 488, 300, 476)),
            cell("beta", 2, 0, (72, 476, 150, 464)),
            cell("2", 2, 1, (150, 476, 300, 464)),
        ],
        num_rows=3,
        num_cols=2,
    )
    doc.add_table(data=data, prov=provenance(2, (72, 500, 300, 464), bottom, 0))
    return doc


def build_unicode_text() -> DoclingDocument:
    doc = DoclingDocument(name="unicode_text")
    doc.add_heading("Cafe\u0301 und Stra\u00dfe", level=1)  # decomposed e-acute composes
    doc.add_text(DocItemLabel.TEXT, "Windows line ends\r\nand an old Mac one\rend.")
    doc.add_text(
        DocItemLabel.TEXT, "Emoji: \U0001f600 \U0001f469\u200d\U0001f4bb \U0001f1e9\U0001f1ea"
    )
    doc.add_text(DocItemLabel.TEXT, "Hangul jamo \u1112\u1161\u11ab and \u05e9\u05dc\u05d5\u05dd")
    doc.add_text(DocItemLabel.TEXT, "A\u030a ring, \u212b angstrom sign, ligature \ufb01 stays")
    doc.add_text(DocItemLabel.TEXT, "\r\n")  # only a line end: empty after normalising
    return doc


def build_mixed_features() -> DoclingDocument:
    doc = DoclingDocument(name="mixed_features")
    doc.add_text(
        DocItemLabel.PAGE_HEADER, "ACME confidential", content_layer=ContentLayer.FURNITURE
    )
    doc.add_title("Mixed content")
    paragraph = doc.add_inline_group()
    doc.add_text(DocItemLabel.TEXT, "Energy is", parent=paragraph)
    doc.add_formula("E = mc^2", parent=paragraph)
    doc.add_text(DocItemLabel.TEXT, "as shown.", parent=paragraph)
    doc.add_code("print('hello')\r\n", code_language=None)
    caption = doc.add_text(DocItemLabel.CAPTION, "Figure 1: a chart")
    picture = doc.add_picture(caption=caption)
    inner = doc.add_text(DocItemLabel.CAPTION, "Figure 2: inside the picture", parent=picture)
    picture.captions.append(inner.get_ref())
    doc.add_text(DocItemLabel.TEXT, "Text inside the picture is not read", parent=picture)
    doc.add_formula("a^2 + b^2 = c^2")
    doc.add_text(DocItemLabel.FOOTNOTE, "1 A footnote.")
    graph = GraphData(
        cells=[
            GraphCell(label=GraphCellLabel.KEY, cell_id=0, text="Name", orig="Name"),
            GraphCell(label=GraphCellLabel.VALUE, cell_id=1, text="Ada", orig="Ada"),
        ]
    )
    doc.add_key_values(graph=graph)
    doc.add_form(graph=graph)
    doc.add_text(DocItemLabel.CHECKBOX_SELECTED, "I agree")
    doc.add_text(DocItemLabel.REFERENCE, "[1] A reference.")
    doc.add_text(DocItemLabel.TEXT, "Speaker notes", content_layer=ContentLayer.NOTES)
    doc.add_text(DocItemLabel.PAGE_FOOTER, "Page 1")  # a footer label left in the body
    doc.add_text(DocItemLabel.TEXT, "")
    return doc


def build_docs_example() -> DoclingDocument:
    """The worked example of docs/projection.md (a test keeps the page in sync)."""
    doc = DoclingDocument(name="lease")
    doc.add_page(page_no=1, size=Size(width=612.0, height=792.0))
    doc.add_title("Lease")
    doc.add_heading("Terms", level=1)
    box = (72, 700, 300, 688)
    doc.add_text(
        DocItemLabel.TEXT,
        "Rent is due monthly at the Caf\u00e9.",
        prov=provenance(1, box, CoordOrigin.BOTTOMLEFT, 32),
    )
    items = doc.add_list_group()
    doc.add_list_item("Effective 1 March 2024", parent=items)
    doc.add_table(data=grid_table([["Item", "Price"], ["Rent", "900"]], header_rows=1))
    doc.add_picture()
    return doc


def build_empty() -> DoclingDocument:
    return DoclingDocument(name="empty")


CONSTRUCTED: dict[str, Callable[[], DoclingDocument]] = {
    "headings_deep": build_headings_deep,
    "headings_skipped": build_headings_skipped,
    "headings_all_h1": build_headings_all_h1,
    "lists_nested": build_lists_nested,
    "table_header": build_table_header,
    "table_headerless": build_table_headerless,
    "table_spans": build_table_spans,
    "table_duplicate_headers": build_table_duplicate_headers,
    "pages_bbox": build_pages_bbox,
    "unicode_text": build_unicode_text,
    "mixed_features": build_mixed_features,
    "empty": build_empty,
    "docs_example": build_docs_example,
}


def build_large_document(paragraphs: int = 2000, tables: int = 50) -> DoclingDocument:
    """The benchmark document: ``paragraphs`` paragraphs and ``tables`` tables.

    A heading opens every 40 paragraphs and a 13x5 table with a header row follows every
    ``paragraphs // tables`` paragraphs: at the default size 2,050 texts and 50 tables,
    about 3.0 MB of DoclingDocument JSON."""
    doc = DoclingDocument(name="large")
    every = max(paragraphs // max(tables, 1), 1)
    made = 0
    for i in range(paragraphs):
        if i % 40 == 0:
            doc.add_heading(f"Chapter {i // 40 + 1}", level=1 + (i // 40) % 3)
        doc.add_text(
            DocItemLabel.TEXT,
            f"Paragraph {i}: the parties agree that clause {i % 17} applies from "
            f"{2000 + i % 25}-0{1 + i % 9}-1{i % 10} unless terminated earlier; "
            "Gr\u00fc\u00dfe, caf\u00e9, na\u00efve \u2014 " + "lorem ipsum dolor sit amet " * 5,
        )
        if (i + 1) % every == 0 and made < tables:
            rows = [["Item", "Quantity", "Price", "Date", "Note"]] + [
                [f"item {made}-{r}", str(r), f"{r * 1.5:.2f}", f"2024-0{1 + r % 9}-01", "ok"]
                for r in range(12)
            ]
            doc.add_table(data=grid_table(rows, header_rows=1))
            made += 1
    return doc


# --------------------------------------------------------------------------------------
# Converted fixtures (real docling)
# --------------------------------------------------------------------------------------


def pinned_zip(data: bytes) -> bytes:
    """Rewrite an OOXML zip with fixed entry dates (python-docx/pptx stamp the clock) and
    a fixed modification time in its core properties (openpyxl stamps the save time
    there, whatever the workbook's properties say)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            pinned = zipfile.ZipInfo(info.filename, date_time=ZIP_EPOCH)
            pinned.compress_type = zipfile.ZIP_DEFLATED
            pinned.external_attr = 0o600 << 16
            content = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rb"\g<1>" + PINNED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode() + rb"\g<2>",
                    content,
                )
            dst.writestr(pinned, content)
    return out.getvalue()


def _pin_core_properties(props: object) -> None:
    for name in ("created", "modified", "last_printed"):
        setattr(props, name, PINNED_TIME.replace(tzinfo=None))
    props.author = "richdoc"  # type: ignore[attr-defined]
    props.last_modified_by = "richdoc"  # type: ignore[attr-defined]
    props.revision = 1  # type: ignore[attr-defined]


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    _pin_core_properties(document.core_properties)
    document.add_heading("Service Agreement", level=0)
    document.add_paragraph("This agreement is dated 1 March 2024 between two parties.")
    document.add_heading("Terms", level=1)
    para = document.add_paragraph("The terms take effect ")
    para.add_run("the following month").bold = True
    para.add_run(" after signature.")
    document.add_paragraph("Deliverables", style="List Bullet")
    document.add_paragraph("Design review", style="List Bullet 2")
    document.add_paragraph("Sign-off by both parties", style="List Bullet 3")
    item = document.add_paragraph("", style="List Number")
    item.add_run("Payment ")
    item.add_run("within 30 days").italic = True
    document.add_heading("Schedule", level=3)  # skips level 2
    table = document.add_table(rows=4, cols=3)
    for r, row in enumerate(
        [
            ["Milestone", "Date", "Amount"],
            ["Kick-off", "2024-03-01", "1000"],
            ["Delivery", "2024-06-30", "5000"],
            ["Merged note", "", "0"],
        ]
    ):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(3, 0).merge(table.cell(3, 1))
    document.add_heading("Signatures", level=1)
    document.add_paragraph("Signed on 2 March 2024.")
    buffer = io.BytesIO()
    document.save(buffer)
    return pinned_zip(buffer.getvalue())


_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _outline_numbering(document: object, num_id: int) -> None:
    """Add numbering ``num_id``: decimal levels shown as "1.", "1.1.", "1.1.1." (legal)."""
    from docx.oxml import parse_xml

    levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
        f'<w:lvlText w:val="{".".join(f"%{j + 1}" for j in range(i + 1))}."/></w:lvl>'
        for i in range(3)
    )
    numbering = document.part.numbering_part.element  # type: ignore[attr-defined]
    abstract = f'<w:abstractNum {_W} w:abstractNumId="{num_id}">{levels}</w:abstractNum>'
    numbering.insert(0, parse_xml(abstract))  # abstract definitions precede the nums
    numbering.append(
        parse_xml(f'<w:num {_W} w:numId="{num_id}"><w:abstractNumId w:val="{num_id}"/></w:num>')
    )


def make_docx_list_numbering() -> bytes:
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    _pin_core_properties(document.core_properties)
    _outline_numbering(document, 90)
    document.add_heading("Terms and conditions", level=1)
    for text, level in [
        ("Scope of the services.", 0),
        ("Payment.", 0),
        ("Invoices are sent monthly.", 1),
        ("Late payment.", 1),
        ("Interest accrues from 1 April 2024.", 2),
        ("Termination.", 0),
    ]:
        paragraph = document.add_paragraph(text, style="List Paragraph")
        numbering = f'<w:numPr {_W}><w:ilvl w:val="{level}"/><w:numId w:val="90"/></w:numPr>'
        paragraph._p.get_or_add_pPr().append(parse_xml(numbering))
    document.add_paragraph("Interest under clause 2.2.1 is capped.")
    document.add_paragraph("Unnumbered note", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    return pinned_zip(buffer.getvalue())


# A price list whose "Details" cell holds a paragraph and a table; the same structure as
# HTML_NESTED_TABLE, so the two conversions can be compared.
NESTED_OUTER: list[list[str | None]] = [["Item", "Details"], ["Tea", None], ["Coffee", "Beans"]]
NESTED_INTRO = "Loose leaf, by weight:"
NESTED_INNER = [["Size", "Price"], ["Small", "3.50"], ["Large", "4.20"]]


def make_docx_nested_table() -> bytes:
    import docx

    document = docx.Document()
    _pin_core_properties(document.core_properties)
    document.add_paragraph("Price list valid from 1 March 2024.")
    outer = document.add_table(rows=len(NESTED_OUTER), cols=2)
    for r, row in enumerate(NESTED_OUTER):
        for c, text in enumerate(row):
            if text is not None:
                outer.cell(r, c).text = text
    cell = outer.cell(1, 1)
    cell.text = NESTED_INTRO
    inner = cell.add_table(rows=len(NESTED_INNER), cols=2)
    for r, values in enumerate(NESTED_INNER):
        for c, value in enumerate(values):
            inner.cell(r, c).text = value
    document.add_paragraph("Prices include tax.")
    buffer = io.BytesIO()
    document.save(buffer)
    return pinned_zip(buffer.getvalue())


def make_pptx() -> bytes:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    _pin_core_properties(deck.core_properties)
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly review"
    body = slide.placeholders[1].text_frame
    body.text = "Revenue grew"
    sub = body.add_paragraph()
    sub.text = "Mostly in the north"
    sub.level = 1
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Numbers"
    grid = slide.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(1.5)).table
    for r, row in enumerate([["Region", "Revenue"], ["North", "120"], ["South", "80"]]):
        for c, text in enumerate(row):
            grid.cell(r, c).text = text
    slide.notes_slide.notes_text_frame.text = "Speaker notes are not projected."
    buffer = io.BytesIO()
    deck.save(buffer)
    return pinned_zip(buffer.getvalue())


HTML = """<!DOCTYPE html>
<html><head><title>Release notes</title></head>
<body>
<header><p>Site header</p></header>
<h1>Release notes</h1>
<p>Version 2 takes effect <b>the next quarter</b>, see <a href="#t">the table</a>.</p>
<h3>Changes</h3>
<ul><li>Faster <i>parsing</i><ul><li>Streaming<ul><li>Back-pressure</li></ul></li></ul></li>
<li>Smaller images</li></ul>
<table id="t"><thead><tr><th>Area</th><th>Area</th><th></th></tr></thead>
<tbody><tr><td colspan="2">Parser</td><td>done</td></tr><tr><td>CLI</td><td>docs</td><td></td></tr>
</tbody></table>
<pre><code>richdoc project in.json -o out.json</code></pre>
<figure><img src="chart.png" alt="chart"><figcaption>Figure 1: throughput</figcaption></figure>
<footer><p>Copyright</p></footer>
</body></html>
"""

HTML_LIST_NUMBERING = """<!DOCTYPE html>
<html><head><title>Minutes</title></head>
<body>
<h2>Resolutions</h2>
<ol start="42"><li>The budget is approved.</li>
<li>The board meets quarterly.<ol><li>First meeting in April.</li></ol></li></ol>
<p>See resolution 43 for the schedule.</p>
<ul><li>Unnumbered remark</li></ul>
</body></html>
"""

HTML_NESTED_TABLE = """<!DOCTYPE html>
<html><head><title>Prices</title></head>
<body>
<p>Price list valid from 1 March 2024.</p>
<table>
<tr><th>Item</th><th>Details</th></tr>
<tr><td>Tea</td><td>Loose leaf, by weight:<table>
<tr><th>Size</th><th>Price</th></tr><tr><td>Small</td><td>3.50</td></tr>
<tr><td>Large</td><td>4.20</td></tr></table></td></tr>
<tr><td>Coffee</td><td>Beans</td></tr>
</table>
<p>Prices include tax.</p>
</body></html>
"""

MARKDOWN = """# Meeting notes

Held on 2024-05-06.\r
Attendees: Ada, Grace.

## Decisions

- Adopt the projection
  - with golden files
    - byte for byte
- Ship in June

| Owner | Task | Task |
|-------|------|------|
| Ada   | spec | tests |
|       |      |       |

```python
print("ok")
```

#### Deep heading (skips level 3)

Caf\u0065\u0301 au lait \U0001f375.
"""


def make_pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1)  # invariant: no clock, fixed id
    pdf.setTitle("richdoc native pdf")
    pdf.drawString(72, 760, "Lease agreement")
    pdf.drawString(72, 740, "Effective 1 April 2024, signed 15 March 2024.")
    pdf.showPage()
    pdf.drawString(72, 760, "Page two text.")
    pdf.save()
    return buffer.getvalue()


def make_xlsx() -> bytes:
    """A workbook of two sheets with content and an empty one: suppliers with the dates
    their contracts were signed (a date cell, a date-time cell) and notes."""
    from openpyxl import Workbook

    book = Workbook()
    book.properties.created = book.properties.modified = PINNED_TIME.replace(tzinfo=None)
    book.properties.creator = "richdoc"
    suppliers = book.active
    assert suppliers is not None
    suppliers.title = "Suppliers"
    for row in (
        ("Supplier", "Contract signed", "Amount"),
        ("Acme Corp", dt.date(2024, 3, 1), 1200),
        ("Beta LLC", dt.date(2024, 5, 2), 800),
    ):
        suppliers.append(row)
    suppliers["D1"] = "Reviewed"
    suppliers["D2"] = dt.datetime(2024, 6, 3, 14, 30)
    suppliers["D2"].number_format = "yyyy-mm-dd hh:mm"
    notes = book.create_sheet("Notes & <remarks>")
    notes["A1"] = "Renewal is negotiated each spring."
    book.create_sheet("Empty")
    buffer = io.BytesIO()
    book.save(buffer)
    return pinned_zip(buffer.getvalue())


CONVERTED: dict[str, tuple[str, Callable[[], bytes], str]] = {
    # name: (input file name, generator, docling pipeline)
    "docx_real": ("input.docx", make_docx, "SimplePipeline"),
    "pptx_real": ("input.pptx", make_pptx, "SimplePipeline"),
    "html_real": ("input.html", lambda: HTML.encode(), "SimplePipeline"),
    "md_real": ("input.md", lambda: MARKDOWN.encode(), "SimplePipeline"),
    "pdf_native": ("input.pdf", make_pdf, "NativePdfPipeline"),
    "docx_list_numbering": ("input.docx", make_docx_list_numbering, "SimplePipeline"),
    "html_list_numbering": ("input.html", lambda: HTML_LIST_NUMBERING.encode(), "SimplePipeline"),
    "docx_nested_table": ("input.docx", make_docx_nested_table, "SimplePipeline"),
    "html_nested_table": ("input.html", lambda: HTML_NESTED_TABLE.encode(), "SimplePipeline"),
    "xlsx_sheets": ("input.xlsx", make_xlsx, "SimplePipeline"),
}


def _scanned_contract() -> bytes:
    from tests.support import scans

    return scans.scanned_pdf(scans.CONTRACT_PAGES, dpi=150)


def _mixed_report() -> bytes:
    from tests.support import scans

    return scans.mixed_pdf(
        [
            ("text", ["Field report, page one: typed, with its text layer."]),
            ("scan", ["Page two is a scan of the signed form.", "Signed on 14 May 2024."]),
        ]
    )


def _photographed_invoice() -> bytes:
    from tests.support import scans

    return scans.image_file(
        [["Invoice 4471, dated March 3, 2024.", "Total due: 1,250 USD."]], "PNG"
    )


# Documents only OCR reads (richdoc's parse worker, the native pipeline, OcrMode auto): a
# scanned PDF, a PDF with one scanned page, an image. OCR's boxes and confidences are
# floats an engine computes: the committed docling.json is the input of the goldens made
# from it, and a fresh conversion is held to the same text, pages and record, not bytes.
OCR_CONVERTED: dict[str, tuple[str, Callable[[], bytes], str]] = {
    "ocr_scanned_pdf": ("input.pdf", _scanned_contract, "NativeOcrPdfPipeline"),
    "ocr_mixed_pdf": ("input.pdf", _mixed_report, "NativeOcrPdfPipeline"),
    "ocr_image": ("input.png", _photographed_invoice, "NativeOcrPdfPipeline"),
}


def convert(path: Path) -> DoclingDocument:
    """Convert one generated file with docling (the PDF through NativePdfPipeline)."""
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.pipeline_options import NativePdfPipelineOptions
    from docling.document_converter import DocumentConverter, NativePdfFormatOption

    from richdoc.formats import DocFormat
    from richdoc.parse.convert import simple_format_option

    options = NativePdfPipelineOptions(generate_page_images=False, generate_picture_images=False)
    workbook = simple_format_option(DocFormat.XLSX)
    assert workbook is not None
    converter = DocumentConverter(
        format_options={
            InputFormat.PDF: NativePdfFormatOption(pipeline_options=options),
            InputFormat.XLSX: workbook,
        }
    )
    return converter.convert(path, raises_on_error=True).document


def convert_with_ocr(path: Path) -> DoclingDocument:
    """Convert one generated scan as the parse step does: richdoc's isolated worker, the
    native pipeline, OCR reading the pages without a text layer."""
    import tempfile

    from richdoc.parse.ocr.mode import OcrMode
    from richdoc.parse.settings import ParseLimits, ParserSettings, Pipeline
    from richdoc.parse.step import parse_file, shared_worker

    worker = shared_worker(ParserSettings(Pipeline.NATIVE, ocr_mode=OcrMode.AUTO), quiet=True)
    limits = ParseLimits(max_pages=10, timeout_s=600, mem_ceiling_mb=4096)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "docling.json"
        parse_file(path, out, limits, worker=worker)
        return DoclingDocument.model_validate_json(out.read_bytes())


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


def docling_json(doc: DoclingDocument) -> bytes:
    return (doc.model_dump_json(indent=1) + "\n").encode("utf-8")


def source_json(source: ProjectionSource) -> bytes:
    return (source.model_dump_json(indent=1) + "\n").encode("utf-8")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_expected(directory: Path, doc_bytes: bytes, source: ProjectionSource) -> None:
    """``docling.json``, ``source.json`` and the ``projection.json`` they give."""
    from richdoc.projection import load_docling

    _write(directory / "docling.json", doc_bytes)
    _write(directory / "source.json", source_json(source))
    _write(directory / "projection.json", project(load_docling(doc_bytes), source).to_json_bytes())


def constructed_source(name: str, doc_bytes: bytes) -> ProjectionSource:
    sha = hashlib.sha256(doc_bytes).hexdigest()
    # Named like the file `richdoc project` would read: <document name>.docling.json.
    doc_name = json.loads(doc_bytes)["name"]
    return ProjectionSource(
        name=f"{doc_name}.docling.json", sha256=sha, pipeline=CONSTRUCTED_PIPELINE
    )


def main() -> None:
    for name, build in CONSTRUCTED.items():
        doc_bytes = docling_json(build())
        write_expected(GOLDEN / name, doc_bytes, constructed_source(name, doc_bytes))
        print(f"constructed {name}")
    for name, (file_name, make, pipeline) in {**CONVERTED, **OCR_CONVERTED}.items():
        raw = make()
        _write(GOLDEN / name / file_name, raw)
        converter = convert_with_ocr if name in OCR_CONVERTED else convert
        doc_bytes = docling_json(converter(GOLDEN / name / file_name))
        source = ProjectionSource(
            name=file_name, sha256=hashlib.sha256(raw).hexdigest(), pipeline=pipeline
        )
        write_expected(GOLDEN / name, doc_bytes, source)
        print(f"converted {name}")


if __name__ == "__main__":
    main()
