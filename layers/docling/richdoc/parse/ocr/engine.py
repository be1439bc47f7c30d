"""OCR inside the parse worker: docling's RapidOCR stage, reading only the pages a
conversion names, and the provenance it leaves in the DoclingDocument.

* ``PageOcrModel`` is an OCR engine of docling's OCR factory (registered here, under the
  options kind ``richdoc-rapidocr``): docling's own ``RapidOcrModel`` in ``FULL_PAGE``
  mode (the layout model may be absent or untrained, and docling's default mode reads
  only inside layout regions, so nothing then), run only on the pages ``read`` names and
  built lazily in the child: onnxruntime starts a thread when it is imported, and the
  zygote must stay single-threaded to fork. It keeps each page's lines (box and score).
  The model files are the trained PP-OCRv6 ones the ``rapidocr`` wheel bundles, pinned
  by path: nothing is downloaded, whatever ``DOCLING_ARTIFACTS_PATH`` says. A PDF page is
  rendered at 216 dpi, an image's page read at its own pixels. What the engine returns
  is kept as ``EngineLines`` says: noise dropped, words spaced as the engine's word boxes
  show them.
* ``NativeOcrPdfPipeline`` is docling's native pipeline with that stage: a named page
  is rendered by docling's pdfium page backend (the native pipeline's docling-parse
  backend renders no images) and its lines become text items as native lines do.
* ``StandardOcrPdfPipeline`` is docling's standard pipeline with that stage, keeping
  every page's text layer (docling's skips it for all pages in full-page mode).
* ``record_ocr`` writes what OCR did (``richdoc.parse.ocr.record``) onto the converted document.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from docling.datamodel.accelerator_options import AcceleratorOptions
from docling.datamodel.pipeline_options import (
    NativePdfPipelineOptions,
    OcrMode,
    RapidOcrOptions,
)
from docling.models.base_ocr_model import BaseOcrModel
from docling.models.factories import get_ocr_factory
from docling.models.stages.page_assemble.page_assemble_model import (
    PageAssembleModel,
    PageAssembleOptions,
)
from docling.models.stages.page_preprocessing.page_preprocessing_model import (
    PagePreprocessingModel,
)
from docling.pipeline.native_pdf_pipeline import NativePdfPipeline
from docling.pipeline.standard_pdf_pipeline import StandardPdfPipeline
from docling_core.types.doc import (
    BoundingBox,
    DocItemLabel,
    DoclingDocument,
    FloatingItem,
    NodeItem,
    ProvenanceItem,
    SectionHeaderItem,
    Size,
)
from docling_core.types.doc.common.meta import BaseMeta, FloatingMeta
from docling_core.types.doc.page import SegmentedPdfPage

from richdoc.parse.headings import record_size
from richdoc.parse.ocr.mode import (
    MIN_LINE_CONFIDENCE,
    MIN_TEXT_HEIGHT_PT,
    MODEL_FILES,
    ORIENTATION_CLASSIFIER,
    RENDER_SCALE,
    engine_name,
)
from richdoc.parse.ocr.mode import OcrMode as RichdocOcrMode
from richdoc.parse.ocr.pages import OcrPages
from richdoc.parse.ocr.record import META_FIELD, OcrRecord, Transcription
from richdoc.parse.paragraphs import Line, paragraphs

if TYPE_CHECKING:
    from docling.backend.pdf_backend import PdfPageBackend
    from docling.datamodel.base_models import Page
    from docling.datamodel.document import ConversionResult
    from docling.models.stages.ocr.rapid_ocr_model import RapidOcrModel
    from rapidocr.ch_ppocr_cls import TextClsOutput
    from rapidocr.ch_ppocr_det import TextDetOutput
    from rapidocr.ch_ppocr_rec import TextRecOutput
    from rapidocr.utils.load_image import InputType
    from rapidocr.utils.output import RapidOCROutput

    # What RapidOCR answers: all of it, or detection, classification or recognition alone.
    EngineAnswer = TextDetOutput | TextClsOutput | TextRecOutput | RapidOCROutput

# Confidences are rounded so that a DoclingDocument does not carry float noise.
CONFIDENCE_DECIMALS = 3
# docling's page assembly: how it joins the lines of a text region into one text.
_ASSEMBLER = PageAssembleModel(options=PageAssembleOptions())


def bundled_models() -> Path:
    """Where the ``rapidocr`` wheel keeps its trained models (found without importing
    it: its import loads onnxruntime)."""
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("rapidocr is not installed: the OCR engine needs it")
    return Path(next(iter(spec.submodule_search_locations))) / "models"


class PageOcrOptions(RapidOcrOptions):
    """RapidOCR, as docling configures it, on the pages a conversion names."""

    kind: ClassVar[Literal["richdoc-rapidocr"]] = "richdoc-rapidocr"  # type: ignore[assignment]


def page_ocr_options() -> PageOcrOptions:
    """Full-page OCR with the bundled PP-OCRv6 detection and recognition models, at
    docling's 216 dpi, without the line orientation classifier (``ORIENTATION_CLASSIFIER``
    says why), keeping lines the engine scores at least ``MIN_LINE_CONFIDENCE`` (its own
    filter) and returning each line's word boxes (``EngineLines`` spaces the words)."""
    det, rec, cls = (str(bundled_models() / name) for name in MODEL_FILES)
    return PageOcrOptions(
        mode=OcrMode.FULL_PAGE,
        det_model_path=det,
        rec_model_path=rec,
        cls_model_path=cls,
        scale=RENDER_SCALE,
        use_cls=ORIENTATION_CLASSIFIER,
        text_score=MIN_LINE_CONFIDENCE,
        rapidocr_params={"Global.return_word_box": True},
    )


