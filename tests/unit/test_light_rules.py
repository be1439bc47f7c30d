"""The light pipeline's rules over its layout model's regions (``richdoc.parse.light_rules``),
where CDLA is known to be wrong: figures that are text, tables inside them, headings
merged into the paragraph below, tables of contents, running prose read as a table, a
form read as a table, and a table's header row."""

from __future__ import annotations

from richdoc.parse.light_rules import (
    CellText,
    first_page_title,
    first_row_is_header,
    forms,
    heading_first_row,
    heading_row,
    heads,
    labels,
    only_furniture,
    reads_as_contents,
    reads_as_heading,
    reads_as_prose,
    tabular_blocks,
    text_covers_figure,
)
from richdoc.parse.paragraphs import Line

FIGURE = (50.0, 100.0, 550.0, 400.0)


def _row(top: float, *cells: tuple[float, float, str], height: float = 10.0) -> list[Line]:
    return [Line(left, top, right, top + height, text) for left, right, text in cells]


def test_a_figure_region_full_of_sentences_is_text():
    lines = [
        Line(60, 110 + 14 * i, 540, 120 + 14 * i, "a line of running text in a box")
        for i in range(4)
    ]
    assert text_covers_figure(FIGURE, lines)


def test_a_picture_with_a_few_labels_stays_a_figure():
    labels = [Line(100, 150, 140, 158, "Nut"), Line(300, 300, 350, 308, "Bolt")]
    assert not text_covers_figure(FIGURE, labels)
    assert not text_covers_figure(FIGURE, [])


def test_a_grid_inside_a_text_figure_is_a_table_and_lines_apart_from_it_are_not():
    lines = [
        *_row(110, (60, 400, "28. Are services provided to these groups? Please select")),
        *_row(140, (300, 380, "State funded"), (450, 500, "CSOs")),
        *_row(155, (60, 200, "Persons with disabilities"), (320, 330, "*"), (470, 480, "*")),
        *_row(170, (60, 200, "Children"), (320, 330, "*"), (470, 480, "*")),
        *_row(185, (60, 200, "Women"), (320, 330, "*"), (470, 480, "*")),
        *_row(320, (60, 150, "Global Report"), (300, 330, "209")),  # a footer, far below
    ]
    assert tabular_blocks(FIGURE, lines) == [(60, 140, 500, 195)]


def test_a_column_header_wrapped_onto_a_second_line_stays_in_the_grid():
    lines = [
        *_row(140, (300, 380, "State funded"), (450, 500, "CSOs")),
        *_row(152, (310, 360, "legal aid")),  # under "State funded", inside its width
        *_row(170, (60, 200, "Persons with disabilities"), (320, 330, "*"), (470, 480, "*")),
        *_row(185, (60, 200, "Children"), (320, 330, "*"), (470, 480, "*")),
        *_row(200, (60, 200, "Women"), (320, 330, "*"), (470, 480, "*")),
    ]
    assert tabular_blocks(FIGURE, lines) == [(60, 140, 500, 210)]
    beside = [*lines[:2], *_row(152, (60, 120, "a note")), *lines[3:]]  # not under a cell
    assert tabular_blocks(FIGURE, beside) == [(60, 170, 480, 210)]


def test_a_bullet_beside_its_text_is_no_grid():
    bullets = [
        line
        for i in range(5)
        for line in _row(110 + 15 * i, (60, 66, "\u2022"), (72, 400, f"option {i}"))
    ]
    assert tabular_blocks(FIGURE, bullets) == []


def test_a_short_emphasised_or_larger_line_above_a_paragraph_is_a_heading():
    body = [
        Line(72, 120 + 14 * i, 540, 130 + 14 * i, "running text of the section") for i in range(3)
    ]
    assert heading_row(Line(72, 100, 200, 110, "Boots Self-Locking Nut", emphasis=True), body)
    assert heading_row(Line(72, 100, 200, 113, "(1) 개정 법률"), body)  # 1.3 times the body
    for not_a_heading in (
        Line(72, 100, 200, 110, "Boots Self-Locking Nut"),  # set as the text below
        Line(72, 100, 200, 113, "The parties agree as follows:"),  # closing punctuation
        Line(72, 100, 200, 113, "and continues here"),  # lower case: a sentence goes on
        Line(72, 100, 200, 113, "\u2022 An item"),  # a bullet
        Line(72, 100, 200, 113, "12"),  # a number, no words
    ):
        assert not heading_row(not_a_heading, body), not_a_heading


