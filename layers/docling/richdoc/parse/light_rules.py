"""The light pipeline's rules over its layout model's regions, where the model (CDLA,
trained on Chinese academic pages) is known to be wrong.

Pure geometry and text, no docling (``richdoc.parse.light_pipeline`` applies them to
docling's regions; the processor contract names their parameters). Boxes are page points
with a top-left origin; text lines are ``richdoc.parse.paragraphs.Line``.

1. **A figure text covers is text** (``text_covers_figure``): CDLA reads boxed text,
   forms and wide tables as figures, and docling then files their text under the picture,
   out of the body. A figure region whose text lines cover at least
   ``FIGURE_TEXT_COVER`` of its area, or that holds at least ``FIGURE_TEXT_LINES`` lines
   of at least ``FIGURE_LINE_WORDS`` words, is no figure: its lines are read as text.
2. **A grid in such a region is a table** (``tabular_blocks``): a run of at least
   ``TABLE_ROWS`` consecutive rows of two or more cells apart (``paragraphs.grid_rows``),
   with no gap wider than ``TABLE_ROW_GAP`` line heights between two rows; a row of one
   cell that lies under a cell of the run's first row, inside its width, is that column
   header wrapped onto a second line and continues the run (when neither holds a
   sentence's ``PROSE_WORDS`` words).
3. **A heading stands apart from what it heads** (``heading_row``, ``heading_first_row``,
   ``heads``): the page's text lines are grouped into paragraphs
   (``paragraphs.paragraphs``; CDLA's text boxes break paragraphs where the page does
   not, and often hold a heading with the paragraph it heads). A paragraph's first row,
   or a one-line paragraph, is a heading when it reads like one: at most ``HEADING_WORDS``
   words, more letters than other characters, no closing punctuation, no bullet, not
   starting in lower case; set apart by its type (bold or italic above text that is not,
   or at least ``HEADING_SIZE`` times the height of the lines below); and what it heads
   starts right below it (within ``HEADING_GAP`` of its height, overlapping it across: a
   label beside its value heads nothing). A first row must also stand apart from the rows
   below it (it ends short, the row below is indented, or a wider gap than between them).
   A one-line paragraph with nothing right below it is a heading only when it is set
   larger than the page's text (``larger_heading``), and never when the next paragraph
   starts on its row, after it (``labels``: a form's label beside its value).
4. **A heading is not furniture, nor is a page's only text** (``same_region``,
   ``larger_heading``, ``only_furniture``): where CDLA reads one box both as a page header
   (or footer) and as a heading (intersection over union at least ``SAME_REGION``), the
   heading stands, so its text stays in the body; a page header or footer of one line
   that reads as a heading set larger than the page's text is a heading; and on a page
   all of whose text lies in page header or footer regions (a page of one line at its
   top, say), those regions are text. A one-line title in the body's type at the top of
   the first page is what CDLA reads as a running header: a page header of page 1 that
   reads like a heading, above all of the page's body, and repeated on no other page
   (numbers aside), is a heading (``first_page_title``).
5. **A heading region that reads like no heading is text** (``reads_as_heading``): more
   than ``HEADING_MAX_WORDS`` words (a footnote, a paragraph in large type), or fewer
   letters than other characters (a formula, a number).
6. **A table of contents is not a table** (``reads_as_contents``): a table region of at
   least ``TABLE_ROWS`` rows, at least ``CONTENTS_SHARE`` of which are entries (words,
   then a page number after a space or dot leaders), whose page numbers never decrease
   down the table, and half of whose entries have dot leaders or which has at least
   ``CONTENTS_ROWS`` entries, is a table of contents (docling's ``document_index``),
   whose entries the projection gives as list items.
7. **Running prose is not a table** (``reads_as_prose``): CDLA reads some pages of
   justified clauses as a table, and the table-structure model then cuts their sentences
   into cells. A table region at least ``PROSE_SHARE`` of whose rows are running text (one
   cell, no column gutter, of at least ``PROSE_WORDS`` words, spanning at least
   ``PROSE_SPAN`` of the region's width), or with no column gutter in any row and at
   least ``PROSE_ROWS`` rows of running text (clauses around an address block), is text:
   its lines are read as paragraphs.
8. **A form is not a table** (``forms``): a form's labels beside their values (a label
   column set in a bold or italic font, the values in one that is not) are what CDLA
   reads as a table, or as a figure whose grid rule 2 makes a table, and what docling's
   trained layout model reads as text, each label then its value. In a table region, or
   a figure region text covers, a run of at least ``TABLE_ROWS`` fields is a form: a
   field is a row of two or more cells apart whose first cell is emphasised and whose
   others are not, its label's left edge within a line's height of the run's first
   label, no wider gap than ``TABLE_ROW_GAP`` line heights above it; a one-cell row at
   most ``FIELD_WRAP_GAP`` line heights under the row above continues the field above
   (its label's text when emphasised and in the labels' column, else its value's, in
   the values' column). A run right under a row of two or more cells (a header row) is
   a table's, not a form. Each label and each value is a text region, the label's cell
   reaching to ``FIELD_GAP`` short of the value's and both a row high, as a table's
   cells meet: docling's reading order then reads each label, its value, and the next
   row, and a rule drawn between the two columns lies inside the label's cell, not
   between two columns. Grids of the figure region that overlap a form are not tables.
9. **A table's first row names its columns** (``first_row_is_header``) when SLANet-plus
   puts it in a header block, or when it reads as a header: its non-empty cells all bold
   or italic above cells that are not, or at least two non-empty cells, none with a
   digit, above rows with a digit in a column the first row names.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from richdoc.parse.paragraphs import (
    FIRST_LINE_INDENT,
    SHORT_LINE,
    Line,
    grid_rows,
    starts_with_bullet,
)

FIGURE_TEXT_COVER = 0.25
FIGURE_TEXT_LINES = 4
FIGURE_LINE_WORDS = 5
TABLE_ROWS = 3
TABLE_ROW_GAP = 2.0
HEADING_WORDS = 12
HEADING_SIZE = 1.05
HEADING_MAX_WORDS = 24
HEADING_GAP = 3.0
CONTENTS_SHARE = 0.6
CONTENTS_ROWS = 5
PROSE_SHARE = 0.5
PROSE_WORDS = 8
PROSE_SPAN = 0.75
PROSE_ROWS = 3
FIELD_GAP = 0.5
FIELD_WRAP_GAP = 0.75
_PAGE_NUMBER_END = re.compile(
    r"(?P<leader>\s|[.\u2026\s]{2,})(?P<page>\d{1,4}|[ivxlcdm]{1,7})\s*$", re.I
)
# A font at least this heavy (CSS weights; 600 is semibold) is bold.
BOLD_WEIGHT = 600
_CLOSING = ".,;:!?\u2026"
# A line belongs to a region when more than half of its box lies inside it.
INSIDE = 0.5
SAME_REGION = 0.5

Box = tuple[float, float, float, float]  # left, top, right, bottom


def _area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _intersection(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def overlaps(a: Box, b: Box) -> bool:
    """Whether two regions share some area."""
    return _intersection(a, b) > 0


def _enclosing(boxes: Sequence[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def same_region(a: Box, b: Box) -> bool:
    """Whether two regions are one box (intersection over union at least ``SAME_REGION``)."""
    overlap = _intersection(a, b)
    union = _area(a) + _area(b) - overlap
    return union > 0 and overlap >= SAME_REGION * union


def lines_inside(region: Box, lines: Sequence[Line]) -> list[Line]:
    """The lines more than half of whose box lies in ``region``."""
    inside = []
    for line in lines:
        box = (line.left, line.top, line.right, line.bottom)
        area = _area(box)
        if area > 0 and _intersection(box, region) > INSIDE * area:
            inside.append(line)
    return inside


def text_covers_figure(figure: Box, lines: Sequence[Line]) -> bool:
    """Whether text covers a figure region (rule 1)."""
    area = _area(figure)
    if area <= 0:
        return False
    inside = lines_inside(figure, lines)
    covered = sum(_intersection((ln.left, ln.top, ln.right, ln.bottom), figure) for ln in inside)
    wordy = sum(1 for line in inside if len(line.text.split()) >= FIGURE_LINE_WORDS)
    return covered >= FIGURE_TEXT_COVER * area or wordy >= FIGURE_TEXT_LINES


def tabular_blocks(figure: Box, lines: Sequence[Line]) -> list[Box]:
    """The table regions inside a figure region (rule 2), top to bottom."""
    blocks: list[Box] = []
    run: list[list[Line]] = []
    for row in [*grid_rows(lines_inside(figure, lines)), []]:
        if (len(row) >= 2 and (not run or _next_row(run[-1], row))) or _wraps(run, row):
            run.append(row)
            continue
        if len(run) >= TABLE_ROWS:
            blocks.append(_enclosing([(c.left, c.top, c.right, c.bottom) for r in run for c in r]))
        run = [row] if len(row) >= 2 else []
    return blocks


def _wraps(run: list[list[Line]], row: list[Line]) -> bool:
    """Whether a one-cell row continues a cell of the run's first row right above it (a
    column header's text wrapped onto a second line). Only under the first row, and no
    sentence (fewer than ``PROSE_WORDS`` words in the line and in each cell above): lines
    inside a cell's width are as often a numbered clause's next lines."""
    if len(run) != 1 or len(row) != 1 or not _next_row(run[-1], row):
        return False
    if any(len(line.text.split()) >= PROSE_WORDS for line in [*run[0], *row]):
        return False
    return any(cell.left <= row[0].left and row[0].right <= cell.right for cell in run[-1])


def _next_row(above: list[Line], below: list[Line]) -> bool:
    return _gap_within(above, below, TABLE_ROW_GAP)


def _gap_within(above: list[Line], below: list[Line], line_heights: float) -> bool:
    """Whether a row lies at most ``line_heights`` of the row above's lines under it."""
    height = max(cell.height for cell in above)
    return min(c.top for c in below) - max(c.bottom for c in above) <= line_heights * height


