"""PDFs with a structure known by construction, for the tests of the PDF pipelines: a
table of contents, numbered headings over two columns of text, and scans of any PDF.

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


def scanned(pdf: bytes, *, dpi: int = 200) -> bytes:
    """The pages of ``pdf`` as a scanner would give them: images only, no text layer."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        images = [page.render(scale=dpi / 72).to_pil().convert("L") for page in document]
    finally:
        document.close()
    return image_pdf(images, dpi=dpi)
