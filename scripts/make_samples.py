"""Generate samples/ deterministically: one document per feature and failure route.

    python scripts/make_samples.py

| file                       | shows                                                         |
|----------------------------|---------------------------------------------------------------|
| contract.docx              | headings, a table, conflicting effective/signed dates         |
| quarterly-review.pptx      | a slide deck (page = slide, bbox in EMU)                      |
| field-report.pdf           | a PDF report: headings with levels, paragraphs, a table, dates |
| policy-update.html         | a relative date ("effective the following quarter") + a date  |
| team-notes.md              | a note without any date (undated)                             |
| inventory.xlsx             | a spreadsheet (table rows keyed by header)                    |
| broken.docx                | corrupt input: not a ZIP archive                              |
| drawing.dwg                | an unsupported format (feature tag format:dwg)                |

Office files carry fixed metadata timestamps so the bytes are identical on every run.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "samples"
FIXED_TIME = dt.datetime(2026, 1, 1, 0, 0, 0)
ZIP_TIME = (2026, 1, 1, 0, 0, 0)


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite an OOXML package with fixed entry timestamps and order (byte-stable)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in sorted(
            source.infolist(), key=lambda i: (i.filename != "[Content_Types].xml", i.filename)
        ):
            entry = zipfile.ZipInfo(info.filename, ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                # openpyxl stamps the save time into "modified" whatever it was set to.
                content = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rb"\g<1>2026-01-01T00:00:00Z\g<2>",
                    content,
                )
            target.writestr(entry, content)
    return out.getvalue()


def contract_docx() -> bytes:
    from docx import Document

    doc = Document()
    props = doc.core_properties
    props.created = props.modified = props.last_printed = FIXED_TIME
    props.author = props.last_modified_by = "richdoc samples"
    props.revision = 1
    doc.add_heading("Master Services Agreement", level=1)
    doc.add_paragraph(
        "This agreement is made between Northwind Analytics Ltd and Contoso Retail plc."
    )
    doc.add_heading("1. Term", level=2)
    doc.add_paragraph("This agreement is effective 1 March 2024 and runs for twenty-four months.")
    doc.add_paragraph("It was signed on 15 February 2024 by both parties in London.")
    doc.add_heading("2. Fees", level=2)
    table = doc.add_table(rows=3, cols=3)
    for row, values in zip(
        table.rows,
        [
            ("Service", "Unit", "Monthly fee"),
            ("Data pipeline", "per tenant", "EUR 4,200"),
            ("Support", "per seat", "EUR 35"),
        ],
        strict=True,
    ):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    doc.add_heading("2.1 Invoicing", level=3)
    doc.add_paragraph("Invoices are issued monthly in arrears.")
    doc.add_paragraph("Payment is due within thirty days.", style="List Bullet")
    doc.add_paragraph("Late payments accrue interest at 2% above base rate.", style="List Bullet")
    buffer = io.BytesIO()
    doc.save(buffer)
    return _normalise_zip(buffer.getvalue())


def deck_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    props = prs.core_properties
    props.created = props.modified = props.last_printed = FIXED_TIME
    props.author = props.last_modified_by = "richdoc samples"
    props.revision = 1
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "Quarterly Review"
    title.placeholders[1].text = "Operations, as of 31 March 2025"
    bullets = prs.slides.add_slide(prs.slide_layouts[1])
    bullets.shapes.title.text = "Highlights"
    body = bullets.placeholders[1].text_frame
    body.text = "Ingestion volume up 40% quarter on quarter"
    for line in ("Median parse time down to 1.8 s", "Dead-letter rate below 0.5%"):
        body.add_paragraph().text = line
    table_slide = prs.slides.add_slide(prs.slide_layouts[5])
    table_slide.shapes.title.text = "Volumes by format"
    rows = [
        ("Format", "Documents", "Pages"),
        ("PDF", "12,400", "310,000"),
        ("DOCX", "8,100", "96,000"),
        ("PPTX", "2,300", "41,000"),
    ]
    shape = table_slide.shapes.add_table(
        len(rows), 3, Inches(0.5), Inches(1.5), Inches(9), Inches(3)
    )
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            shape.table.cell(r, c).text = value
    buffer = io.BytesIO()
    prs.save(buffer)
    return _normalise_zip(buffer.getvalue())


def report_pdf() -> bytes:
    """Two pages: a title, numbered headings at two levels, paragraphs that wrap over
    several lines (a date among them), and a ruled table with a header row."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table

    title = ParagraphStyle("title", fontName="Helvetica-Bold", fontSize=18, leading=22)
    heading = ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=14, leading=18)
    subheading = ParagraphStyle("h2", fontName="Helvetica-Bold", fontSize=12, leading=15)
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=11, leading=14, spaceAfter=8)
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(
        buffer, pagesize=A4, title="Field report", invariant=True, rightMargin=200
    )
    table = Table(
        [
            ["Area", "Checked", "Issues", "Due"],
            ["Loading bays", "14", "2 seals worn", "30 June 2025"],
            ["Cold storage", "3", "none", "-"],
            ["Racking", "22", "1 bent upright", "15 July 2025"],
        ],
        style=[
            ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 10),
            ("FONT", (0, 1), (-1, -1), "Helvetica", 10),
            ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
        ],
    )
    doc.build(
        [
            Paragraph("Field Report: Warehouse Audit", title),
            Spacer(1, 12),
            Paragraph("Prepared 12 June 2025 by the operations team.", body),
            Paragraph("1. Scope", heading),
            Paragraph(
                "The audit covered the loading bays, the cold storage rooms and the racking "
                "of the north warehouse. It began on the morning of the 3rd of June 2025 and "
                "ended two days later, when the last of the inspection sheets was signed.",
                body,
            ),
            Paragraph("1.1 Loading bays", subheading),
            Paragraph(
                "All 14 loading bays were inspected; two need new seals before the summer "
                "peak, and the dock levellers passed their load test without remarks.",
                body,
            ),
            Paragraph("2. Findings", heading),
            Paragraph("The table below lists what was checked and what is due.", body),
            table,
            Spacer(1, 12),
            Paragraph("2.1 Cold storage", subheading),
            Paragraph(
                "Cold storage held between 2 and 4 degrees throughout the visit, and the "
                "alarm log showed no excursion since the last audit.",
                body,
            ),
            PageBreak(),
            Paragraph("3. Follow-up actions", heading),
            Paragraph(
                "Follow-up actions are tracked in the maintenance plan; the next audit is "
                "scheduled for the first week of December 2025.",
                body,
            ),
        ]
    )
    return buffer.getvalue()


