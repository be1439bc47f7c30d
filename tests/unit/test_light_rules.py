"""The light pipeline's rules over its layout model's regions (``richdoc.parse.light_rules``),
where CDLA is known to be wrong: figures that are text, tables inside them, headings
merged into the paragraph below, tables of contents, running prose read as a table, and a
table's header row."""

from __future__ import annotations

from richdoc.parse.light_rules import (
    CellText,
    first_row_is_header,
    heading_first_row,
    heading_row,
    heads,
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
