"""A table's grid as its words lie on the page: the check on SLANet-plus's structure.

Pure geometry, no docling: words (``paragraphs.Line``, a box in page points with a
top-left origin, and its text) in, rows and columns of cells out.

* **Columns** are the runs of words across the whole table with no clear vertical strip
  of at least ``COLUMN_GUTTER`` word heights between them: a gutter runs from the table's
  top to its bottom. A bullet set apart from its text by such a strip is a column of its
  own, as docling's TableFormer reads it.
* **Rows** are the table's text lines (words whose middles lie within one another's
  height), and a line continues the row above it (a cell's text wrapped onto a second
  line) when it lies closer under it than ``WRAP_GAP`` word heights and fills only
  columns that row fills, fewer of them.

SLANet-plus reads a table from its picture; on some (a checklist on a coloured ground,
glyphs for check boxes) it sees one column where the words stand in several.
``slanet_tables`` keeps the model's structure unless the words' grid has more columns
than it, and then reads the table from the words' grid.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from richdoc.parse.paragraphs import Line

COLUMN_GUTTER = 1.0
WRAP_GAP = 0.75


@dataclass(frozen=True)
class GridCell:
    """A cell of the words' grid: its row, its column and its words in reading order."""

    row: int
    column: int
    words: tuple[Line, ...]

    @property
    def text(self) -> str:
        return " ".join(word.text.strip() for word in self.words if word.text.strip())

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (
            min(w.left for w in self.words),
            min(w.top for w in self.words),
            max(w.right for w in self.words),
            max(w.bottom for w in self.words),
        )


@dataclass(frozen=True)
class TextGrid:
    """The words' grid: its size and its non-empty cells, row by row."""

    rows: int
    columns: int
    cells: tuple[GridCell, ...]


def columns_of(words: Sequence[Line]) -> list[tuple[float, float]]:
    """The columns the words stand in, left to right, as their left and right edges."""
    if not words:
        return []
    gutter = COLUMN_GUTTER * statistics.median(word.height for word in words)
    spans: list[tuple[float, float]] = []
    for word in sorted(words, key=lambda word: word.left):
        if spans and word.left - spans[-1][1] < gutter:
            spans[-1] = (spans[-1][0], max(spans[-1][1], word.right))
        else:
            spans.append((word.left, word.right))
    return spans


def _lines(words: Sequence[Line]) -> list[list[Line]]:
    """The words by text line, top to bottom, each line left to right."""
    lines: list[list[Line]] = []
    for word in sorted(words, key=lambda word: (word.top, word.left)):
        middle = (word.top + word.bottom) / 2
        if lines and any(w.top <= middle <= w.bottom for w in lines[-1]):
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda word: word.left) for line in lines]


def text_grid(words: Sequence[Line]) -> TextGrid | None:
    """The grid the words stand in; None for fewer than two rows or two columns."""
    words = [word for word in words if word.text.strip() and word.height > 0]
    spans = columns_of(words)
    if len(spans) < 2:
        return None
    height = statistics.median(word.height for word in words)

    def column(word: Line) -> int:
        return next(i for i, (left, right) in enumerate(spans) if left <= word.left <= right)

    rows: list[list[Line]] = []
    filled: list[set[int]] = []
    bottom = 0.0
    for line in _lines(words):
        used = {column(word) for word in line}
        top = min(word.top for word in line)
        if rows and top - bottom < WRAP_GAP * height and used < filled[-1]:
            rows[-1].extend(line)  # a cell's text wrapped onto a second line
        else:
            rows.append(list(line))
            filled.append(used)
        bottom = max(word.bottom for word in line)
    if len(rows) < 2:
        return None
    cells = []
    for index, row in enumerate(rows):
        for col in sorted({column(word) for word in row}):
            words_in = tuple(word for word in row if column(word) == col)
            cells.append(GridCell(index, col, words_in))
    return TextGrid(len(rows), len(spans), tuple(cells))