# One word of a line as RapidOCR returns it: its text, score and box (four corners).
EngineWord = tuple[str, float, Sequence[Sequence[float]]]


class EngineLines:
    """RapidOCR as docling's model calls it, keeping of what the engine returns what is
    text: a line whose box is less than ``MIN_TEXT_HEIGHT_PT`` points tall is dropped
    (the engine's pixels over ``scale()``, the model's pixels per point), and a line's
    text gets a space between two of the engine's words where it has none
    (``spaced_line``). Lines the engine scores below ``MIN_LINE_CONFIDENCE`` it drops
    itself (``page_ocr_options``)."""

    def __init__(self, engine: Callable[..., EngineAnswer], scale: Callable[[], float]) -> None:
        self.engine = engine
        self.scale = scale

    def __call__(self, image: InputType, **options: bool | float | None) -> EngineAnswer:
        from rapidocr.utils.output import RapidOCROutput

        read = self.engine(image, **options)
        if not isinstance(read, RapidOCROutput):
            return read  # detection or recognition alone: nothing docling asks for
        if not read.txts or read.boxes is None or read.scores is None:
            return read
        words = _words_per_line(read.word_results, len(read.txts))
        min_height = MIN_TEXT_HEIGHT_PT * self.scale()
        kept = [n for n, box in enumerate(read.boxes.tolist()) if _box_height(box) >= min_height]
        if not kept:
            return RapidOCROutput()  # what the engine answers when it finds nothing
        # rapidocr annotates its tuples of any length as 1-tuples.
        kept_lines: dict[str, Any] = {
            "boxes": read.boxes[kept],
            "txts": tuple(spaced_line(read.txts[n], words[n]) for n in kept),
            "scores": tuple(read.scores[n] for n in kept),
            "word_results": tuple(words[n] for n in kept),
        }
        return dataclasses.replace(read, **kept_lines)


def _words_per_line(word_results: Any, lines: int) -> list[Sequence[EngineWord]]:
    """Each line's words; none where the engine did not give them line for line (it
    leaves a line without words out of the list, and gives none at all without boxes)."""
    if not isinstance(word_results, tuple | list) or len(word_results) != lines:
        return [()] * lines
    return [
        line if all(isinstance(word, tuple | list) and len(word) == 3 for word in line) else ()
        for line in word_results
    ]


def _box_height(box: Sequence[Sequence[float]]) -> float:
    """A line box's height (its four corners: top-left, top-right, bottom-right,
    bottom-left), as the mean of its two sides."""
    return ((box[3][1] - box[0][1]) + (box[2][1] - box[1][1])) / 2