def heading_text(text: str) -> bool:
    """Whether a line's words read like a heading's: at most ``HEADING_WORDS`` words, more
    letters than other characters, no closing punctuation, no bullet, not starting in
    lower case (rule 3)."""
    text = text.strip()
    if not text or len(text.split()) > HEADING_WORDS:
        return False
    if text[-1] in _CLOSING or text[0].islower() or not reads_as_heading(text):
        return False
    return not starts_with_bullet(text)  # a list item


def heading_row(row: Line, below: Sequence[Line]) -> bool:
    """Whether a one-line paragraph above ``below`` (the next paragraph's rows) is a
    heading (rule 3)."""
    if not below or not heading_text(row.text):
        return False
    emphasised_apart = row.emphasis and not all(line.emphasis for line in below)
    larger = row.height >= HEADING_SIZE * statistics.median(line.height for line in below)
    return emphasised_apart or larger


def heading_first_row(row: Line, below: Sequence[Line]) -> bool:
    """Whether the first row of a text region, above the rest of its rows, is a heading:
    it reads like one (``heading_row``) and stands apart from the row below: it ends
    short (before ``SHORT_LINE`` of the region's width from its right edge), the row
    below is indented, or a wider gap than the one between the rows below lies between
    them."""
    if not below or not heading_row(row, below):
        return False
    right = max(line.right for line in [row, *below])
    left = min(line.left for line in [row, *below])
    short = right - row.right > SHORT_LINE * (right - left)
    indented = below[0].left - row.left > FIRST_LINE_INDENT * row.height
    gaps = [b.top - a.bottom for a, b in itertools.pairwise(below)]
    apart = bool(gaps) and below[0].top - row.bottom > max(gaps) + 0.25 * row.height
    return short or indented or apart