def test_a_heading_heads_what_starts_right_below_it_not_a_value_beside_it():
    heading = Line(72, 100, 200, 110, "Scope of works", emphasis=True)
    assert heads(heading, Line(72, 116, 540, 126, "The works are"))
    assert not heads(heading, Line(300, 100, 540, 110, "value beside the label"))
    assert not heads(heading, Line(72, 160, 540, 170, "far below, after a gap"))
    assert not heads(heading, Line(320, 116, 540, 126, "below, in another column"))


def test_a_form_s_label_with_its_value_beside_it_on_its_row_is_no_heading():
    label = Line(72, 100, 200, 113, "Standard number")
    assert labels(label, Line(300, 101, 420, 111, "20300"))
    assert not labels(label, Line(72, 120, 540, 130, "the paragraph below it"))
    assert not labels(label, Line(300, 140, 420, 150, "a value a row further down"))


def test_a_first_page_header_above_the_body_and_on_no_other_page_is_the_title():
    header = (72.0, 80.0, 264.0, 90.0)
    body = [(72.0, 98.0, 518.0, 176.0)]
    assert first_page_title(header, "MASTER SERVICES AGREEMENT", body, [])
    assert first_page_title(header, "MASTER SERVICES AGREEMENT", body, ["Page 2"])
    # A running header: on the other pages too (numbers aside), it is furniture.
    assert not first_page_title(
        header, "Acme Corp - Annual report", body, ["Acme Corp - Annual report"]
    )
    assert not first_page_title(header, "Page 1 of 3", body, ["Page 2 of 3", "Page 3 of 3"])
    # Below the body's first line, or not worded as a heading, it is no title.
    assert not first_page_title(
        header, "MASTER SERVICES AGREEMENT", [(72.0, 60.0, 518.0, 76.0)], []
    )
    assert not first_page_title(header, "Confidential: do not copy.", body, [])


def test_a_first_row_is_split_off_as_a_heading_only_when_it_stands_apart():
    below = [
        Line(82, 120 + 14 * i, 540, 130 + 14 * i, "the paragraph the heading heads")
        for i in range(3)
    ]
    heading = Line(72, 100, 300, 113, "(1) Scope of the works")
    assert heading_first_row(heading, below)  # the paragraph's first line is indented
    flush = [Line(72, b.top, b.right, b.bottom, b.text) for b in below]
    full_width = Line(72, 100, 540, 113, "The spring keeps the locking and load-carrying")
    assert not heading_first_row(full_width, flush)


def test_a_page_whose_only_text_is_in_its_header_keeps_it_as_text():
    header = (60.0, 40.0, 540.0, 60.0)
    alone = [Line(72, 44, 400, 56, "A native text page: its text layer is kept as it is.")]
    assert only_furniture([header], alone)
    body = [*alone, Line(72, 100, 540, 110, "and the body of the page below it")]
    assert not only_furniture([header], body)
    assert not only_furniture([], [])


def test_a_heading_region_that_reads_like_no_heading_is_text():
    assert reads_as_heading("2. Findings")
    assert not reads_as_heading("a2 + 8 = 12")
    assert not reads_as_heading(" ".join(["word"] * 30))


def test_a_table_of_contents_is_not_a_table():
    entries = [
        line
        for i, (title, page) in enumerate(
            [("Introduction", "1"), ("Scope of works", "3"), ("Payment", "7"), ("Annex", "12")]
        )
        for line in _row(110 + 15 * i, (60, 300, f"{i + 1}. {title} ........"), (500, 520, page))
    ]
    assert reads_as_contents(FIGURE, entries)
    prices = [
        line
        for i, (item, price) in enumerate(
            [("Seal kit", "16"), ("Wrap", "240"), ("Labels", "12"), ("Tape", "30"), ("Ink", "8")]
        )
        for line in _row(110 + 15 * i, (60, 200, item), (500, 520, price))
    ]
    assert not reads_as_contents(FIGURE, prices)  # the numbers do not grow down the rows
    assert not reads_as_contents(FIGURE, entries[:4])  # too few rows to tell


def test_a_first_row_of_names_above_numbers_or_in_bold_is_the_header():
    rows = [
        [CellText("Area"), CellText("Checked"), CellText("Due")],
        [CellText("Loading bays"), CellText("14"), CellText("30 June 2025")],
    ]
    assert first_row_is_header(rows)
    bold = [
        [CellText("Name", emphasis=True), CellText("Role", emphasis=True)],
        [CellText("Ada"), CellText("Engineer")],
    ]
    assert first_row_is_header(bold)
    plain_words = [[CellText("Name"), CellText("Role")], [CellText("Ada"), CellText("Engineer")]]
    assert not first_row_is_header(plain_words)
    assert not first_row_is_header([[CellText("2024"), CellText("12")], [CellText("x")]])


