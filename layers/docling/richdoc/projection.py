"""Projection of a DoclingDocument into the richdoc graph (``richdoc.projection/v1``).

The graph's data model, the contract of ``projection.json``, is in ``richdoc.graph``;
docs/projection.md documents every rule applied here. The projection
function is deterministic: it reads only the document content, never the clock,
randomness, or hash ordering.
"""

from __future__ import annotations

import gc
import math
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeGuard

from docling_core.types.doc import (
    BoundingBox,
    CodeItem,
    ContentLayer,
    DocItem,
    DocItemLabel,
    DoclingDocument,
    FormulaItem,
    GroupItem,
    InlineGroup,
    ListGroup,
    ListItem,
    NodeItem,
    PictureItem,
    ProvenanceItem,
    RichTableCell,
    SectionHeaderItem,
    TableCell,
    TableItem,
    TextItem,
    TitleItem,
)
from docling_core.types.doc.base import CoordOrigin
from pydantic import ValidationError

from richdoc.graph import NodeLabel, NotProjected, Projection, SkippedFeature, SpanKind
from richdoc.parse.ocr.record import document_record, item_transcription
from richdoc.taxonomy import CorruptInput, UnsupportedFeature
from richdoc_client.projection import ProjectionSource

# Between two consecutive blocks of the canonical text (never before the first block or
# after the last): a blank line, so the canonical text reads like plain-text paragraphs.
SEPARATOR = "\n\n"
# Between the cells of a table row's text, and between the texts of stacked header rows
# that name one column.
ROW_CELL_SEPARATOR = " | "
HEADER_PART_SEPARATOR = " / "
# Between the parts of an inline group (docling's own markdown serializer uses a space).
INLINE_SEPARATOR = " "
# Between an enumerated list item's marker and its text ("2.3.4. Interest").
MARKER_SEPARATOR = " "
# Between the parts of a rich table cell's content (its paragraphs, the cells of a table
# nested in it): one space, as docling-core's markdown export flattens a nested table.
CELL_PART_SEPARATOR = " "
# Between the cells of a table of contents' entry ("Introduction 3").
CONTENTS_ENTRY_SEPARATOR = " "
BBOX_DECIMALS = 3


_LAYER_OMISSION = {
    ContentLayer.FURNITURE: NotProjected.FURNITURE,
    ContentLayer.NOTES: NotProjected.NOTES,
    ContentLayer.BACKGROUND: NotProjected.BACKGROUND,
    ContentLayer.INVISIBLE: NotProjected.INVISIBLE,
}
_ALL_LAYERS = set(ContentLayer)
# Kinds of ancestors the walk remembers, to count list nesting.
_OTHER, _LIST, _ITEM = 0, 1, 2

# TextItem labels by what becomes of them; every other label is UNKNOWN.
_PARAGRAPH_LABELS = frozenset(
    {
        DocItemLabel.TEXT,
        DocItemLabel.PARAGRAPH,
        DocItemLabel.REFERENCE,
        DocItemLabel.HANDWRITTEN_TEXT,
    }
)
_FORM_LABELS = frozenset(
    {
        DocItemLabel.CHECKBOX_SELECTED,
        DocItemLabel.CHECKBOX_UNSELECTED,
        DocItemLabel.EMPTY_VALUE,
        DocItemLabel.FORM,
        DocItemLabel.KEY_VALUE_REGION,
        DocItemLabel.GRADING_SCALE,
        DocItemLabel.FIELD_REGION,
        DocItemLabel.FIELD_HEADING,
        DocItemLabel.FIELD_ITEM,
        DocItemLabel.FIELD_KEY,
        DocItemLabel.FIELD_VALUE,
        DocItemLabel.FIELD_HINT,
    }
)
_PICTURE_LABELS = frozenset({DocItemLabel.PICTURE, DocItemLabel.CHART})
_FURNITURE_LABELS = frozenset({DocItemLabel.PAGE_HEADER, DocItemLabel.PAGE_FOOTER})
# Text items inside a rich table cell that are not part of its value: furniture, stand-
# alone markers, and captions (the body walk projects those after the table's rows).
_NOT_CELL_TEXT_LABELS = _FURNITURE_LABELS | {DocItemLabel.MARKER, DocItemLabel.CAPTION}


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------