def heads(row: Line, below: Line) -> bool:
    """Whether ``below`` starts right under ``row`` in its column (no more than
    ``HEADING_GAP`` of the row's heights below, overlapping it across): what a heading
    heads; a label beside its value, or above another label, heads nothing."""
    gap = below.top - row.bottom
    overlap = min(row.right, below.right) > max(row.left, below.left)
    return overlap and 0 <= gap <= HEADING_GAP * row.height


def labels(row: Line, beside: Line) -> bool:
    """Whether ``beside`` starts on ``row``'s row, after it: a form's value beside its
    label, which no heading has (rule 3)."""
    middle = (beside.top + beside.bottom) / 2
    return row.top <= middle <= row.bottom and beside.left >= row.right


def larger_heading(rows: Sequence[Line], page: Sequence[Line]) -> bool:
    """Whether rows are one heading set larger than the page's text (rules 3 and 4)."""
    if len(rows) != 1 or not page:
        return False
    body = statistics.median(line.height for line in page)
    return heading_row(rows[0], page) and rows[0].height >= HEADING_SIZE * body


def first_page_title(header: Box, text: str, body: Sequence[Box], elsewhere: Iterable[str]) -> bool:
    """Whether a page header region of a document's first page is its title (rule 4): its
    text reads like a heading, it lies above all of the page's body, and no region of
    another page (``elsewhere``: their texts) repeats it, numbers aside ("Page 1 of 3"
    repeats)."""
    if not heading_text(text) or any(box[1] < header[3] for box in body):
        return False
    own = _unnumbered(text)
    return not any(_unnumbered(other) == own for other in elsewhere)


