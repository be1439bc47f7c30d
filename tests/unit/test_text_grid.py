"""A table's grid as its words lie on the page (``richdoc.parse.text_grid``): the check
the light pipeline holds SLANet-plus's structure to. The words of the checklist below
stand where they stand on a survey form's page (a bullet pair, a label, two check marks,
under a two-line column header), which SLANet-plus reads as one column."""

from __future__ import annotations

from richdoc.parse.paragraphs import Line
from richdoc.parse.text_grid import columns_of, text_grid


def _word(left: float, top: float, right: float, text: str, height: float = 7.9) -> Line:
    return Line(left, top, right, top + height, text)


def _checklist_row(top: float, *label: tuple[float, float, str]) -> list[Line]:
    return [
        _word(774.0, top - 0.8, 778.1, "y"),
        _word(778.1, top, 780.0, "y"),
        *(_word(left, top, right, text) for left, right, text in label),
        _word(1071.2, top - 0.3, 1078.8, "*"),
        _word(1141.1, top - 0.3, 1148.7, "*"),
    ]


CHECKLIST = [
    _word(1049.1, 564.2, 1070.0, "State"),
    _word(1071.8, 564.2, 1100.8, "funded"),
    _word(1134.7, 564.2, 1155.2, "CSOs"),
    _word(1057.9, 576.2, 1077.7, "legal"),
    _word(1079.5, 576.2, 1092.1, "aid"),
    *_checklist_row(
        594.3, (792.0, 821.0, "Persons"), (822.9, 839.6, "with"), (841.6, 881.2, "disabilities")
    ),
    *_checklist_row(612.4, (791.9, 823.8, "Children")),
    *_checklist_row(630.4, (791.9, 821.2, "Women")),
]


def _rows(words: list[Line]) -> list[list[str]]:
    grid = text_grid(words)
    assert grid is not None
    rows = [[""] * grid.columns for _ in range(grid.rows)]
    for cell in grid.cells:
        rows[cell.row][cell.column] = cell.text
    return rows


def test_words_apart_in_columns_make_the_grid_a_bullet_pair_a_column_of_its_own():
    assert _rows(CHECKLIST) == [
        ["", "", "State funded legal aid", "CSOs"],
        ["y y", "Persons with disabilities", "*", "*"],
        ["y y", "Children", "*", "*"],
        ["y y", "Women", "*", "*"],
    ]


def test_a_cell_wrapped_onto_a_second_line_is_one_cell_and_a_full_row_is_a_new_row():
    words = [
        _word(10, 100, 60, "Item"),
        _word(200, 100, 240, "Cost"),
        _word(10, 120, 90, "Refugees,"),
        _word(200, 120, 220, "12"),
        _word(10, 130.5, 90, "asylum"),  # right under its cell: the same cell
        _word(10, 148, 60, "Women"),  # a row of its own, one line pitch below
        _word(200, 148, 220, "7"),
    ]
    assert _rows(words) == [["Item", "Cost"], ["Refugees, asylum", "12"], ["Women", "7"]]


def test_words_with_no_gutter_between_them_make_no_grid():
    sentence = [_word(10 + 30 * i, 100, 36 + 30 * i, f"word{i}") for i in range(8)]
    assert len(columns_of(sentence)) == 1
    assert text_grid(sentence) is None
    assert text_grid([]) is None


def test_one_row_of_columns_is_no_grid():
    assert text_grid([_word(10, 100, 50, "Name"), _word(200, 100, 240, "Date")]) is None
