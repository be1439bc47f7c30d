"""XLSX used ranges: the cells docling's XLSX backend will visit, counted from the
worksheet parts' XML as it streams past, so a workbook too big for any tier is refused
before docling opens it."""

from __future__ import annotations

import re
from xml.parsers import expat

from richdoc.taxonomy import UnsupportedFeature

# docling's XLSX backend visits every cell of the rectangle that spans a sheet's cells
# with values and its merged ranges (``_find_true_data_bounds``, then ``iter_rows``), and
# openpyxl creates a cell object for each: measured 232 bytes and about 5 us per cell
# (docling 2.143, openpyxl 3.1; docs/parse.md). One value at A1 and one at XFD1048576
# make 17 billion. Cells stay allocated until the whole workbook is converted, so the
# limit is on the sum over the workbook's sheets.
#
# A workbook whose used ranges span more cells than the biggest Lambda tier can hold as
# empty cells (10,240 MB: a 9,216 MB ceiling, less the zygote's 290 MB, / 232 bytes =
# 40 million) cannot convert at any tier: it is refused before docling opens it.
MAX_SHEET_CELLS = 40_000_000

# While loading, docling clips merged ranges beyond a budget of 100,000 covered cells and
# hyperlink ranges beyond 10,000 (docling.backend.msexcel_backend._MAX_MERGED_CELLS and
# _MAX_HYPERLINK_CELLS) to the cells with values; a clipped range keeps its top-left cell.
MERGED_CELLS_BUDGET = 100_000
HYPERLINK_CELLS_BUDGET = 10_000

_SHEET_NAMESPACES = frozenset(
    {
        "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
        "http://purl.oclc.org/ooxml/spreadsheetml/main",  # Strict OOXML
    }
)
_SHEET_ELEMENTS = {
    f"{namespace} {local}": local
    for namespace in _SHEET_NAMESPACES
    for local in ("row", "c", "mergeCell", "hyperlink")
}
_CELL_REF = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]+)")


def _cell_ref(text: str) -> tuple[int, int] | None:
    """(row, column) of an A1-style reference, or None where openpyxl would fail too."""
    match = _CELL_REF.fullmatch(text.strip())
    if match is None:
        return None
    column = 0
    for letter in match[1].upper():
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(match[2]), column


def _range_ref(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    first, _, last = text.partition(":")
    start, end = _cell_ref(first), _cell_ref(last or first)
    if start is None or end is None:
        return None
    return (min(start[0], end[0]), min(start[1], end[1])), (
        max(start[0], end[0]),
        max(start[1], end[1]),
    )


class UsedRange:
    """The rectangle of one worksheet part that docling's XLSX backend will visit: the
    cells with content (a value, a formula or an inline string; openpyxl's reading of
    cell positions, with or without ``r`` attributes) and the merged and hyperlink
    ranges it keeps. Styled empty cells (``<c r="X9" s="1"/>``) do not count."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.top = self.left = self.bottom = self.right = 0
        self._row = self._column = 0
        self._cell: tuple[int, int] | None = None
        self._cell_has_content = False

    @property
    def cells(self) -> int:
        if not self.bottom:
            return 0
        return (self.bottom - self.top + 1) * (self.right - self.left + 1)

    def describe(self) -> str:
        def a1(row: int, column: int) -> str:
            letters = ""
            while column:
                column, rest = divmod(column - 1, 26)
                letters = chr(ord("A") + rest) + letters
            return f"{letters}{row}"

        return f"{self.part}: {a1(self.top, self.left)}:{a1(self.bottom, self.right)}"

    def include(self, row: int, column: int) -> None:
        if not self.bottom:
            self.top, self.left, self.bottom, self.right = row, column, row, column
            return
        self.top, self.left = min(self.top, row), min(self.left, column)
        self.bottom, self.right = max(self.bottom, row), max(self.right, column)

    def _include_range(self, ref: str | None, budget: int) -> None:
        corners = _range_ref(ref or "")
        if corners is None:
            return
        (top, left), (bottom, right) = corners
        self.include(top, left)
        if (bottom - top + 1) * (right - left + 1) - 1 <= budget:
            self.include(bottom, right)

    def start(self, name: str, attributes: dict[str, str]) -> None:
        if self._cell is not None:
            self._cell_has_content = True  # <v>, <f> or <is> inside <c>
            return
        local = _SHEET_ELEMENTS.get(name)  # expat names: "<namespace> <local name>"
        if local == "row":
            # openpyxl: rows without r follow the previous one; columns restart.
            row = attributes.get("r", "").strip()
            self._row = int(row) if row.isdigit() else self._row + 1
            self._column = 0
        elif local == "c":
            where = _cell_ref(attributes["r"]) if "r" in attributes else None
            if where is None:
                where = (self._row, self._column + 1)
            self._column = where[1]
            self._cell, self._cell_has_content = where, False
        elif local == "mergeCell":
            self._include_range(attributes.get("ref"), MERGED_CELLS_BUDGET)
        elif local == "hyperlink":
            # openpyxl gives every empty cell of a hyperlink range its target as value.
            self._include_range(attributes.get("ref"), HYPERLINK_CELLS_BUDGET)

    def end(self, name: str) -> None:
        if self._cell is not None and _SHEET_ELEMENTS.get(name) == "c":
            if self._cell_has_content:
                self.include(*self._cell)
            self._cell = None

    def reader(self) -> _PartReader:
        return _PartReader(self)


class _PartReader:
    """Streams one part through expat (no DTD: it was refused before the bytes got here)."""

    def __init__(self, used: UsedRange) -> None:
        self._parser = expat.ParserCreate(namespace_separator=" ")
        self._parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self._parser.StartElementHandler = used.start
        self._parser.EndElementHandler = used.end

    def feed(self, data: bytes, *, final: bool = False) -> _PartReader | None:
        """None once the part is not well-formed XML: openpyxl cannot load such a part
        either, so the workbook never reaches the cell scan. Cells seen so far count."""
        try:
            self._parser.Parse(data, final)
        except expat.ExpatError:
            return None
        return self


def check_sheet_cells(used_ranges: list[UsedRange], limit: int) -> None:
    total = sum(used.cells for used in used_ranges)
    if total > limit:
        largest = max(used_ranges, key=lambda used: used.cells)
        raise UnsupportedFeature(
            f"the worksheets' used ranges span {total:,} cells (largest: "
            f"{largest.describe()}), above the {limit:,} docling can hold",
            feature="sheet_too_large",
        )
