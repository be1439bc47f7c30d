"""The light PDF pipeline: docling's standard pipeline with trained models that install
with pip, their weights inside the wheels (nothing is downloaded, no model hub).

* Layout: CDLA (``richdoc.parse.cdla_layout``); tables: SLANet-plus
  (``richdoc.parse.slanet_tables``); OCR: the stage every pipeline shares
  (``richdoc.parse.ocr.engine``) on the pages without a text layer, before the layout
  post-processing, so a scanned page gets its regions, reading order, headings and
  tables as a typeset one does.
* Before docling's own layout post-processing (cell assignment, overlaps, orphans),
  ``LightLayoutPostprocessing`` rebuilds each page's regions by the light pipeline's
  rules (``richdoc.parse.light_rules``): the model's headings, tables, pictures, captions
  and page furniture are kept or relabelled, figures that text covers give way to their
  text (and the grids in them to tables), and every text line none of those regions
  holds, in the model's text regions or in none, is grouped into paragraphs
  (``richdoc.parse.paragraphs``) and headings.
* Everything after is docling's: reading order, captions, a paragraph continued over a
  page break; then the heading levels richdoc gives (``richdoc.parse.headings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from docling.datamodel.base_models import Cluster, LayoutPrediction
from docling.models.stages.layout.layout_postprocessing_model import LayoutPostprocessingModel
from docling.utils.font_style import parse_font_style
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel

from richdoc.parse.light_rules import (
    BOLD_WEIGHT,
    heading_first_row,
    heading_row,
    heads,
    larger_heading,
    lines_inside,
    only_furniture,
    reads_as_contents,
    reads_as_heading,
    reads_as_prose,
    same_region,
    tabular_blocks,
    text_covers_figure,
)
from richdoc.parse.ocr.engine import StandardOcrPdfPipeline
from richdoc.parse.paragraphs import Line, paragraphs, rows_of

if TYPE_CHECKING:
    from docling.datamodel.base_models import Page
    from docling.datamodel.document import ConversionResult
    from docling_core.types.doc.page import TextCell

_FURNITURE = (DocItemLabel.PAGE_HEADER, DocItemLabel.PAGE_FOOTER)


def _box(box: BoundingBox) -> tuple[float, float, float, float]:
    return (box.l, box.t, box.r, box.b)


def _region(box: tuple[float, float, float, float]) -> BoundingBox:
    return BoundingBox(l=box[0], t=box[1], r=box[2], b=box[3], coord_origin=CoordOrigin.TOPLEFT)


def _line(cell: TextCell) -> Line:
    box = cell.rect.to_bounding_box()
    return Line(box.l, box.t, box.r, box.b, cell.text, emphasised(cell))


def emphasised(cell: TextCell) -> bool:
    """Whether a text-layer cell is set in a bold or italic font (docling reads the style
    from the font's name); OCR'd text has no font, so none is."""
    font = getattr(cell, "font_name", None)
    if font is None:
        return False
    style = parse_font_style(font)
    return style.weight >= BOLD_WEIGHT or style.italic


class _Regions:
    """The regions of one page being rebuilt: new ids follow the model's."""

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self.kept: list[Cluster] = []
        self.next_id = max((cluster.id for cluster in clusters), default=-1) + 1

    def add(self, label: DocItemLabel, box: BoundingBox, confidence: float = 1.0) -> None:
        self.kept.append(Cluster(id=self.next_id, label=label, bbox=box, confidence=confidence))
        self.next_id += 1

    def paragraphs_of(self, lines: Sequence[Line], page_lines: Sequence[Line]) -> None:
        """Text regions for ``lines`` (in the page's order), a paragraph each. A
        paragraph's first row that reads as a heading of the rows below it, or a
        one-line paragraph that reads as a heading of the next paragraph right below it
        (or, with none there, as a heading set larger than the page's text), is a heading
        region."""
        found = paragraphs(lines)
        for index, paragraph in enumerate(found):
            rows, members = paragraph.rows, paragraph.lines
            if len(rows) > 1 and heading_first_row(rows[0], rows[1:]):
                self.add(DocItemLabel.SECTION_HEADER, self._box(lines, paragraph.row_lines[0]))
                rows = rows[1:]
                members = [i for row in paragraph.row_lines[1:] for i in row]
            label = DocItemLabel.TEXT
            after = found[index + 1].rows if index + 1 < len(found) else []
            if len(rows) == 1 and (
                heading_row(rows[0], after)
                if after and heads(rows[0], after[0])
                else larger_heading(rows, page_lines)
            ):
                label = DocItemLabel.SECTION_HEADER
            self.add(label, self._box(lines, members))

    @staticmethod
    def _box(lines: Sequence[Line], indices: Sequence[int]) -> BoundingBox:
        return BoundingBox.enclosing_bbox([_box_of(lines[i]) for i in indices])


def _box_of(line: Line) -> BoundingBox:
    return BoundingBox(
        l=line.left, t=line.top, r=line.right, b=line.bottom, coord_origin=CoordOrigin.TOPLEFT
    )


def _table_label(region: tuple[float, float, float, float], lines: Sequence[Line]) -> DocItemLabel:
    return DocItemLabel.DOCUMENT_INDEX if reads_as_contents(region, lines) else DocItemLabel.TABLE


def _furniture_over_heading(cluster: Cluster, clusters: Sequence[Cluster]) -> bool:
    """Whether a page header or footer region is also read as a heading (the same box):
    the heading is kept, so its text stays in the body (``light_rules``)."""
    if cluster.label not in _FURNITURE:
        return False
    return any(
        other.label is DocItemLabel.SECTION_HEADER
        and same_region(_box(cluster.bbox), _box(other.bbox))
        for other in clusters
    )


def light_clusters(page: Page, clusters: list[Cluster]) -> list[Cluster]:
    """The layout model's regions of a page after the light pipeline's rules: its other
    regions kept or relabelled, and every line none of them holds (inside the model's
    text regions or outside every region) grouped into paragraphs and headings."""
    cells = [cell for cell in page.cells if cell.text.strip()]
    lines = [_line(cell) for cell in cells]
    clusters = [c for c in clusters if not _furniture_over_heading(c, clusters)]
    if lines and only_furniture([_box(c.bbox) for c in clusters if c.label in _FURNITURE], lines):
        clusters = [c for c in clusters if c.label not in _FURNITURE]
    regions = _Regions(clusters)
    for cluster in clusters:
        region = _box(cluster.bbox)
        if cluster.label is DocItemLabel.TEXT:
            continue  # its lines are read with the page's other text lines, below
        if cluster.label in _FURNITURE:
            rows = [row.rows[0] for row in rows_of(lines_inside(region, lines))]
            if larger_heading(rows, lines):
                cluster = cluster.model_copy(update={"label": DocItemLabel.SECTION_HEADER})
        if cluster.label is DocItemLabel.SECTION_HEADER:
            text = " ".join(line.text for line in lines_inside(region, lines))
            if text and not reads_as_heading(text):
                continue  # text after all: its lines are read below
        if cluster.label is DocItemLabel.PICTURE and text_covers_figure(region, lines):
            for table in tabular_blocks(region, lines):
                regions.add(_table_label(table, lines), _region(table), cluster.confidence)
            continue
        if cluster.label is DocItemLabel.TABLE and reads_as_prose(region, lines):
            continue  # running text after all: its lines are read below
        if cluster.label is DocItemLabel.TABLE:
            cluster = cluster.model_copy(update={"label": _table_label(region, lines)})
        regions.kept.append(cluster)
    held = {id(line) for c in regions.kept for line in lines_inside(_box(c.bbox), lines)}
    regions.paragraphs_of([line for line in lines if id(line) not in held], lines)
    return regions.kept


class LightLayoutPostprocessing(LayoutPostprocessingModel):
    """docling's layout post-processing after the light pipeline's rules."""

    def postprocess_layout(
        self, conv_res: ConversionResult, pages: Sequence[Page]
    ) -> Sequence[LayoutPrediction]:
        for page in pages:
            layout = page.predictions.layout
            if page._backend is not None and page._backend.is_valid() and layout is not None:
                page.predictions.layout = LayoutPrediction(
                    clusters=light_clusters(page, list(layout.clusters))
                )
        return super().postprocess_layout(conv_res, pages)


class LightOcrPdfPipeline(StandardOcrPdfPipeline):
    """docling's standard pipeline on the light models (its options name them), with the
    light pipeline's layout rules."""

    def _init_models(self) -> None:
        super()._init_models()
        self.layout_postprocessing_model = LightLayoutPostprocessing(
            options=self.layout_postprocessing_model.options
        )