def policy_html() -> bytes:
    return b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Travel policy update</title></head>
<body>
<h1>Travel policy update</h1>
<p>Published 10 May 2024 by the finance team.</p>
<h2>What changes</h2>
<p>Rail is now the default for journeys under four hours. The new rules are effective the
following quarter, once budgets are approved.</p>
<ul><li>Economy class for flights under six hours</li><li>Hotel cap of EUR 180 per night</li></ul>
</body></html>
"""


def notes_md() -> bytes:
    return b"""# Team notes

## Retrospective

- The ingestion dashboard now shows dead-lettered documents per failure kind.
- Operators asked for a one-line summary of each redrive.
- We agreed to keep the parse tiers at three and revisit the memory sizes later.

## Next steps

Write the runbook for redriving the dead-letter queue, and review the alarm thresholds
with the on-call rotation before the next release.
"""


def inventory_xlsx() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    wb.properties.created = wb.properties.modified = FIXED_TIME
    wb.properties.creator = "richdoc samples"
    ws = wb.active
    ws.title = "Stock"
    for row in [
        ("SKU", "Item", "Quantity"),
        ("A-100", "Pallet wrap", 240),
        ("B-220", "Cold-chain label", 1200),
        ("C-310", "Seal kit", 16),
    ]:
        ws.append(row)
    buffer = io.BytesIO()
    wb.save(buffer)
    return _normalise_zip(buffer.getvalue())


SAMPLES = {
    "contract.docx": contract_docx,
    "quarterly-review.pptx": deck_pptx,
    "field-report.pdf": report_pdf,
    "policy-update.html": policy_html,
    "team-notes.md": notes_md,
    "inventory.xlsx": inventory_xlsx,
    "broken.docx": lambda: b"This is not a Word document, just text with a .docx name.\n",
    "drawing.dwg": lambda: b"AC1032\x00\x00\x00\x00\x00" + bytes(range(64)),
}


def main() -> None:
    for name, make in SAMPLES.items():
        (HERE / name).write_bytes(make())
        print(f"wrote samples/{name}")


if __name__ == "__main__":
    main()