def _unnumbered(text: str) -> str:
    return " ".join("".join(c for c in text.lower() if not c.isdigit()).split())


def only_furniture(furniture: Sequence[Box], lines: Sequence[Line]) -> bool:
    """Whether every line of a page lies in its page header and footer regions (rule 4)."""
    held = {id(line) for region in furniture for line in lines_inside(region, lines)}
    return bool(lines) and all(id(line) in held for line in lines)


def reads_as_heading(text: str) -> bool:
    """Whether a heading region's text can be a heading (rule 5)."""
    letters = sum(1 for char in text if char.isalpha())
    others = sum(1 for char in text if not char.isalpha() and not char.isspace())
    return len(text.split()) <= HEADING_MAX_WORDS and letters >= others


@dataclass(frozen=True)
class CellText:
    """A table cell's text and whether all of it is set in a bold or italic font."""

    text: str
    emphasis: bool = False


def first_row_is_header(rows: Sequence[Sequence[CellText]]) -> bool:
    """Whether a table's first row (rows of cells by column, empty text where no cell)
    reads as its header (rule 9; the model's header block aside)."""
    if len(rows) < 2:
        return False
    first, below = rows[0], [cell for row in rows[1:] for cell in row if cell.text]
    named = [cell for cell in first if cell.text]
    if not named or not below:
        return False
    if all(cell.emphasis for cell in named) and not all(cell.emphasis for cell in below):
        return True
    if len(named) < 2 or any(_has_digit(cell.text) for cell in named):
        return False
    return any(
        index < len(first) and first[index].text and _has_digit(cell.text)
        for row in rows[1:]
        for index, cell in enumerate(row)
    )


def _has_digit(text: str) -> bool:
    return any(char.isdigit() for char in text)


def reads_as_contents(region: Box, lines: Sequence[Line]) -> bool:
    """Whether a table region holds a table of contents (rule 6)."""
    rows = [" ".join(c.text for c in row) for row in grid_rows(lines_inside(region, lines))]
    if len(rows) < TABLE_ROWS:
        return False
    entries = [
        match
        for text in rows
        if (match := _PAGE_NUMBER_END.search(text))
        and any(char.isalpha() for char in text[: match.start()])
    ]
    if len(entries) < CONTENTS_SHARE * len(rows):
        return False
    pages = [_page_number(match.group("page")) for match in entries]
    if any(later < earlier for earlier, later in itertools.pairwise(pages)):
        return False  # page numbers only grow down a table of contents
    leaders = sum(1 for match in entries if match.group("leader").strip())
    return 2 * leaders >= len(entries) or len(entries) >= CONTENTS_ROWS