def load_docling(data: bytes) -> DoclingDocument:
    """Parse DoclingDocument JSON; anything that is not one is ``CorruptInput``."""
    try:
        return DoclingDocument.model_validate_json(data)
    except ValidationError as exc:
        raise CorruptInput.not_valid("DoclingDocument", exc) from exc


def source_of(
    doc: DoclingDocument,
    *,
    name: str | None = None,
    sha256: str | None = None,
    pipeline: str | None = None,
) -> ProjectionSource:
    """The projection's ``source`` for a document known only from its file: what the
    caller does not give, the name, comes from the document's own origin."""
    if name is None:
        name = doc.origin.filename if doc.origin is not None else doc.name
    return ProjectionSource(name=name, sha256=sha256, pipeline=pipeline)


# --------------------------------------------------------------------------------------
# Text and geometry helpers
# --------------------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """The normalised text of a block: LF line ends (CRLF and CR become LF), then NFC.

    Lone surrogates (possible in JSON, impossible in UTF-8) become U+FFFD so the
    canonical text always encodes.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii():
        return text  # ASCII is already NFC: skip the normaliser on the common path
    text = unicodedata.normalize("NFC", text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _single_line(text: str) -> str:
    """Header names and list markers are single-line: whitespace runs collapse to one space."""
    return " ".join(normalize_text(text).split())


def _coord(value: float) -> float:
    # Rounding hides float noise from the origin flip; adding 0.0 turns -0.0 into 0.0.
    return round(value, BBOX_DECIMALS) + 0.0


def _top_left(box: BoundingBox, page_height: float | None) -> BoundingBox | None:
    if box.coord_origin == CoordOrigin.TOPLEFT:
        return box
    if page_height is None:
        return None  # a bottom-left box cannot be flipped without its page's height
    return box.to_top_left_origin(page_height=page_height)


def _bbox_props(boxes: list[BoundingBox], page_height: float | None) -> list[float] | None:
    """The top-left ``[x0, y0, x1, y1]`` enclosing ``boxes`` (all on one page), if known."""
    flipped: list[BoundingBox] = []
    for box in boxes:
        top_left = _top_left(box, page_height)
        if top_left is None:
            return None
        flipped.append(top_left)
    if not flipped:
        return None
    union = flipped[0] if len(flipped) == 1 else BoundingBox.enclosing_bbox(flipped)
    coords = (union.l, union.t, union.r, union.b)
    if not all(math.isfinite(value) for value in coords):
        return None  # NaN or infinity in docling's box: no usable location
    return [_coord(value) for value in coords]


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Row:
    index: int  # the row's index in docling's grid (header rows count)
    cells: dict[str, str]
    text: str


@dataclass(slots=True)  # not frozen: a frozen dataclass is twice as slow to build
class _Cell:
    text: str  # the cell's value, normalised and stripped (see _Projector.cell_value)
    header: bool  # docling's column_header flag


def _table_grid(table: TableItem, value: Callable[[TableCell], str]) -> list[list[_Cell | None]]:
    """Cell per grid position; a spanning cell fills every position it covers.

    The same filling as docling-core's ``TableData.grid``, without materialising a
    validated placeholder cell for every empty position (the projection's hot path).
    Each docling cell becomes one ``_Cell``, valued once, shared by the positions it covers.
    """
    data = table.data
    rows, cols = data.num_rows, data.num_cols
    grid: list[list[_Cell | None]] = [[None] * cols for _ in range(rows)]
    for cell in data.table_cells:
        projected = _Cell(value(cell), cell.column_header)
        for r in range(max(cell.start_row_offset_idx, 0), min(cell.end_row_offset_idx, rows)):
            row = grid[r]
            for c in range(max(cell.start_col_offset_idx, 0), min(cell.end_col_offset_idx, cols)):
                row[c] = projected
    return grid


def _header_row_count(grid: list[list[_Cell | None]]) -> int:
    """Leading rows that docling marks as column headers.

    A row belongs to the header block when every row above it does, at least one of its
    cells is flagged ``column_header`` and none of its non-empty cells is unflagged.
    A table whose rows are all header rows has no header (there would be no row to key).
    """
    count = 0
    for row in grid:
        cells = [cell for cell in row if cell is not None]
        if not any(cell.header for cell in cells) or any(
            not cell.header and cell.text for cell in cells
        ):
            break
        count += 1
    return count if count < len(grid) else 0


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    positional: bool  # named col_<i> because no header text names it


def _columns(grid: list[list[_Cell | None]], header_rows: int, cols: int) -> list[_Column]:
    """Keys of ``cells``: header texts, ``col_<i>`` where none, made unique left to right.

    Stacked header rows name a column by their texts joined with " / " (a header cell
    spanning several header rows counts once). A name already taken gets the first free
    suffix ``_2``, ``_3``, ...
    """
    columns: list[_Column] = []
    used: set[str] = set()  # membership only: never iterated, so no hash ordering leaks
    for c in range(cols):
        parts: list[str] = []
        previous: _Cell | None = None
        for r in range(header_rows):
            cell = grid[r][c]
            if cell is None or cell is previous:
                continue
            previous = cell
            text = _single_line(cell.text)
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        name = HEADER_PART_SEPARATOR.join(parts) or f"col_{c}"
        if name in used:
            suffix = 2
            while f"{name}_{suffix}" in used:
                suffix += 1
            name = f"{name}_{suffix}"
        used.add(name)
        columns.append(_Column(name, positional=not parts))
    return columns


def _table_rows(
    grid: list[list[_Cell | None]], header_rows: int, columns: list[_Column]
) -> tuple[list[_Row], int]:
    """The data rows (and how many all-empty rows were dropped).

    ``cells`` holds a value for every column: a spanning cell's value under each column
    it covers. The row's text names each cell once, at the first column it covers:
    ``<key>: <value>`` under a header name, the bare value in a positional ``col_<i>``
    column; empty cells are left out.
    """
    names = [column.name for column in columns]
    rows: list[_Row] = []
    empty = 0
    for r in range(header_rows, len(grid)):
        values: list[str] = []
        pieces: list[str] = []
        previous: _Cell | None = None
        for column, cell in zip(columns, grid[r], strict=True):
            value = cell.text if cell is not None else ""
            values.append(value)
            if value and cell is not previous:
                pieces.append(value if column.positional else f"{column.name}: {value}")
            previous = cell
        if not pieces:
            empty += 1
            continue
        cells = dict(zip(names, values, strict=True))
        rows.append(_Row(r, cells, ROW_CELL_SEPARATOR.join(pieces)))
    return rows, empty


# --------------------------------------------------------------------------------------
# The projection
# --------------------------------------------------------------------------------------


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the projection is built.

    The projection allocates only acyclic dicts, lists and strings, which reference
    counting frees. A cyclic collection during it traverses the whole loaded
    DoclingDocument again, and they come often enough to make the step grow faster than
    the document (bench item 6: 16x the time for 10x the size with the collector on,
    11-13x with it paused). Process-wide, so threads that pause together leave it enabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Projector:
    """One pass over ``doc.iterate_items``; builds nodes, edges, spans and text together."""

    def __init__(self, doc: DoclingDocument, name: str) -> None:
        self.doc = doc
        self.page_heights = {no: page.size.height for no, page in doc.pages.items()}
        # Plain dicts while walking; validated into the models in one call at the end
        # (one pydantic call per node, edge and span was the walk's largest cost).
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []
        self.spans: list[dict[str, Any]] = []
        self.label_counts = dict.fromkeys(NodeLabel, 0)
        self.kind_counts = dict.fromkeys(SpanKind, 0)
        self.texts: list[str] = []
        self.child_count: list[int] = []
        self.offset = 0  # UTF-8 length of the canonical text so far
        self.sections: list[tuple[int, int]] = []  # open (level, node id), innermost last
        self.skipped = dict.fromkeys(SkippedFeature, 0)
        self.first_skipped: SkippedFeature | None = None
        self.not_projected = dict.fromkeys(NotProjected, 0)
        self.consumed_inline: set[str] = set()  # inline groups a text item absorbed
        self.ocr_words = 0  # words of the text OCR read
        # The source's name (the uploaded object), not docling's: the parse step converts a
        # staged copy so that identical bytes give identical DoclingDocuments.
        self.add_node(NodeLabel.DOCUMENT, {"name": name}, parent=None)

    # -- building blocks -------------------------------------------------------------

    def add_node(self, label: NodeLabel, props: dict[str, Any], parent: int | None) -> int:
        node_id = len(self.nodes)
        self.nodes.append({"id": node_id, "label": label, "props": props})
        self.label_counts[label] += 1
        self.child_count.append(0)
        if parent is not None:
            self.edges.append({"src": parent, "dst": node_id, "ord": self.child_count[parent]})
            self.child_count[parent] += 1
        return node_id

    def add_span(self, node_id: int, text: str, kind: SpanKind) -> None:
        length = len(text) if text.isascii() else len(text.encode("utf-8"))
        start = self.offset + (len(SEPARATOR) if self.texts else 0)
        self.texts.append(text)
        self.offset = start + length
        span = {"node": node_id, "start": start, "end": self.offset, "kind": kind}
        ocr = self.nodes[node_id]["props"].get("ocr")
        if ocr is not None:
            span["ocr_confidence"] = ocr["confidence"]
            self.ocr_words += len(text.split())
        self.spans.append(span)
        self.kind_counts[kind] += 1

    def skip(self, feature: SkippedFeature) -> None:
        self.skipped[feature] += 1
        if self.first_skipped is None:
            self.first_skipped = feature

    def location(self, prov: list[ProvenanceItem]) -> dict[str, Any]:
        """``page`` and ``bbox`` from docling's provenance; nothing where it has none.

        An item with several provenance entries is located on the page of the first one;
        its bbox encloses every entry on that page.
        """
        if not prov:
            return {}
        page = prov[0].page_no
        props: dict[str, Any] = {"page": page}
        boxes = [p.bbox for p in prov if p.page_no == page]
        bbox = _bbox_props(boxes, self.page_heights.get(page))
        if bbox is not None:
            props["bbox"] = bbox
        return props

    @staticmethod
    def transcription(items: list[NodeItem]) -> dict[str, Any]:
        """``ocr`` for a block built from these items when OCR read any of them: their
        mean confidence; nothing for native text."""
        found = [t.confidence for item in items if (t := item_transcription(item)) is not None]
        if not found:
            return {}
        return {"ocr": {"confidence": round(sum(found) / len(found), 3)}}

    @property
    def container(self) -> int:
        return self.sections[-1][1] if self.sections else 0

    # -- text of an item -------------------------------------------------------------

    def text_of(self, item: TextItem) -> str:
        """The item's normalised text.

        Converters emit a formatted list item as an empty text item whose first child is
        an inline group with the formatted parts; that group's text is the item's text.
        (Other inline children, such as the paragraphs docling hangs below a heading,
        stay blocks of their own.)
        """
        text = item.text
        if not text and item.children:
            first = item.children[0].resolve(self.doc)
            if isinstance(first, InlineGroup):
                self.consumed_inline.add(first.self_ref)
                text = self.inline_text(first)
        return normalize_text(text)

    def inline_text(self, group: GroupItem) -> str:
        parts: list[str] = []
        for ref in group.children:
            child = ref.resolve(self.doc)
            if isinstance(child, GroupItem):
                parts.append(self.inline_text(child))
            elif isinstance(child, DocItem):
                feature = _feature_of(child)
                if feature is not None:
                    self.skip(feature)
                elif isinstance(child, TextItem):
                    parts.append(self.text_of(child))
        return INLINE_SEPARATOR.join(part for part in parts if part)

    # -- blocks ----------------------------------------------------------------------

    def heading(self, item: TextItem, level: int, kind: SpanKind) -> None:
        text = self.text_of(item)
        if not text.strip():
            self.not_projected[NotProjected.EMPTY_BLOCKS] += 1
            return
        while self.sections and self.sections[-1][0] >= level:
            self.sections.pop()
        props = {
            "title": text,
            "level": level,
            **self.location(item.prov),
            **self.transcription([item]),
        }
        node_id = self.add_node(NodeLabel.SECTION, props, self.container)
        self.add_span(node_id, text, kind)
        self.sections.append((level, node_id))
        if kind is SpanKind.TITLE:
            self.nodes[0]["props"].setdefault("title", text)

    def block_text(self, item: TextItem) -> str:
        """A block's text: the item's text, after its marker for an enumerated list item.

        Numbering is content ("see clause 2.3.4"); a bullet is decoration and stays out.
        """
        text = self.text_of(item)
        if isinstance(item, ListItem) and item.enumerated and text.strip():
            marker = _single_line(item.marker)
            if marker:
                return f"{marker}{MARKER_SEPARATOR}{text}"
        return text

    def paragraph(self, item: TextItem, kind: SpanKind, list_level: int | None = None) -> None:
        text = self.block_text(item)
        if not text.strip():
            self.not_projected[NotProjected.EMPTY_BLOCKS] += 1
            return
        props: dict[str, Any] = {
            "text": text,
            **self.location(item.prov),
            **self.transcription([item]),
        }
        if list_level is not None:
            props["list_level"] = list_level
        if isinstance(item, ListItem) and (marker := _single_line(item.marker)):
            props["marker"] = marker
        node_id = self.add_node(NodeLabel.PARAGRAPH, props, self.container)
        self.add_span(node_id, text, kind)

    def inline_paragraph(self, group: InlineGroup) -> None:
        text = normalize_text(self.inline_text(group))
        if not text.strip():
            self.not_projected[NotProjected.EMPTY_BLOCKS] += 1
            return
        # An inline group has no provenance of its own: it is located by its parts'.
        parts = [ref.resolve(self.doc) for ref in group.children]
        prov = [p for part in parts for p in getattr(part, "prov", ())]
        props: dict[str, Any] = {
            "text": text,
            **self.location(prov),
            **self.transcription(parts),
        }
        node_id = self.add_node(NodeLabel.PARAGRAPH, props, self.container)
        self.add_span(node_id, text, SpanKind.PARAGRAPH)

    def table(self, item: TableItem) -> None:
        grid = _table_grid(item, self.cell_value)
        header_rows = _header_row_count(grid)
        columns = _columns(grid, header_rows, item.data.num_cols)
        rows, empty = _table_rows(grid, header_rows, columns)
        self.not_projected[NotProjected.EMPTY_ROWS] += empty
        ocr = self.transcription([item])
        props = {
            "columns": [column.name for column in columns],
            "header_rows": header_rows,
            **self.location(item.prov),
            **ocr,
        }
        table_id = self.add_node(NodeLabel.TABLE, props, self.container)
        # Rows are located only inside a table docling places on a single page.
        pages = {prov.page_no for prov in item.prov}
        page = pages.pop() if len(pages) == 1 else None
        row_boxes = self.row_boxes(item, page) if page is not None else {}
        for row in rows:
            row_props: dict[str, Any] = {
                "cells": row.cells,
                "row": row.index,
                "text": row.text,
                **ocr,
            }
            if page is not None:
                row_props["page"] = page
                box = row_boxes.get(row.index)
                if box is not None:
                    row_props["bbox"] = box
            row_id = self.add_node(NodeLabel.TABLE_ROW, row_props, table_id)
            self.add_span(row_id, row.text, SpanKind.TABLE_ROW)

    def contents(self, item: TableItem) -> None:
        """A table of contents is a list of its entries, not a table: each non-empty row
        is a list item (``list_level`` 1), its cells' values joined by one space (each
        spanning cell once), located as a table row would be."""
        grid = _table_grid(item, self.cell_value)
        ocr = self.transcription([item])
        # Entries are located as table rows are: only inside a single-page table.
        pages = {prov.page_no for prov in item.prov}
        page = pages.pop() if len(pages) == 1 else None
        row_boxes = self.row_boxes(item, page) if page is not None else {}
        for index, row in enumerate(grid):
            values: list[str] = []
            previous: _Cell | None = None
            for cell in row:
                if cell is not None and cell is not previous and cell.text:
                    values.append(cell.text)
                previous = cell
            text = CONTENTS_ENTRY_SEPARATOR.join(values)
            if not text:
                self.not_projected[NotProjected.EMPTY_ROWS] += 1
                continue
            props: dict[str, Any] = {"text": text, "list_level": 1, **ocr}
            if page is not None:
                props["page"] = page
                if index in row_boxes:
                    props["bbox"] = row_boxes[index]
            node_id = self.add_node(NodeLabel.PARAGRAPH, props, self.container)
            self.add_span(node_id, text, SpanKind.LIST_ITEM)

    def cell_value(self, cell: TableCell) -> str:
        """A cell's value, normalised and stripped.

        A rich cell's value is its content, which docling hangs below the table: the
        texts of its blocks in reading order, a table nested in it contributing its cell
        values row by row, all joined by one space. docling's own text of such a cell
        leaves nested tables out (DOCX) or runs them into the text before (HTML).
        """
        if not isinstance(cell, RichTableCell):
            return normalize_text(cell.text).strip()
        parts: list[str] = []
        skip_below: int | None = None  # tree level whose subtree is being skipped
        for item, level in self.doc.iterate_items(
            root=cell.ref.resolve(self.doc),
            with_groups=True,
            traverse_pictures=False,
            included_content_layers=_ALL_LAYERS,
        ):
            if skip_below is not None and level > skip_below:
                continue
            skip_below = None
            if isinstance(item, InlineGroup):
                skip_below = level
                if item.self_ref not in self.consumed_inline:
                    parts.append(self.inline_text(item).strip())
            elif isinstance(item, GroupItem):
                continue  # a container: its children are judged on their own
            elif not isinstance(item, DocItem) or item.content_layer is not ContentLayer.BODY:
                skip_below = level
            elif (feature := _feature_of(item)) is not None:
                self.skip(feature)
                skip_below = level
            elif isinstance(item, TableItem):
                skip_below = level
                anchors = sorted(
                    item.data.table_cells,
                    key=lambda inner: (inner.start_row_offset_idx, inner.start_col_offset_idx),
                )
                parts.extend(self.cell_value(inner) for inner in anchors)
            elif isinstance(item, TextItem) and item.label not in _NOT_CELL_TEXT_LABELS:
                parts.append(self.block_text(item).strip())
        return CELL_PART_SEPARATOR.join(part for part in parts if part)

    def row_boxes(self, item: TableItem, page: int) -> dict[int, list[float]]:
        """Row bboxes from docling's cell boxes (docling-core computes the row union)."""
        if not any(cell.bbox is not None for cell in item.data.table_cells):
            return {}
        try:
            boxes = item.data.get_row_bounding_boxes()
        except ValueError:  # cells in mixed coordinate origins: no trustworthy row box
            return {}
        height = self.page_heights.get(page)
        located = {r: _bbox_props([box], height) for r, box in boxes.items()}
        return {r: box for r, box in located.items() if box is not None}

    # -- the walk --------------------------------------------------------------------

    def run(self) -> None:
        ancestors: list[tuple[int, int]] = []  # (tree level, _LIST/_ITEM/_OTHER) above item
        skip_below: int | None = None  # tree level whose subtree is being skipped
        keep_captions = False  # inside a skipped table or picture, captions still count
        for item, level in self.doc.iterate_items(
            with_groups=True, traverse_pictures=False, included_content_layers=_ALL_LAYERS
        ):
            if skip_below is not None:
                if level > skip_below:
                    if keep_captions and _is_caption(item) and _in_body(item):
                        self.paragraph(item, SpanKind.CAPTION)
                    continue
                skip_below = None
            while ancestors and ancestors[-1][0] >= level:
                ancestors.pop()

            if isinstance(item, GroupItem):
                if item.content_layer is not ContentLayer.BODY:
                    continue  # groups are containers: their children are judged alone
                if isinstance(item, InlineGroup):
                    skip_below, keep_captions = level, False
                    if item.self_ref not in self.consumed_inline:
                        self.inline_paragraph(item)
                    continue
                ancestors.append((level, _LIST if isinstance(item, ListGroup) else _OTHER))
                continue
            if not isinstance(item, DocItem):
                continue
            if item.content_layer is not ContentLayer.BODY:
                self.not_projected[_LAYER_OMISSION[item.content_layer]] += 1
                skip_below, keep_captions = level, False
                continue
            if self.item(item, ancestors):
                skip_below = level
                keep_captions = isinstance(item, TableItem | PictureItem)
            else:
                ancestors.append((level, _ITEM if isinstance(item, ListItem) else _OTHER))

    def item(self, item: DocItem, ancestors: list[tuple[int, int]]) -> bool:
        """Project one body item; True when its subtree is now handled (to be skipped)."""
        feature = _feature_of(item)
        if feature is not None:
            self.skip(feature)
            return True
        if isinstance(item, TableItem):
            if item.label is DocItemLabel.DOCUMENT_INDEX:
                self.contents(item)
            else:
                self.table(item)
            return True
        if isinstance(item, TitleItem):
            self.heading(item, 0, SpanKind.TITLE)
        elif isinstance(item, SectionHeaderItem):
            self.heading(item, item.level, SpanKind.HEADING)
        elif isinstance(item, ListItem):
            self.paragraph(item, SpanKind.LIST_ITEM, list_level=_list_level(ancestors))
        elif isinstance(item, CodeItem):
            self.paragraph(item, SpanKind.CODE)
        elif isinstance(item, TextItem) and item.label is DocItemLabel.CAPTION:
            self.paragraph(item, SpanKind.CAPTION)
        elif isinstance(item, TextItem) and item.label in _PARAGRAPH_LABELS:
            self.paragraph(item, SpanKind.PARAGRAPH)
        elif item.label in _FURNITURE_LABELS:
            self.not_projected[NotProjected.FURNITURE] += 1
        elif item.label is DocItemLabel.MARKER:
            self.not_projected[NotProjected.MARKERS] += 1
        else:
            self.not_projected[NotProjected.UNKNOWN] += 1
            return True
        return False

    # -- result ----------------------------------------------------------------------

    def stats(self, canonical_bytes: int) -> dict[str, Any]:
        warnings: list[dict[str, Any]] = [
            {
                "code": "skipped_feature",
                "feature": feature.value,
                "count": count,
                "message": f"{feature.value}: {count} skipped, not supported by projection v1",
            }
            for feature, count in self.skipped.items()
            if count
        ]
        empty = len(self.nodes) == 1
        if empty:
            warnings.append({"code": "empty_document", "message": "the document has no content"})
        record = document_record(self.doc)
        ocr = (
            {}
            if record is None
            else {"ocr": {**record.model_dump(mode="json"), "words": self.ocr_words}}
        )
        return {
            **ocr,
            "canonical_text_bytes": canonical_bytes,
            "edges": len(self.edges),
            "empty_document": empty,
            "nodes": len(self.nodes),
            "nodes_by_label": {label.value: n for label, n in self.label_counts.items()},
            "not_projected": {key.value: count for key, count in self.not_projected.items()},
            "skipped_features": {key.value: count for key, count in self.skipped.items()},
            "spans": len(self.spans),
            "spans_by_kind": {kind.value: n for kind, n in self.kind_counts.items()},
            "warnings": warnings,
        }


def _feature_of(item: DocItem) -> SkippedFeature | None:
    """The unsupported v1 feature an item belongs to, if any."""
    label = item.label
    if isinstance(item, PictureItem) or label in _PICTURE_LABELS:
        return SkippedFeature.PICTURES
    if isinstance(item, FormulaItem) or label is DocItemLabel.FORMULA:
        return SkippedFeature.FORMULAS
    if label is DocItemLabel.FOOTNOTE:
        return SkippedFeature.FOOTNOTES
    if label in _FORM_LABELS:
        return SkippedFeature.FORMS
    return None


def _list_level(ancestors: list[tuple[int, int]]) -> int:
    """List groups in the unbroken run of lists and list items right above a list item.

    A heading or paragraph in between ends the run: converters sometimes hang a later
    list below a heading that itself sits inside an earlier list.
    """
    depth = 0
    for _, kind in reversed(ancestors):
        if kind == _LIST:
            depth += 1
        elif kind != _ITEM:
            break
    return max(depth, 1)


def _is_caption(item: NodeItem) -> TypeGuard[TextItem]:
    return isinstance(item, TextItem) and item.label is DocItemLabel.CAPTION


def _in_body(item: NodeItem) -> bool:
    return item.content_layer is ContentLayer.BODY


def project(doc: DoclingDocument, source: ProjectionSource) -> Projection:
    """Project a DoclingDocument to the richdoc graph (docs/projection.md has the rules).

    Raises ``UnsupportedFeature`` (tag: the first skipped feature in reading order) when
    the document holds only content the v1 feature matrix skips, and ``CorruptInput``
    when its item tree is inconsistent (dangling or cyclic references).
    """
    with _cyclic_gc_paused():
        return _build(doc, source)


def _build(doc: DoclingDocument, source: ProjectionSource) -> Projection:
    projector = _Projector(doc, source.name)
    try:
        projector.run()
    except (IndexError, RecursionError) as exc:
        raise CorruptInput(f"inconsistent DoclingDocument item tree: {exc!r}") from exc
    if len(projector.nodes) == 1 and projector.first_skipped is not None:
        found = ", ".join(
            f"{count} {feature.value}" for feature, count in projector.skipped.items() if count
        )
        raise UnsupportedFeature(
            f"the document holds only content projection v1 does not support ({found})",
            feature=projector.first_skipped.value,
        )
    return Projection.model_validate(
        {
            "source": source,
            "canonical_text": SEPARATOR.join(projector.texts),
            "nodes": projector.nodes,
            "edges": projector.edges,
            "spans": projector.spans,
            "stats": projector.stats(projector.offset),
        }
    )
