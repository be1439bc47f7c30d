"""Workbooks (XLSX): docling's Excel backend, with each sheet's name as its heading and
date cells as ISO dates.

docling's ``MsExcelDocumentBackend`` makes each sheet a page and a group (``sheet``) that
holds the sheet's tables and texts; the sheet's name is only the group's name, and a date
cell's text is Python's ``str`` of its value (``2024-03-01 00:00:00``). ``WorkbookBackend``
(docling's own seam: the backend a format option converts with) keeps that conversion
and:

* gives every sheet with content a heading, its name (a section header of level 1, first
  in the sheet's group, in the sheet's content layer: a hidden sheet's heading is hidden
  too), so the sheet is a SECTION of the projection, its name the heading path of its
  chunks and a heading of the Markdown. The heading has no provenance: a sheet's name
  has no place among its cells.
* writes a date cell as the ISO date it shows (``2024-03-01``), with its time where the
  cell's number format shows one (``2024-03-01T14:30:00``); a time cell as an ISO time.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from docling.backend.msexcel_backend import MsExcelDocumentBackend
from docling_core.types.doc import DoclingDocument

if TYPE_CHECKING:
    from docling.backend.msexcel_backend import ExcelTable
    from openpyxl.cell.cell import Cell
    from openpyxl.chartsheet.chartsheet import Chartsheet
    from openpyxl.worksheet.worksheet import Worksheet

# The level of a sheet's heading: sheets are the workbook's top-level sections.
SHEET_HEADING_LEVEL = 1

# Parts of a number format that show no value: quoted text, escaped characters, and
# bracketed colours and conditions (openpyxl's own stripping, numbers.STRIP_RE).
_NOT_SHOWN = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_TIME_OF_DAY = re.compile(r"[hHsS]")


def cell_text(value: Any, number_format: str | None) -> str | None:
    """The ISO text of a date, date-time or time cell's value; None for any other value
    (docling's own text stands)."""
    if isinstance(value, dt.datetime):
        if shows_time(number_format):
            return value.isoformat(timespec="seconds" if not value.microsecond else "auto")
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat(timespec="seconds" if not value.microsecond else "auto")
    return None


def shows_time(number_format: str | None) -> bool:
    """Whether a date format shows the time of day (hours or seconds; minutes never come
    without hours)."""
    return bool(number_format) and bool(
        _TIME_OF_DAY.search(_NOT_SHOWN.sub("", (number_format or "").split(";")[0]))
    )


class WorkbookBackend(MsExcelDocumentBackend):
    """docling's XLSX conversion, sheets as sections, dates as dates (module docstring)."""

    def _convert_sheet(
        self, doc: DoclingDocument, sheet: Worksheet | Chartsheet, page_no: int
    ) -> DoclingDocument:
        doc = super()._convert_sheet(doc, sheet, page_no)
        group = self.parent
        if group is None or not group.children:
            return doc  # a sheet with nothing in it adds nothing
        first = group.children[0].resolve(doc)
        doc.insert_heading(
            sibling=first,
            text=sheet.title,
            level=SHEET_HEADING_LEVEL,
            content_layer=group.content_layer,
            after=False,
        )
        return doc

    def _find_table_bounds(
        self, sheet: Worksheet, **kwargs: Any
    ) -> tuple[ExcelTable, set[tuple[int, int]]]:
        table, visited = super()._find_table_bounds(sheet, **kwargs)
        left, top = table.anchor
        for cell in table.data:
            source: Cell = sheet.cell(row=top + cell.row + 1, column=left + cell.col + 1)
            text = cell_text(source.value, source.number_format)
            if text is not None:
                cell.text = text
        return table, visited
