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
* A form's labels and values (``light_rules.forms``) are text regions a cell each; after
  docling's post-processing fits every region to its words, each field gets its cell
  back, so that docling's reading order reads a label, then its value; and docling's
  merge of a paragraph continued in the next column joins no two cells of a row
  (``LightReadingOrder``).
* A page whose text is mostly right to left is read mirrored, by those rules and by
  docling's reading order (``richdoc.parse.right_to_left``).
* A page header of page 1 that is the document's title (``light_rules.first_page_title``)
  becomes a heading before the document is assembled.
* Everything after is docling's: reading order, captions, a paragraph continued over a
  page break; then the heading levels richdoc gives (``richdoc.parse.headings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docling.datamodel.base_models import Cluster, LayoutPrediction
from docling.models.postprocessing.reading_order_rb import PageElement
from docling.models.stages.layout.layout_postprocessing_model import LayoutPostprocessingModel
from docling.utils.font_style import parse_font_style
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel

from richdoc.parse.light_rules import (
    BOLD_WEIGHT,
    FIELD_GAP,
    Form,
    first_page_title,
    forms,
    heading_first_row,
    heading_row,
    heads,
    labels,
    larger_heading,
    lines_inside,
    only_furniture,
    overlaps,
    reads_as_contents,
    reads_as_heading,
    reads_as_prose,
    same_region,
    tabular_blocks,
    text_covers_figure,
)
from richdoc.parse.ocr.engine import StandardOcrPdfPipeline
from richdoc.parse.paragraphs import Line, paragraphs, rows_of
from richdoc.parse.right_to_left import (
    RightToLeftReadingOrder,
    mirrored_box,
    mirrored_line,
    reads_right_to_left,
)

if TYPE_CHECKING:
    from docling.datamodel.base_models import Page
    from docling.datamodel.document import ConversionResult
    from docling_core.types.doc.page import TextCell

_FURNITURE = (DocItemLabel.PAGE_HEADER, DocItemLabel.PAGE_FOOTER)
# A form's label and value regions lie FIELD_GAP apart; columns, a gutter.
ROW_CELLS_GAP = 2 * FIELD_GAP


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
        self.fields: set[int] = set()

    def add(self, label: DocItemLabel, box: BoundingBox, confidence: float = 1.0) -> None:
        self.kept.append(Cluster(id=self.next_id, label=label, bbox=box, confidence=confidence))
        self.next_id += 1

    def paragraphs_of(self, lines: Sequence[Line], page_lines: Sequence[Line]) -> None:
        """Text regions for ``lines`` (in the page's order), a paragraph each. A
        paragraph's first row that reads as a heading of the rows below it, or a
        one-line paragraph that reads as a heading of the next paragraph right below it
        (or, with none there, as a heading set larger than the page's text, unless the
        next paragraph starts on its row: a label beside its value), is a heading
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
                else not (after and labels(rows[0], after[0])) and larger_heading(rows, page_lines)
            ):
                label = DocItemLabel.SECTION_HEADER
            self.add(label, self._box(lines, members))

    def form(self, form: Form) -> None:
        """A text region for each label and each value of a form, the label first."""
        for label, value in form.fields:
            for box in (label, value):
                self.fields.add(self.next_id)
                self.add(DocItemLabel.TEXT, _region(box))

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


@dataclass(frozen=True)
class PageRegions:
    """A page's regions after the light pipeline's rules, and which of them are a form's
    fields (their ids)."""

    clusters: list[Cluster]
    fields: frozenset[int] = frozenset()


def light_clusters(page: Page, clusters: list[Cluster]) -> PageRegions:
    """The layout model's regions of a page after the light pipeline's rules: its other
    regions kept or relabelled, and every line none of them holds (inside the model's
    text regions or outside every region) grouped into paragraphs and headings."""
    cells = [cell for cell in page.cells if cell.text.strip()]
    lines = [_line(cell) for cell in cells]
    width = page.size.width if page.size is not None else 0.0
    if width and reads_right_to_left(cell.text for cell in cells):
        # Read from the right (richdoc.parse.right_to_left), and mirrored back.
        lines = [mirrored_line(line, width) for line in lines]
        regions = _rebuilt(lines, [_mirrored(c, width) for c in clusters])
        kept = [_mirrored(c, width) for c in regions.kept]
        return PageRegions(kept, frozenset(regions.fields))
    regions = _rebuilt(lines, clusters)
    return PageRegions(regions.kept, frozenset(regions.fields))


def _mirrored(cluster: Cluster, width: float) -> Cluster:
    return cluster.model_copy(update={"bbox": mirrored_box(cluster.bbox, width)})


def _rebuilt(lines: list[Line], clusters: list[Cluster]) -> _Regions:
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
            found = forms(region, lines)
            for form in found:
                regions.form(form)
            for table in tabular_blocks(region, lines):
                if not any(overlaps(table, form.box) for form in found):
                    regions.add(_table_label(table, lines), _region(table), cluster.confidence)
            continue
        if cluster.label is DocItemLabel.TABLE and reads_as_prose(region, lines):
            continue  # running text after all: its lines are read below
        if cluster.label is DocItemLabel.TABLE and (found := forms(region, lines)):
            for form in found:
                regions.form(form)
            continue  # a form after all: its other lines are read below
        if cluster.label is DocItemLabel.TABLE:
            cluster = cluster.model_copy(update={"label": _table_label(region, lines)})
        regions.kept.append(cluster)
    held = {id(line) for c in regions.kept for line in lines_inside(_box(c.bbox), lines)}
    regions.paragraphs_of([line for line in lines if id(line) not in held], lines)
    return regions


class LightLayoutPostprocessing(LayoutPostprocessingModel):
    """docling's layout post-processing after the light pipeline's rules."""

    def postprocess_layout(
        self, conv_res: ConversionResult, pages: Sequence[Page]
    ) -> Sequence[LayoutPrediction]:
        fields: dict[int, dict[int, BoundingBox]] = {}
        for page in pages:
            layout = page.predictions.layout
            if page._backend is not None and page._backend.is_valid() and layout is not None:
                regions = light_clusters(page, list(layout.clusters))
                page.predictions.layout = LayoutPrediction(clusters=regions.clusters)
                fields[page.page_no] = {
                    c.id: c.bbox for c in regions.clusters if c.id in regions.fields
                }
        predictions = super().postprocess_layout(conv_res, pages)
        for page, prediction in zip(pages, predictions, strict=True):
            cells = fields.get(page.page_no, {})
            for cluster in prediction.clusters:
                if cluster.id in cells:
                    # docling fits a text region to its words; a form's field keeps its
                    # cell (light_rules.forms), so docling's reading order reads
                    # each label beside its value, then the next row.
                    cluster.bbox = BoundingBox.enclosing_bbox([cluster.bbox, cells[cluster.id]])
        return predictions


class LightReadingOrder(RightToLeftReadingOrder):
    """docling's reading order (read from the right on a right-to-left page), whose
    merges join no two cells of a row.

    docling joins a text region to the next one on its right when a sentence runs on
    (a paragraph continued in the next column); a form's label and its value
    (``light_rules.forms``) are regions side by side less than ``ROW_CELLS_GAP`` apart,
    which no two columns are."""

    def predict_merges(self, sorted_elements: list[PageElement]) -> dict[int, list[int]]:
        merges = super().predict_merges(sorted_elements)
        by_cid = {element.cid: element for element in sorted_elements}
        kept: dict[int, list[int]] = {}
        for first, following in merges.items():
            chain, previous = [], by_cid[first]
            for cid in following:
                if _cells_of_a_row(previous, by_cid[cid]):
                    break
                chain.append(cid)
                previous = by_cid[cid]
            if chain:
                kept[first] = chain
        return kept


def _cells_of_a_row(left: PageElement, right: PageElement) -> bool:
    gap = right.l - left.r
    return left.page_no == right.page_no and left.overlaps_vertically(right) and gap < ROW_CELLS_GAP


class LightOcrPdfPipeline(StandardOcrPdfPipeline):
    """docling's standard pipeline on the light models (its options name them), with the
    light pipeline's layout rules."""

    def _init_models(self) -> None:
        super()._init_models()
        self.layout_postprocessing_model = LightLayoutPostprocessing(
            options=self.layout_postprocessing_model.options
        )
        self.reading_order_model.ro_model = LightReadingOrder()

    def _assemble_document(self, conv_res: ConversionResult) -> ConversionResult:
        title_first_page(conv_res.pages)
        return super()._assemble_document(conv_res)


def title_first_page(pages: Sequence[Page]) -> None:
    """The page header of the document's first page that is its title
    (``light_rules.first_page_title``) becomes a heading, the first of the page's body."""
    first = next((page for page in pages if page.page_no == 1 and page.assembled), None)
    if first is None or first.assembled is None:
        return
    unit = first.assembled
    elsewhere = [
        element.text or ""
        for page in pages
        if page is not first and page.assembled is not None
        for element in page.assembled.elements
    ]
    body = [_box(element.cluster.bbox) for element in unit.body]
    for element in list(unit.headers):
        if element.label is DocItemLabel.PAGE_HEADER and first_page_title(
            _box(element.cluster.bbox), element.text or "", body, elsewhere
        ):
            cluster = element.cluster.model_copy(update={"label": DocItemLabel.SECTION_HEADER})
            heading = element.model_copy(
                update={"label": DocItemLabel.SECTION_HEADER, "cluster": cluster}
            )
            unit.headers.remove(element)
            unit.body.insert(0, heading)
            unit.elements[unit.elements.index(element)] = heading
