"""PDFs with a structure known by construction, for the tests of the PDF pipelines: a
table of contents, numbered headings over two columns of text, a form beside a table,
and scans of any PDF.

Made with reportlab (invariant: the same bytes on every run); the scans are the pages
rendered by pdfium into an image-only PDF (``tests.support.scans``)."""

from __future__ import annotations

import io

from tests.support.scans import image_pdf

CONTENTS = [("1. Scope", "1"), ("2. Findings", "2"), ("3. Follow-up", "4"), ("Annex", "7")]
LEFT_COLUMN = [
    "The left column opens the section. It describes the north warehouse, where the "
    "audit began on the 3rd of June 2025 and where most of the stock is kept.",
    "A second paragraph of the left column continues the description with the loading "
    "bays and the dock levellers, all of which passed their load test.",
]
RIGHT_COLUMN = [
    "The right column follows the left one. It lists what remains to be done after the "
    "audit, in the order the team agreed on at the closing meeting.",
    "Its last paragraph names the date of the next audit, the first week of December "
    "2025, and who is to lead it.",
]


def contents_and_columns_pdf() -> bytes:
    """Page 1: a title and a table of contents (dot leaders, page numbers). Page 2: the
    heading "2. Findings" across the page, then two columns of two paragraphs each."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        FrameBreak,
        NextPageTemplate,
        PageBreak,
        PageTemplate,
        Paragraph,
        Spacer,
    )

    width, height = A4
    margin, gutter, top_band = 72, 24, 90
    column = (width - 2 * margin - gutter) / 2
    title = ParagraphStyle("title", fontName="Helvetica-Bold", fontSize=18, leading=22)
    heading = ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=14, leading=18)
    entry = ParagraphStyle("entry", fontName="Helvetica", fontSize=11, leading=16)
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13, spaceAfter=9)
    buffer = io.BytesIO()
    doc = BaseDocTemplate(buffer, pagesize=A4, title="Audit handbook", invariant=True)
    full = Frame(margin, margin, width - 2 * margin, height - 2 * margin, id="full")
    band = Frame(margin, height - margin - top_band, width - 2 * margin, top_band, id="band")
    columns = [
        Frame(margin + i * (column + gutter), margin, column, height - 2 * margin - top_band)
        for i in range(2)
    ]
    doc.addPageTemplates(
        [
            PageTemplate(id="contents", frames=[full]),
            PageTemplate(id="columns", frames=[band, *columns]),
        ]
    )
    dots = "." * 60
    story = [
        Paragraph("Audit Handbook", title),
        Spacer(1, 18),
        Paragraph("Contents", heading),
        Spacer(1, 6),
        *[
            Paragraph(f"{name} <font color='grey'>{dots}</font> {page}", entry)
            for name, page in CONTENTS
        ],
        NextPageTemplate("columns"),
        PageBreak(),
        Paragraph("2. Findings", heading),
        FrameBreak(),
        *[Paragraph(text, body) for text in LEFT_COLUMN],
        FrameBreak(),
        *[Paragraph(text, body) for text in RIGHT_COLUMN],
    ]
    doc.build(story)
    return buffer.getvalue()


FORM_FIELDS = [
    ("Supplier", "Northwind Traders"),
    ("Delivery date", "12 March 2025"),
    ("Order number", "PO-4471"),
    ("Is the delivery complete and signed for by the receiving clerk?", "Yes"),
    ("Remarks", "Two pallets arrived with torn wrapping and were set aside for inspection"),
]
PRICE_LIST = [
    ("Item", "Units", "Price"),
    ("Pallet", "12", "40.00"),
    ("Crate", "30", "12.50"),
    ("Drum", "4", "85.00"),
]


def form_and_table_pdf() -> bytes:
    """A heading, a ruled form (labels in bold in a shaded column, their values beside
    them in the body's type, a long label and a long value wrapped onto a second line),
    then a ruled price list whose header row and first column are bold."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    for name, file in (("Vera", "Vera.ttf"), ("VeraBd", "VeraBd.ttf")):
        # Fonts embedded by name (reportlab's own Bitstream Vera), so the text layer
        # says which text is bold, as a typeset form's does.
        pdfmetrics.registerFont(TTFont(name, file))
    heading = ParagraphStyle("h1", fontName="VeraBd", fontSize=14, leading=18)
    label = ParagraphStyle("label", fontName="VeraBd", fontSize=11, leading=14)
    value = ParagraphStyle("value", fontName="Vera", fontSize=10, leading=13)
    ruled = [
        ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]
    form = Table(
        [[Paragraph(k, label), Paragraph(v, value)] for k, v in FORM_FIELDS],
        colWidths=[200, 250],
        style=TableStyle(
            [
                *ruled,
                ("BACKGROUND", (0, 0), (0, -1), colors.lavender),
                ("RIGHTPADDING", (0, 0), (0, -1), 30),
            ]
        ),
    )
    prices = Table(
        PRICE_LIST,
        colWidths=[150, 100, 100],
        style=TableStyle(
            [
                *ruled,
                ("FONTNAME", (0, 0), (-1, -1), "Vera"),
                ("FONTNAME", (0, 0), (-1, 0), "VeraBd"),
                ("FONTNAME", (0, 1), (0, -1), "VeraBd"),
            ]
        ),
    )
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=A4, title="Delivery note", invariant=True)
    doc.build(
        [
            Paragraph("Delivery Note", heading),
            Spacer(1, 12),
            form,
            Spacer(1, 24),
            Paragraph("Price List", heading),
            Spacer(1, 12),
            prices,
        ]
    )
    return buffer.getvalue()


def scanned(pdf: bytes, *, dpi: int = 200) -> bytes:
    """The pages of ``pdf`` as a scanner would give them: images only, no text layer."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        images = [page.render(scale=dpi / 72).to_pil().convert("L") for page in document]
    finally:
        document.close()
    return image_pdf(images, dpi=dpi)
