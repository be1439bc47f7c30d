"""Pages that read right to left (``richdoc.parse.right_to_left``): the light pipeline
reads their lines and regions mirrored, so a flush-right paragraph, a form's label
beside its value and columns that run from the right read as they are written; and its
reading order (``LightReadingOrder``) reads a form's fields label then value. Pages are
made here: Arabic lines in docling's own types, boxes in points from the top-left
corner, as docling-parse gives a right-to-left page (each line's words in reading
order)."""

from __future__ import annotations

from docling.datamodel.base_models import Cluster, Page
from docling.models.postprocessing.reading_order_rb import PageElement, SeparatorElement
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, Size
from docling_core.types.doc.page import (
    BoundingRectangle,
    PdfPageBoundaryType,
    PdfPageGeometry,
    SegmentedPdfPage,
    TextCell,
    TextDirection,
)

from richdoc.parse.light_pipeline import LightReadingOrder, light_clusters
from richdoc.parse.light_rules import FIELD_GAP
from richdoc.parse.paragraphs import Line, paragraphs
from richdoc.parse.right_to_left import (
    RightToLeftReadingOrder,
    mirrored_line,
    reads_right_to_left,
)

WIDTH, HEIGHT = 595.0, 842.0
ARABIC = "تعتبر البرمجة من الأدوات القوية التي يمكن أن تعزز الإنتاجية"


def test_a_page_reads_right_to_left_when_most_of_its_text_does():
    assert reads_right_to_left([ARABIC, "R", "Python", "2024"])
    assert not reads_right_to_left(["The parties agree as follows", "مرحبا"])
    assert not reads_right_to_left(["", "   "])


def _flush_right(*rights_and_lefts: float) -> list[Line]:
    return [
        Line(left, 100 + 14 * i, 540, 110 + 14 * i, ARABIC)
        for i, left in enumerate(rights_and_lefts)
    ]


def test_a_flush_right_paragraph_with_a_short_last_line_is_one_paragraph_read_mirrored():
    # Justified right-to-left text: flush right, its last line short at the right.
    lines = _flush_right(72, 72, 400)
    assert len(paragraphs(lines)) == 2  # read from the left, the short line stands apart
    mirrored = [mirrored_line(line, WIDTH) for line in lines]
    assert [p.lines for p in paragraphs(mirrored)] == [[0, 1, 2]]


def _element(cid: int, left: float, top: float, right: float, bottom: float, text: str):
    box = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=CoordOrigin.TOPLEFT)
    box = box.to_bottom_left_origin(HEIGHT)
    return PageElement(
        cid=cid,
        text=text,
        page_no=1,
        page_size=Size(width=WIDTH, height=HEIGHT),
        label=DocItemLabel.TEXT,
        l=box.l,
        r=box.r,
        t=box.t,
        b=box.b,
        coord_origin=box.coord_origin,
    )


def _columns(text: str) -> list[PageElement]:
    """Two columns of two paragraphs each, the left column's first."""
    return [
        _element(0, 72, 100, 280, 200, f"{text} 1"),
        _element(1, 72, 220, 280, 320, f"{text} 2"),
        _element(2, 310, 100, 520, 200, f"{text} 3"),
        _element(3, 310, 220, 520, 320, f"{text} 4"),
    ]


def test_the_columns_of_a_right_to_left_page_are_read_from_the_right():
    order = RightToLeftReadingOrder()
    ordered = order.predict_reading_order(_columns(ARABIC))
    assert [element.cid for element in ordered] == [2, 3, 0, 1]
    # the boxes come back as they were, not mirrored
    assert {(e.cid, round(e.l)) for e in ordered} == {(0, 72), (1, 72), (2, 310), (3, 310)}
    english = order.predict_reading_order(_columns("The parties agree"))
    assert [element.cid for element in english] == [0, 1, 2, 3]  # docling's own order


def _page(lines: list[tuple[float, float, float, float, str]]) -> Page:
    """A page of text-layer cells, one a line, in the order given."""
    cells = [
        TextCell(
            index=index,
            rect=BoundingRectangle.from_bounding_box(
                BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=CoordOrigin.TOPLEFT)
            ),
            text=text,
            orig=text,
            from_ocr=False,
            text_direction=TextDirection.RIGHT_TO_LEFT,
        )
        for index, (left, top, right, bottom, text) in enumerate(lines)
    ]
    page_box = BoundingBox(l=0, t=0, r=WIDTH, b=HEIGHT, coord_origin=CoordOrigin.TOPLEFT)
    geometry = PdfPageGeometry(
        angle=0,
        rect=BoundingRectangle.from_bounding_box(page_box),
        boundary_type=PdfPageBoundaryType.CROP_BOX,
        art_bbox=page_box,
        bleed_bbox=page_box,
        crop_bbox=page_box,
        media_bbox=page_box,
        trim_bbox=page_box,
    )
    page = Page(page_no=1, size=Size(width=WIDTH, height=HEIGHT))
    page.parsed_page = SegmentedPdfPage(
        dimension=geometry, char_cells=[], word_cells=[], textline_cells=cells
    )
    return page