def _page_number(text: str) -> int:
    """An Arabic or Roman page number's value."""
    if text.isdigit():
        return int(text)
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
    numerals = [values[char] for char in text.lower()]
    following = [*numerals[1:], 0]
    return sum(-n if n < after else n for n, after in zip(numerals, following, strict=True))


def reads_as_prose(region: Box, lines: Sequence[Line]) -> bool:
    """Whether a table region holds running prose, not a table (rule 7)."""
    rows = grid_rows(lines_inside(region, lines))
    width = region[2] - region[0]
    if not rows or width <= 0:
        return False
    running = [
        row
        for row in rows
        if len(row) == 1
        and len(row[0].text.split()) >= PROSE_WORDS
        and row[0].right - row[0].left >= PROSE_SPAN * width
    ]
    gutterless = all(len(row) == 1 for row in rows)
    return len(running) >= PROSE_SHARE * len(rows) or (gutterless and len(running) >= PROSE_ROWS)


@dataclass(frozen=True)
class Form:
    """A form's fields, row by row: each label's cell and its value's (rule 8)."""

    fields: tuple[tuple[Box, Box], ...]

    @property
    def box(self) -> Box:
        return _enclosing([cell for field in self.fields for cell in field])


def forms(region: Box, lines: Sequence[Line]) -> list[Form]:
    """The forms in a region (rule 8), top to bottom."""
    found: list[Form] = []
    run: list[list[list[Line]]] = []  # fields: each the label's lines, then the value's
    column = (0.0, 0.0)  # the labels' left edge and the values' leftmost edge
    previous: list[Line] = []
    headed = False
    for row in [*grid_rows(lines_inside(region, lines)), []]:
        near = bool(previous) and bool(row) and _next_row(previous, row)
        wrapped = near and _gap_within(previous, row, FIELD_WRAP_GAP)
        if wrapped and run and _continues(row, column):
            run[-1][0 if row[0].emphasis else 1].append(row[0])
        elif near and run and _field(row) and abs(row[0].left - column[0]) <= row[0].height:
            run.append([[row[0]], row[1:]])
            column = (column[0], min(column[1], min(c.left for c in row[1:])))
        else:
            if len(run) >= TABLE_ROWS and not headed:
                found.append(_form(run))
            run, column = [], (0.0, 0.0)
            if _field(row):
                run = [[[row[0]], row[1:]]]
                column = (row[0].left, min(c.left for c in row[1:]))
                headed = near and len(previous) >= 2  # under a header row: a table
        previous = row
    return found


def _field(row: list[Line]) -> bool:
    """Whether a row of cells is a label and its value: two or more cells, the first
    emphasised and the others not."""
    return len(row) >= 2 and row[0].emphasis and not any(cell.emphasis for cell in row[1:])


def _continues(row: list[Line], column: tuple[float, float]) -> bool:
    """Whether a one-cell row is the label's text (emphasised, in the labels' column) or
    the value's (not, in the values' column) of the field above, wrapped."""
    if len(row) != 1:
        return False
    cell = row[0]
    if cell.emphasis:
        return abs(cell.left - column[0]) <= cell.height
    return cell.left >= column[1] - cell.height


def _form(run: list[list[list[Line]]]) -> Form:
    """The fields' cells: each a row high, the label's reaching to the value's."""
    fields = []
    for label, value in run:
        cells = [*label, *value]
        top, bottom = min(c.top for c in cells), max(c.bottom for c in cells)
        left = min(c.left for c in value)
        fields.append(
            (
                (min(c.left for c in label), top, left - FIELD_GAP, bottom),
                (left, top, max(c.right for c in value), bottom),
            )
        )
    return Form(tuple(fields))
