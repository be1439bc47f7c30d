"""Which text lines make one paragraph (``richdoc.parse.paragraphs``): the rule the native
pipeline reads every line by and the light pipeline the lines no region holds. Lines are
laid out here as a typesetter would: 12-point type on a 14-point pitch unless a test says
otherwise, boxes in points from the top-left corner."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from richdoc.parse.paragraphs import Line, grid_rows, paragraphs, rows_of

LEFT, RIGHT, HEIGHT, PITCH = 72.0, 540.0, 10.0, 14.0


def _lines(*rows: tuple[float, float, str], height: float = HEIGHT, pitch: float = PITCH):
    """Lines from (left, right, text), one below the other."""
    return [
        Line(left, 100 + i * pitch, right, 100 + i * pitch + height, text)
        for i, (left, right, text) in enumerate(rows)
    ]


def _texts(lines: list[Line]) -> list[str]:
    return [" ".join(lines[i].text for i in p.lines) for p in paragraphs(lines)]


def test_a_sentence_and_a_date_broken_over_a_line_end_stay_in_one_paragraph():
    lines = _lines(
        (LEFT, RIGHT, "The term of this Agreement shall commence on the 1st of"),
        (LEFT, RIGHT - 20, "March, 2003 and continue for three years from that date, unless"),
        (LEFT, 300, "terminated earlier."),
    )
    assert _texts(lines) == [
        "The term of this Agreement shall commence on the 1st of March, 2003 and continue "
        "for three years from that date, unless terminated earlier."
    ]


def test_a_short_line_ends_its_paragraph():
    lines = _lines(
        (LEFT, RIGHT, "The first paragraph runs to the right margin and then ends"),
        (LEFT, 260, "on a short line."),
        (LEFT, RIGHT, "The second paragraph starts on the next line, flush left, and"),
        (LEFT, 300, "ends here."),
    )
    assert len(paragraphs(lines)) == 2


def test_a_blank_line_between_paragraphs_separates_them():
    lines = [
        *_lines((LEFT, RIGHT, "First paragraph, first line"), (LEFT, RIGHT, "and second line")),
        *[
            Line(line.left, line.top + 3 * PITCH, line.right, line.bottom + 3 * PITCH, line.text)
            for line in _lines(
                (LEFT, RIGHT, "Second paragraph after a blank line"), (LEFT, RIGHT, "continued")
            )
        ],
    ]
    assert [p.lines for p in paragraphs(lines)] == [[0, 1], [2, 3]]


def test_double_spaced_text_is_read_by_the_page_s_own_line_gap():
    rows = [(LEFT, RIGHT, f"double spaced line {i} of a long paragraph") for i in range(6)]
    lines = _lines(*rows, pitch=2 * PITCH)
    assert len(paragraphs(lines)) == 1


def test_a_larger_line_is_not_the_paragraph_below_it():
    heading = Line(LEFT, 80, 200, 96, "1. Definitions")
    body = _lines((LEFT, RIGHT, "In this Agreement the following terms"), (LEFT, 300, "apply."))
    assert [p.lines for p in paragraphs([heading, *body])] == [[0], [1, 2]]


def test_a_bullet_starts_a_new_item():
    lines = _lines(
        (LEFT, RIGHT, "\u2022 the first item of the list runs over the line end and"),
        (LEFT + 12, 400, "carries on"),
        (LEFT, RIGHT, "\u2022 the second item"),
    )
    assert [p.lines for p in paragraphs(lines)] == [[0, 1], [2]]


def test_an_enumerator_after_a_clause_end_starts_a_new_item_but_not_inside_a_sentence():
    lines = _lines(
        (LEFT, RIGHT, "(a) the Supplier shall deliver the goods on time;"),
        (LEFT, RIGHT, "(b) the Buyer shall pay within thirty days as set out in Section"),
        (LEFT, RIGHT, "3.2 of this Agreement and the schedules to it."),
    )
    assert [p.lines for p in paragraphs(lines)] == [[0], [1, 2]]


def test_an_indented_line_under_a_flush_one_starts_the_next_paragraph():
    lines = _lines(
        (LEFT + 36, RIGHT, "A paragraph with a first-line indent runs on to"),
        (LEFT, RIGHT, "the left margin for its next lines, and its last line"),
        (LEFT, RIGHT, "ends at the margin too."),
        (LEFT + 36, RIGHT, "The next paragraph starts indented again."),
    )
    assert [p.lines for p in paragraphs(lines)] == [[0, 1, 2], [3]]


def test_a_list_item_s_continuation_may_hang_indented():
    lines = _lines(
        (LEFT, RIGHT, "1.2 Distributor's relationship to Airspan is that of an"),
        (LEFT + 22, RIGHT, "independent contractor, and nothing in this Agreement"),
        (LEFT + 22, 320, "makes Distributor an agent."),
    )
    assert len(paragraphs(lines)) == 1


def test_a_bullet_glyph_and_a_hyphen_boxed_apart_are_part_of_their_row():
    glyph = Line(LEFT, 100, LEFT + 6, 109, "\u2022")
    text = Line(LEFT + 12, 100, RIGHT, 110, "an item whose word breaks at the appoint")
    hyphen = Line(RIGHT + 0.5, 104, RIGHT + 2.5, 105, "\x02")
    rest = Line(LEFT + 12, 114, 300, 124, "ments line.")
    [row, second] = rows_of([glyph, text, hyphen, rest])
    assert row.lines == [0, 1, 2] and second.lines == [3]
    assert [p.lines for p in paragraphs([glyph, text, hyphen, rest])] == [[0, 1, 2, 3]]


def test_a_dash_boxed_apart_is_part_of_its_row_not_a_rule():
    # Right-to-left text puts a dash between its runs in a box of its own ("3 - Scope"):
    # a rule takes three characters at least.
    number = Line(LEFT, 100, LEFT + 8, 110, "3")
    dash = Line(LEFT + 10, 100, LEFT + 14, 110, "-")
    title = Line(LEFT + 16, 100, 200, 110, "Admission")
    [row] = rows_of([number, dash, title])
    assert row.rows[0].text == "3 - Admission" and row.lines == [0, 1, 2]


def test_each_entry_of_a_table_of_contents_is_a_block_of_its_own():
    lines = _lines(
        (LEFT, RIGHT, "1. Scope ........................................ 1"),
        (LEFT, RIGHT, "2. Findings ..................................... 2"),
        (LEFT, RIGHT, "Annex ........................................... 7"),
    )
    assert len(paragraphs(lines)) == 3


def test_a_typewriter_underline_under_a_word_breaks_nothing():
    text = _lines(
        (LEFT, RIGHT, 'the Patent License Agreement (the "Patent License") shall'),
        (LEFT, 320, "apply from that date."),
    )
    underline = Line(LEFT + 150, 108, LEFT + 260, 112, "--------------")
    lines = [text[0], underline, text[1]]
    assert [p.lines for p in paragraphs(lines)] == [[0, 1, 2]]


def test_a_typewriter_underline_on_a_line_of_its_own_breaks_nothing_either():
    # Monospaced exhibits: the dashes take a line of the text's pitch of their own.
    text = _lines(
        (LEFT, RIGHT, '"Licensed Products" shall mean, in respect of each Party, any'),
        (LEFT, RIGHT, "products which are"),
        (LEFT, 300, "within its Field of Activity."),
        pitch=2 * PITCH,
    )
    rule = Line(LEFT + 8, text[0].bottom + 4, LEFT + 80, text[0].bottom + 8, "--------")
    lines = [text[0], rule, Line(LEFT, text[0].bottom + 11, 300, text[0].bottom + 21, "x y")]
    assert [p.lines for p in paragraphs(lines)] == [[0, 1, 2]]


def test_two_columns_read_column_by_column_are_two_paragraphs():
    left = _lines(*[(LEFT, 290, f"left column line {i} of the text") for i in range(4)])
    right = _lines(*[(310, RIGHT, f"right column line {i} of the text") for i in range(4)])
    assert [p.lines for p in paragraphs([*left, *right])] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_grid_rows_put_cells_side_by_side_and_join_a_bullet_to_its_text():
    cells = [
        Line(100, 100, 160, 110, "Area"),
        Line(300, 100, 360, 110, "Due"),
        Line(100, 120, 106, 129, "\u2022"),
        Line(112, 120, 200, 130, "Loading bays"),
        Line(300, 120, 370, 130, "30 June"),
    ]
    assert [[cell.text for cell in row] for row in grid_rows(cells)] == [
        ["Area", "Due"],
        ["\u2022 Loading bays", "30 June"],
    ]


_line_boxes = st.lists(
    st.tuples(st.floats(0, 500), st.floats(0, 800), st.floats(1, 300), st.floats(1, 30), st.text()),
    max_size=25,
)


@given(_line_boxes)
def test_paragraphs_partition_the_lines_in_their_order(boxes):
    lines = [Line(x, y, x + w, y + h, text) for x, y, w, h, text in boxes]
    found = [i for p in paragraphs(lines) for i in p.lines]
    assert found == list(range(len(lines)))
    assert paragraphs(lines) == paragraphs(list(lines))  # deterministic
