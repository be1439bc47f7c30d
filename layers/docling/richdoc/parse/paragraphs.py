"""Which text lines of a page make one paragraph: the rule the native pipeline (every
line) and the light pipeline (the lines no layout region holds) group lines by.

Pure geometry and text, no docling: lines in the order the page gives them (docling-parse's
order, or the OCR engine's), each with its box in page points (top-left origin). A line
continues the paragraph before it when all of these hold (``h`` is the paragraph's line
height, the median of its lines' box heights):

1. **same type size**: the two lines' heights differ by at most ``SIZE_RATIO``;
2. **right below**: the line starts lower than the previous line's middle, and the gap
   between them is at most ``GAP_RATIO`` times the page's usual line gap (``line_gap``:
   the median gap between stacked lines of one size on the page; double-spaced text has a
   wide one) and ``GAP_SLACK`` line heights (boxes with and without descenders differ),
   or, on a page with too few lines to tell, ``MAX_GAP_LINES`` line heights;
3. **same column**: the line overlaps the paragraph horizontally; its left edge is
   within ``INDENT_LINES`` line heights (or ``INDENT_POINTS``, half an inch) of the
   paragraph's (a hanging indent), or left of an indented first line however far; and
   it is not indented more than ``FIRST_LINE_INDENT`` line heights past the line above
   it, unless that line starts a list item whose continuation hangs indented (an
   indented line under a flush one starts the next paragraph);
4. **the previous line runs on**: it ends within ``SHORT_LINE`` of the paragraph's width
   from its right edge (a short line ends a paragraph: a heading, a sentence's end), and
   not with dot leaders and a page number (an entry of a table of contents);
5. **no new item**: the line does not start with a bullet, nor (when the previous line
   ends a clause: ``.``, ``:`` or ``;``) with an enumerator such as ``(a)``, ``1.``,
   ``2.3``, ``iv.``, ``Section 4`` or ``Article IV``.

A line of dashes or underscores right under a line (a typewriter's underline) belongs to
the paragraph above it and breaks nothing. So a sentence or a date broken over a line end
stays in one paragraph, and a heading, a list item or a paragraph after a blank line
starts a block of its own.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SIZE_RATIO = 1.3
GAP_RATIO = 1.6
GAP_SLACK = 0.3
MAX_GAP_LINES = 1.2
INDENT_LINES = 4.0
INDENT_POINTS = 36.0  # half an inch: a tab stop, whatever the type size
SHORT_LINE = 0.25
# Two boxes on one row at most this many line heights apart are one line (a bullet and
# its text); a column gutter is wider.
ROW_GAP_LINES = 1.5
FIRST_LINE_INDENT = 0.5
RULE_CHARS = 3

# A bullet: one or two symbols (no letter, digit, currency, quote or bracket) and a space.
_BULLET = re.compile(r"^\s*[^\w\s$\u20ac\u00a3\u00a5%(\[\"'\u201c\u2018]{1,2}\s")
_ENUMERATOR = re.compile(
    r"^\s*(?:\(\s*[0-9a-zA-Z]{1,4}\s*\)|[0-9a-zA-Z]{1,4}\)|\d+(?:\.\d+)*\.?(?=\s)"
    r"|[ivxlcdmIVXLCDM]{1,6}\.(?=\s)|[A-Z]\.(?=\s)"
    r"|(?:section|article|clause|schedule|exhibit|annex|appendix|part|chapter)\s+[0-9ivxlcdmIVXLCDM]+)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.:;]\s*$")
# Dot leaders and a page number: an entry of a table of contents.
_LEADERS_END = re.compile(r"(?:[.\u2026]\s*){4,}\S{1,6}\s*$")


@dataclass(frozen=True)
class Line:
    """A text line: its box (page points, top-left origin), text, and whether its font is
    bold or italic (where the text layer names the font)."""

    left: float
    top: float
    right: float
    bottom: float
    text: str
    emphasis: bool = False

    @property
    def height(self) -> float:
        return self.bottom - self.top


def line_gap(rows: Sequence[Line]) -> float | None:
    """The page's usual gap between two stacked lines of one type size (the median over
    consecutive pairs that overlap horizontally); None with fewer than three such pairs."""
    gaps = [
        below.top - above.bottom
        for above, below in itertools.pairwise(rows)
        if _same_size(above, below)
        and below.top > (above.top + above.bottom) / 2
        and _overlap(above.left, above.right, below.left, below.right)
        and below.top - above.bottom < MAX_GAP_LINES * max(above.height, below.height) * 2
    ]
    return statistics.median(gaps) if len(gaps) >= 3 else None


@dataclass(frozen=True)
class Paragraph:
    """A paragraph: its rows (lines on one row joined), and each row's line indices."""

    rows: list[Line]
    row_lines: list[list[int]]

    @property
    def lines(self) -> list[int]:
        return [index for row in self.row_lines for index in row]


def rows_of(lines: Sequence[Line]) -> list[Paragraph]:
    """``lines`` as rows, in order, each a one-row ``Paragraph``: a line on the row of the
    line before it and next to it (a bullet's glyph and its text, a hyphen the parser
    gave a box of its own) is part of that row; a rule (a line of dashes) is a row of its
    own."""
    rows: list[Paragraph] = []
    for index, line in enumerate(lines):
        last = rows[-1] if rows else None
        if last is not None and not _is_rule(line.text) and _same_row(last.rows[0], line):
            last.rows[0] = _joined(last.rows[0], line)
            last.row_lines[0].append(index)
        else:
            rows.append(Paragraph([line], [[index]]))
    return rows