TABLE = (50.0, 100.0, 550.0, 400.0)
CLAUSE = "the term of this Agreement shall become effective upon the occurrence of"


def test_justified_clauses_read_as_a_table_are_running_prose():
    clauses = [Line(52, 110 + 14 * i, 548, 120 + 14 * i, CLAUSE) for i in range(8)]
    clauses.append(Line(52, 222, 200, 232, "the Effective Date."))
    assert reads_as_prose(TABLE, clauses)


def test_clauses_around_an_address_block_are_prose_though_most_lines_are_short():
    address = ["Notices to:", "ETON Pharmaceuticals, Inc.", "Deer Park, Illinois", "Attention: CEO"]
    lines = [Line(52, 110 + 14 * i, 548, 120 + 14 * i, CLAUSE) for i in range(3)]
    lines += [Line(52, 160 + 14 * i, 160, 170 + 14 * i, text) for i, text in enumerate(address)]
    assert reads_as_prose(TABLE, lines)


def test_a_table_with_columns_even_of_long_descriptions_is_no_prose():
    rows = [
        [
            Line(52, 110 + 30 * i, 120, 120 + 30 * i, f"Item {i}"),
            Line(150, 110 + 30 * i, 480, 120 + 30 * i, CLAUSE),
            Line(510, 110 + 30 * i, 548, 120 + 30 * i, f"{10 * i}"),
        ]
        for i in range(6)
    ]
    assert not reads_as_prose(TABLE, [line for row in rows for line in row])
    # A full-width note under a table of columns leaves it a table.
    notes = [Line(52, 300, 548, 310, CLAUSE)]
    assert not reads_as_prose(TABLE, [*[line for row in rows for line in row], *notes])


def test_a_block_of_short_lines_without_columns_is_no_prose_either():
    block = [Line(52, 110 + 14 * i, 160, 120 + 14 * i, "Name:") for i in range(5)]
    assert not reads_as_prose(TABLE, block)
    assert not reads_as_prose(TABLE, [])


def _field(top: float, label: str, value: str, *, left: float = 60.0) -> list[Line]:
    return [
        Line(left, top, left + 120, top + 12, label, emphasis=True),
        Line(300, top + 1, 300 + 6 * len(value), top + 11, value),
    ]


def test_bold_labels_beside_plain_values_are_a_form_read_field_by_field():
    lines = [
        Line(60, 80, 200, 94, "1. Delivery", emphasis=True),  # a heading above: no field
        *_field(110, "Supplier", "Northwind Traders"),
        *_field(130, "Delivery date", "12 March 2025"),
        Line(300, 143, 420, 153, "and 13 March 2025"),  # the value wrapped
        *_field(160, "Is the delivery signed", "Yes"),
        Line(60, 174, 140, 186, "for by the clerk?", emphasis=True),  # the label wrapped
        *_field(196, "Remarks", "None"),
    ]
    [form] = forms(FIGURE, lines)
    labels = [label for label, _ in form.fields]
    values = [value for _, value in form.fields]
    # Each field a row high, the label's cell reaching to the value's.
    assert [(round(b[1]), round(b[3])) for b in labels] == [
        (110, 122),
        (130, 153),
        (160, 186),
        (196, 208),
    ]
    assert [b[1:4:2] for b in labels] == [b[1:4:2] for b in values]
    assert all(label[2] < value[0] and value[0] - label[2] < 1 for label, value in form.fields)
    assert form.box[1] == 110  # the heading is not part of it


def test_a_grid_under_a_header_row_or_without_bold_labels_is_no_form():
    fields = [line for i in range(4) for line in _field(130 + 20 * i, f"Item {i}", f"{i}.00")]
    header = [
        Line(60, 110, 120, 122, "Item", emphasis=True),
        Line(300, 110, 340, 122, "Price", emphasis=True),
    ]
    assert forms(FIGURE, fields)
    assert forms(FIGURE, [*header, *fields]) == []  # a price list with its first column bold
    plain = [Line(ln.left, ln.top, ln.right, ln.bottom, ln.text) for ln in fields]
    assert forms(FIGURE, plain) == []
    bold_values = [Line(ln.left, ln.top, ln.right, ln.bottom, ln.text, True) for ln in fields]
    assert forms(FIGURE, bold_values) == []


def test_two_fields_are_no_form_nor_are_labels_out_of_line():
    assert forms(FIGURE, [ln for i in range(2) for ln in _field(130 + 20 * i, "Name", "A")]) == []
    staggered = [ln for i in range(4) for ln in _field(130 + 20 * i, "Name", "A", left=60 + 30 * i)]
    assert forms(FIGURE, staggered) == []