def _wide(char: str) -> bool:
    """East Asian wide and full-width characters, which are set without spaces."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def spaced_line(text: str, words: Sequence[EngineWord]) -> str:
    """``text`` with a space where the engine's words part and the text has none.

    RapidOCR segments a line into words at its spaces and wherever the recogniser's
    columns of two neighbouring characters lie apart (PaddleOCR's rule), which catches
    spaces the recogniser itself dropped. Next to a wide (East Asian) character nothing
    is added: those scripts put no spaces between words, and the engine also parts a
    word where the script changes. A text whose characters are not the words' (the
    engine's words do not match it) is kept as it is."""
    joined = "".join(word[0] for word in words)
    if not words or joined != "".join(text.split()):
        return text
    boundaries: set[int] = set()
    position = 0
    for word in words[:-1]:
        position += len(word[0])
        boundaries.add(position)
    out: list[str] = []
    seen = 0  # characters of the text so far, spaces not counted
    for char in text:
        if char.isspace():
            out.append(char)
            continue
        previous = out[-1] if out else ""
        parted = seen in boundaries and previous and not previous.isspace()
        if parted and not (_wide(previous) or _wide(char)):
            out.append(" ")
        out.append(char)
        seen += 1
    return "".join(out)


@dataclass(frozen=True)
class OcrLine:
    """One line the engine read: its box (top-left origin, page points) and score."""

    box: BoundingBox
    confidence: float


class PageOcrModel(BaseOcrModel):
    """docling's RapidOCR model on the pages ``read`` names, every other page untouched."""

    def __init__(
        self,
        *,
        enabled: bool,
        artifacts_path: Path | None,
        options: PageOcrOptions,
        accelerator_options: AcceleratorOptions,
    ) -> None:
        super().__init__(
            enabled=enabled,
            artifacts_path=artifacts_path,
            options=options,
            accelerator_options=accelerator_options,
        )
        self.options: PageOcrOptions
        self.pages: frozenset[int] = frozenset()
        self.lines: dict[int, list[OcrLine]] = {}
        self._threads = 1
        self._engine: RapidOcrModel | None = None

    def read(self, pages: Iterable[int], threads: int) -> None:
        """Before a conversion, in the child: the pages to read, with ``threads``
        onnxruntime threads (an engine built for another count is built again)."""
        self.pages = frozenset(pages)
        self.lines = {}
        if threads != self._threads:
            self._engine = None
            self._threads = threads

    def _reader(self) -> RapidOcrModel:
        if self._engine is None:
            from docling.models.stages.ocr.rapid_ocr_model import RapidOcrModel

            engine = RapidOcrModel(
                enabled=True,
                artifacts_path=None,  # the model paths are pinned
                options=self.options,
                accelerator_options=AcceleratorOptions(num_threads=self._threads, device="cpu"),
            )
            # docling's model calls its ``reader`` once per page with the page's image;
            # EngineLines answers that call as RapidOCR does.
            engine.reader = EngineLines(  # type: ignore[assignment]
                engine.reader, lambda: engine.scale
            )
            self._engine = engine
        return self._engine

    def __call__(self, conv_res: ConversionResult, page_batch: Iterable[Page]) -> Iterator[Page]:
        for page in page_batch:
            if self.enabled and page.page_no in self.pages:
                reader = self._reader()
                reader.scale = _own_scale(page) or self.options.scale
                for read in reader(conv_res, [page]):
                    self._keep_lines(read)
            yield page

    def _keep_lines(self, page: Page) -> None:
        cells = page.parsed_page.textline_cells if page.parsed_page is not None else []
        assert page.size is not None
        self.lines[page.page_no] = [
            OcrLine(
                cell.rect.to_bounding_box().to_top_left_origin(page.size.height),
                float(cell.confidence),
            )
            for cell in cells
            if cell.from_ocr
        ]

    @classmethod
    def get_options_type(cls) -> type[PageOcrOptions]:
        return PageOcrOptions


def _own_scale(page: Page) -> float | None:
    """An image's page is read at the image's own pixels (its resolution over 72 dpi; 1
    for an image that records none), not resampled to 216 dpi: upsampling adds nothing
    but cost, and blurs. None for a PDF page, which has no pixels of its own."""
    from docling.backend.image_backend import _ImagePageBackend

    backend = page._backend
    if isinstance(backend, _ImagePageBackend):
        dpi_x, _ = backend._dpi
        return float(dpi_x) / 72.0
    return None


def _register() -> None:
    """Into the factories docling's pipelines ask for (cached per argument, called with
    the keyword), with or without external plugins."""
    for plugins in (False, True):
        factory = get_ocr_factory(allow_external_plugins=plugins)
        if PageOcrOptions not in factory.classes:
            factory.register(PageOcrModel, "richdoc", __name__)


_register()


# The native pipeline with OCR -----------------------------------------------------------


class NativeOcrPdfPipelineOptions(NativePdfPipelineOptions):
    do_ocr: bool = True
    ocr_options: PageOcrOptions


class NativeOcrPdfPipeline(NativePdfPipeline):
    """docling's native pipeline (text lines with page and box, no models) whose pages
    without a text layer are read by ``PageOcrModel`` (and PDFs' pages rendered for it
    by docling's pdfium backend; an image's pages are images already)."""

    def __init__(self, pipeline_options: NativeOcrPdfPipelineOptions) -> None:
        super().__init__(pipeline_options)
        self.pipeline_options: NativeOcrPdfPipelineOptions = pipeline_options
        factory = get_ocr_factory(allow_external_plugins=pipeline_options.allow_external_plugins)
        model = factory.create_instance(
            options=pipeline_options.ocr_options,
            enabled=pipeline_options.do_ocr,
            artifacts_path=None,
            accelerator_options=pipeline_options.accelerator_options,
        )
        assert isinstance(model, PageOcrModel)
        self.ocr_model: PageOcrModel = model
        self._renderer: Any = None  # the conversion's pdfium document backend

    def _build_document(self, conv_res: ConversionResult) -> ConversionResult:
        try:
            return super()._build_document(conv_res)
        finally:
            if self._renderer is not None:
                self._renderer.unload()
                self._renderer = None

    def _parse_page(
        self, timings: Any, conv_res: ConversionResult, page_backend: PdfPageBackend
    ) -> Page | None:
        page = super()._parse_page(timings, conv_res, page_backend)
        if page is None or page.page_no not in self.ocr_model.pages:
            return page
        rendering = self._page_image_backend(conv_res, page_backend)
        page._backend = rendering
        try:
            for _ in self.ocr_model(conv_res, [page]):
                pass
        finally:
            page._backend = None
            if rendering is not page_backend:
                rendering.unload()  # type: ignore[no-untyped-call]
        return page

    def _page_image_backend(
        self, conv_res: ConversionResult, page_backend: PdfPageBackend
    ) -> PdfPageBackend:
        from docling.backend.image_backend import ImageDocumentBackend
        from docling.backend.pypdfium2_backend import PyPdfiumDocumentBackend

        backend = conv_res.input._backend
        if isinstance(backend, ImageDocumentBackend):
            return page_backend
        if self._renderer is None:
            assert backend is not None
            self._renderer = PyPdfiumDocumentBackend(conv_res.input, backend.path_or_stream)
        page: PdfPageBackend = self._renderer.load_page(page_backend.page_no - 1)
        return page

    def _add_text_items(
        self,
        timings: Any,
        doc: DoclingDocument,
        page_no: int,
        parsed_page: SegmentedPdfPage,
        size: Size,
    ) -> None:
        """One text item a paragraph (``richdoc.parse.paragraphs``), where docling's
        native pipeline makes one a line: the lines joined as docling's page assembly
        joins a region's lines (a word hyphenated at a line end closes up)."""
        cells = [
            cell
            for cell in parsed_page.iterate_cells(self.pipeline_options.text_cell_unit)
            if cell.text
        ]
        boxes = [cell.rect.to_bounding_box().to_top_left_origin(size.height) for cell in cells]
        lines = [Line(b.l, b.t, b.r, b.b, cell.text) for b, cell in zip(boxes, cells, strict=True)]
        for paragraph in paragraphs(lines):
            group = paragraph.lines
            text = _ASSEMBLER.sanitize_text(
                [cells[i].text.replace("\x02", "-").strip() for i in group if cells[i].text.strip()]
            )
            if not text:
                continue
            box = BoundingBox.enclosing_bbox([boxes[i] for i in group])
            doc.add_text(
                label=DocItemLabel.TEXT,
                text=text,
                orig=text,
                prov=ProvenanceItem(
                    page_no=page_no,
                    bbox=box.to_bottom_left_origin(size.height),
                    charspan=(0, len(text)),
                ),
            )
            timings.n_text_items += 1

    def _assemble_document(self, conv_res: ConversionResult) -> ConversionResult:
        from docling.backend.image_backend import ImageDocumentBackend

        conv_res = super()._assemble_document(conv_res)
        backend = conv_res.input._backend
        if isinstance(backend, ImageDocumentBackend) and conv_res.document.origin is not None:
            conv_res.document.origin.mimetype = _image_mimetype(backend.path_or_stream)
        return conv_res


def _image_mimetype(source: Any) -> str:
    """What an image is, as docling's content sniffer says, where docling-core accepts it
    on any machine (Python's own table, not the system's: image/webp is in only some);
    ``application/octet-stream`` otherwise. (The native pipeline names every input a PDF.)"""
    import mimetypes

    import filetype

    guessed = filetype.guess_mime(str(source)) if isinstance(source, Path) else None
    builtin = mimetypes.MimeTypes(filenames=()).types_map[True].values()
    return str(guessed) if guessed in builtin else "application/octet-stream"


# The standard pipeline with OCR ---------------------------------------------------------


class StandardOcrPdfPipeline(StandardPdfPipeline):
    """docling's standard pipeline (layout and table models) whose OCR stage is
    ``PageOcrModel``. docling skips extracting the text layer of every page when its OCR
    reads full pages, since its full-page OCR replaces every page's text; ours reads only
    the pages without one, so every page keeps its text layer."""

    def _init_models(self) -> None:
        super()._init_models()
        options = self.preprocessing_model.options
        if options.skip_cell_extraction:
            self.preprocessing_model = PagePreprocessingModel(
                options=options.model_copy(update={"skip_cell_extraction": False})
            )

    def _assemble_document(self, conv_res: ConversionResult) -> ConversionResult:
        conv_res = super()._assemble_document(conv_res)
        record_heading_sizes(conv_res)
        return conv_res


def record_heading_sizes(conv_res: ConversionResult) -> None:
    """Write each heading's type size (its text lines' heights, from the layout region
    it was made of) onto it, for ``richdoc.parse.headings`` to rank it by."""
    heights: dict[tuple[int, tuple[float, ...]], list[float]] = {}
    pages = conv_res.document.pages
    for element in conv_res.assembled.elements:
        if element.label is DocItemLabel.SECTION_HEADER and element.page_no in pages:
            page_height = pages[element.page_no].size.height
            box = element.cluster.bbox.to_bottom_left_origin(page_height)
            heights[(element.page_no, box.as_tuple())] = [
                cell.rect.to_bounding_box().height for cell in element.cluster.cells
            ]
    for item in conv_res.document.texts:
        if isinstance(item, SectionHeaderItem) and item.prov:
            prov = item.prov[0]
            found = heights.get((prov.page_no, prov.bbox.as_tuple()))
            if found:
                record_size(item, found)


# The provenance ---------------------------------------------------------------------------


def record_ocr(
    document: DoclingDocument,
    reading: OcrPages,
    lines: dict[int, list[OcrLine]],
    mode: RichdocOcrMode,
) -> None:
    """Write what OCR did onto ``document``: a ``Transcription`` on every item with
    provenance on a page OCR read (the mean score of the engine's lines inside its
    boxes), and the ``OcrRecord`` on its body. Nothing when OCR had nothing to do."""
    if not reading.read and not reading.unread:
        return
    read = frozenset(reading.read)
    heights = {no: page.size.height for no, page in document.pages.items()}
    for item in (*document.texts, *document.tables):
        boxes = [
            (prov.page_no, prov.bbox.to_top_left_origin(heights[prov.page_no]))
            for prov in item.prov
            if prov.page_no in read and prov.page_no in heights
        ]
        if boxes:
            confidence = _confidence(boxes, lines)
            _set_field(item, Transcription(confidence=confidence).model_dump(mode="json"))
    record = OcrRecord(
        engine=engine_name(),
        mode=mode,
        ocr_pages=list(reading.read),
        unread_pages=list(reading.unread),
    )
    _set_field(document.body, record.model_dump(mode="json"))


def _confidence(boxes: list[tuple[int, BoundingBox]], lines: dict[int, list[OcrLine]]) -> float:
    """The mean score of the lines that overlap the item's boxes; the mean of its pages'
    lines when none does (a box docling drew around them differently); 0 for a page
    where the engine read nothing."""
    inside = [
        line.confidence
        for page, box in boxes
        for line in lines.get(page, [])
        if box.intersection_area_with(line.box) > 0
    ]
    if not inside:
        inside = [line.confidence for page, _ in boxes for line in lines.get(page, [])]
    return round(statistics.fmean(inside), CONFIDENCE_DECIMALS) if inside else 0.0


def _set_field(item: NodeItem, value: dict[str, Any]) -> None:
    """Set the richdoc field of an item's ``meta`` (the meta type its class declares)."""
    meta = item.meta
    if meta is None:
        meta = FloatingMeta() if isinstance(item, FloatingItem) else BaseMeta()
    setattr(meta, META_FIELD, value)
    item.meta = meta