def test_a_right_to_left_form_s_labels_beside_their_values_are_no_headings():
    # Labels flush right in a larger type than their values, each value on its label's
    # row to its left; then a flush-right paragraph in the values' type whose last line
    # is short.
    rows = [
        (459.0, 162.0, 519.0, 179.0, "نام استاندارد"),
        (69.0, 161.0, 265.0, 175.0, "شمشه و شمشال توليد شده"),
        (421.0, 216.0, 519.0, 233.0, "شماره استاندارد ملی"),
        (237.0, 215.0, 265.0, 229.0, "20300"),
        (404.0, 260.0, 519.0, 277.0, "خطای مجاز تحويل"),
        (107.0, 259.0, 219.0, 273.0, "آخرين محموله قابل تحويل"),
        *[(72.0, 300.0 + 18 * i, 519.0, 314.0 + 18 * i, ARABIC) for i in range(3)],
        (400.0, 354.0, 519.0, 368.0, "بعيدة المدى"),
    ]
    figure = BoundingBox(l=38, t=15, r=561, b=831, coord_origin=CoordOrigin.TOPLEFT)
    clusters = light_clusters(
        _page(rows), [Cluster(id=0, label=DocItemLabel.TEXT, bbox=figure, confidence=0.9)]
    ).clusters
    assert not [c for c in clusters if c.label is DocItemLabel.SECTION_HEADER]
    # the paragraph is one region, mirrored back: flush right, as on the page
    [paragraph] = [c for c in clusters if c.bbox.t >= 299]
    assert (round(paragraph.bbox.l), round(paragraph.bbox.r)) == (72, 519)
    assert round(paragraph.bbox.b) == 368


def _form(labels: list[str], values: list[str]) -> list[PageElement]:
    """A right-to-left form's fields as the light pipeline gives them: each label's cell
    on the right reaching to its value's on the left, a row high, label first."""
    fields = []
    for row, (label, value) in enumerate(zip(labels, values, strict=True)):
        top, bottom = 200 + 24 * row, 218 + 24 * row
        fields.append(_element(2 * row, 260 + FIELD_GAP, top, 519, bottom, label))
        fields.append(_element(2 * row + 1, 69, top, 260, bottom, value))
    return fields


def test_a_right_to_left_form_reads_each_label_then_its_value_across_the_rule_between():
    labels = ["شماره استاندارد ملی", "تاريخ پذيرش", "مشاور پذيرش"]
    values = ["20300", "1403/10/04", "کارگزاری آرمون بورس"]
    # the rule drawn between the form's columns, which docling takes for a column's edge
    rule = BoundingBox(l=265, t=195, r=265, b=270, coord_origin=CoordOrigin.TOPLEFT)
    rule = rule.to_bottom_left_origin(HEIGHT)
    separator = SeparatorElement(
        cid=-1,
        page_no=1,
        page_size=Size(width=WIDTH, height=HEIGHT),
        orientation="vertical",
        l=rule.l,
        r=rule.r,
        t=rule.t,
        b=rule.b,
        coord_origin=rule.coord_origin,
    )
    ordered = LightReadingOrder().predict_reading_order(_form(labels, values), [separator])
    assert [element.text for element in ordered] == [
        text for field in zip(labels, values, strict=True) for text in field
    ]


def test_a_label_is_not_merged_into_its_value_though_a_paragraph_runs_on_into_a_column():
    order = LightReadingOrder()
    label = _element(0, 72, 100, 200 - FIELD_GAP, 112, "Supplier")
    value = _element(1, 200, 100, 400, 112, "Northwind Traders")
    assert order.predict_merges([label, value]) == {}
    # A sentence running on from one column into the next is still joined, as docling does.
    left = _element(0, 72, 100, 280, 300, "the audit began in the north warehouse and")
    right = _element(1, 310, 100, 520, 200, "ended in the south one")
    assert order.predict_merges([left, right]) == {0: [1]}