def paragraphs(lines: Sequence[Line]) -> list[Paragraph]:
    """``lines`` grouped into paragraphs, in order, by the rules above (which compare
    rows: ``rows_of``)."""
    rows = rows_of(lines)
    usual = line_gap([row.rows[0] for row in rows if not _is_rule(row.rows[0].text)])
    found: list[Paragraph] = []
    underline: Line | None = None  # under the last row of the last paragraph
    for row in rows:
        line = row.rows[0]
        if found and _is_rule(line.text) and _under(found[-1].rows[-1], line):
            found[-1].row_lines[-1].extend(row.lines)  # an underline: part of the text above
            underline = line
            continue
        members = found[-1].rows if found else []
        if members and underline is not None:
            # A typewriter's underline takes the space of a line: the next line is as far
            # below it as it would be below the underlined one.
            last = members[-1]
            shift = underline.bottom - last.bottom
            members = [
                *members[:-1],
                dataclasses.replace(last, top=last.top + shift, bottom=underline.bottom),
            ]
        underline = None
        if members and _continues(members, line, usual):
            found[-1].rows.append(line)
            found[-1].row_lines.append(row.lines)
        else:
            found.append(Paragraph([line], [row.lines]))
    return found


def _is_rule(text: str) -> bool:
    """A line of at least ``RULE_CHARS`` dashes, underscores or equals signs: a
    typewriter's underline or rule. A dash or two alone is a hyphen or a dash the parser
    boxed apart (right-to-left text puts one between its runs): part of its row."""
    stripped = text.strip()
    return len(stripped) >= RULE_CHARS and not stripped.strip("-_=\u2013\u2014 ")


def _under(above: Line, rule: Line) -> bool:
    """Whether a rule lies right under a line (within a line height)."""
    return above.top < rule.top <= above.bottom + above.height and _overlap(
        above.left, above.right, rule.left, rule.right
    )


def grid_rows(lines: Sequence[Line]) -> list[list[Line]]:
    """``lines`` as the rows of a grid, top to bottom: each row's cells left to right,
    boxes on one row closer than ``ROW_GAP_LINES`` line heights joined into one cell (a
    bullet and its text), so a row of two or more cells has text apart in columns."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda line: (line.top, line.left)):
        middle = (line.top + line.bottom) / 2
        if rows and rows[-1][0].top <= middle <= rows[-1][0].bottom:
            rows[-1].append(line)
        else:
            rows.append([line])
    grid = []
    for row in rows:
        cells: list[Line] = []
        for line in sorted(row, key=lambda line: line.left):
            if cells and line.left - cells[-1].right <= ROW_GAP_LINES * cells[-1].height:
                cells[-1] = _joined(cells[-1], line)
            else:
                cells.append(line)
        grid.append(cells)
    return grid


def _same_row(row: Line, line: Line) -> bool:
    """Whether ``line`` sits on ``row``, next to it (on either side: right-to-left
    scripts come right to left)."""
    middle = (line.top + line.bottom) / 2
    gap = max(line.left - row.right, row.left - line.right)
    return row.top <= middle <= row.bottom and gap <= ROW_GAP_LINES * row.height


def _joined(row: Line, line: Line) -> Line:
    return Line(
        min(row.left, line.left),
        min(row.top, line.top),
        max(row.right, line.right),
        max(row.bottom, line.bottom),
        f"{row.text} {line.text}",
        row.emphasis and line.emphasis,
    )


def _continues(members: list[Line], line: Line, usual: float | None) -> bool:
    previous = members[-1]
    height = statistics.median(m.height for m in members)
    if height <= 0 or line.height <= 0 or not _same_size(previous, line):
        return False
    if line.top <= (previous.top + previous.bottom) / 2:
        return False
    gap = line.top - previous.bottom
    allowed = MAX_GAP_LINES * height if usual is None else GAP_RATIO * usual + GAP_SLACK * height
    if gap > allowed:
        return False
    left = min(m.left for m in members)
    right = max(m.right for m in [*members, line])
    if not _overlap(left, right, line.left, line.right):
        return False
    outdent = len(members) == 1 and line.left < left  # under an indented first line
    if not outdent and abs(line.left - left) > max(INDENT_LINES * height, INDENT_POINTS):
        return False
    if line.left - previous.left > FIRST_LINE_INDENT * height and not (
        len(members) == 1 and _item_start(previous.text)
    ):
        return False  # a first-line indent under a flush line: the next paragraph
    if right - previous.right > SHORT_LINE * (right - left) or _LEADERS_END.search(previous.text):
        return False  # a short line, or an entry of a table of contents, ends its block
    if _BULLET.match(line.text):
        return False
    return not (_CLAUSE_END.search(previous.text) and _ENUMERATOR.match(line.text))


def _item_start(text: str) -> bool:
    """Whether a row starts a list item (its continuation lines may hang indented)."""
    return bool(_BULLET.match(text) or _ENUMERATOR.match(text))


def starts_with_bullet(text: str) -> bool:
    """Whether a row starts with a bullet (a symbol or two and a space)."""
    return bool(_BULLET.match(text))


def _same_size(a: Line, b: Line) -> bool:
    small, large = sorted((a.height, b.height))
    return small > 0 and large <= SIZE_RATIO * small


def _overlap(left_a: float, right_a: float, left_b: float, right_b: float) -> bool:
    return min(right_a, right_b) > max(left_a, left_b)
