"""Inside the isolated worker: docling's converters, built once in the zygote, and the
conversion of one document in a forked child. The only parse module that imports docling.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from richdoc.contracts import PageSpan
from richdoc.formats import ArchiveLimits, DocFormat, Inspection, inspect_file
from richdoc.parse.classify import conversion_error
from richdoc.parse.headings import assign_levels
from richdoc.parse.merge import dump_document
from richdoc.parse.ocr.mode import OcrMode
from richdoc.parse.ocr.pages import OcrPages, pages_to_read
from richdoc.parse.ocr.record import require_text
from richdoc.parse.reports import ChildReport, Inspected
from richdoc.parse.settings import (
    DOCUMENT_TIMEOUT_FRACTION,
    LAYOUT_PIPELINES,
    PIPELINE_OPTIONS,
    ParserSettings,
    Pipeline,
)
from richdoc.parse.shard_plan import PAGINATED_FORMATS
from richdoc.parse.tasks import PARSE_TASK, ConvertTask, InspectTask
from richdoc.taxonomy import ResourceLimit

if TYPE_CHECKING:
    from docling.datamodel.document import ConversionResult
    from docling.datamodel.progress import ConversionProgressEvent
    from docling.document_converter import DocumentConverter, FormatOption

    from richdoc.parse.ocr.engine import PageOcrModel


@dataclass(frozen=True)
class _Warm:
    settings: ParserSettings
    converters: dict[DocFormat, DocumentConverter]


_warm: _Warm | None = None


def paged_format_option(settings: ParserSettings, fmt: DocFormat) -> FormatOption:
    """How a PDF or an image is converted: the settings' pipeline, whose OCR stage reads
    the pages each conversion names (``richdoc.parse.ocr.engine``; none with OCR off)."""
    from docling.backend.image_backend import ImageDocumentBackend
    from docling.datamodel.accelerator_options import AcceleratorOptions
    from docling.datamodel.pipeline_options import (
        TableFormerMode,
        TableStructureOptions,
        TextCellUnit,
        ThreadedPdfPipelineOptions,
    )
    from docling.document_converter import (
        FormatOption,
        ImageFormatOption,
        NativePdfFormatOption,
        PdfFormatOption,
    )

    from richdoc.parse.ocr.engine import (
        NativeOcrPdfPipeline,
        NativeOcrPdfPipelineOptions,
        StandardOcrPdfPipeline,
        page_ocr_options,
    )

    do_ocr = settings.ocr_mode is not OcrMode.OFF
    if settings.pdf_pipeline is Pipeline.LIGHT:
        from richdoc.parse.cdla_layout import CdlaLayoutOptions
        from richdoc.parse.light_pipeline import LightOcrPdfPipeline
        from richdoc.parse.slanet_tables import SlanetTableOptions

        light = ThreadedPdfPipelineOptions(
            do_ocr=do_ocr,
            ocr_options=page_ocr_options(),
            layout_options=CdlaLayoutOptions(),
            do_table_structure=PIPELINE_OPTIONS[Pipeline.LIGHT]["do_table_structure"],
            table_structure_options=SlanetTableOptions(),
            # The models' sessions are built in the child, with its threads.
            accelerator_options=AcceleratorOptions(num_threads=1, device="cpu"),
        )
        if fmt is DocFormat.IMAGE:
            return ImageFormatOption(pipeline_cls=LightOcrPdfPipeline, pipeline_options=light)
        return PdfFormatOption(pipeline_cls=LightOcrPdfPipeline, pipeline_options=light)
    if settings.pdf_pipeline is Pipeline.STANDARD:
        options = PIPELINE_OPTIONS[Pipeline.STANDARD]
        standard = ThreadedPdfPipelineOptions(
            artifacts_path=settings.artifacts_path,
            do_ocr=do_ocr,
            ocr_options=page_ocr_options(),
            do_table_structure=options["do_table_structure"],
            table_structure_options=TableStructureOptions(
                mode=TableFormerMode(options["table_mode"])
            ),
            # One thread while the zygote loads the models; children raise it.
            accelerator_options=AcceleratorOptions(num_threads=1, device=options["device"]),
        )
        if fmt is DocFormat.IMAGE:
            return ImageFormatOption(pipeline_cls=StandardOcrPdfPipeline, pipeline_options=standard)
        return PdfFormatOption(pipeline_cls=StandardOcrPdfPipeline, pipeline_options=standard)
    options = PIPELINE_OPTIONS[Pipeline.NATIVE]
    native = NativeOcrPdfPipelineOptions(
        text_cell_unit=TextCellUnit(options["text_cell_unit"]),
        generate_picture_images=options["generate_picture_images"],
        generate_page_images=options["generate_page_images"],
        do_ocr=do_ocr,
        ocr_options=page_ocr_options(),
        accelerator_options=AcceleratorOptions(num_threads=1, device="cpu"),
    )
    if fmt is DocFormat.IMAGE:
        return FormatOption(
            pipeline_cls=NativeOcrPdfPipeline, pipeline_options=native, backend=ImageDocumentBackend
        )
    return NativePdfFormatOption(pipeline_cls=NativeOcrPdfPipeline, pipeline_options=native)


def simple_format_option(fmt: DocFormat) -> FormatOption | None:
    """How a format of the simple pipeline is converted where richdoc changes docling's
    default: a workbook by ``richdoc.parse.workbook`` (its sheets as sections, its dates
    as dates); None for docling's own."""
    if fmt is not DocFormat.XLSX:
        return None
    from docling.document_converter import ExcelFormatOption

    from richdoc.parse.workbook import WorkbookBackend

    return ExcelFormatOption(backend=WorkbookBackend)


def build_converters(settings: ParserSettings) -> dict[DocFormat, DocumentConverter]:
    """One converter per format, each allowing only its format: a file whose content
    docling recognises as something else is refused instead of parsed as that."""
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    converters = {}
    for fmt in DocFormat:
        input_format = InputFormat(fmt.value)
        paged = settings.pipeline_for(fmt) is not Pipeline.SIMPLE
        option = paged_format_option(settings, fmt) if paged else simple_format_option(fmt)
        options = {input_format: option} if option is not None else None
        converter = DocumentConverter(allowed_formats=[input_format], format_options=options)
        converter.initialize_pipeline(input_format)
        converters[fmt] = converter
    return converters


def warm_up(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    """Runs once in the zygote: import docling and build every pipeline (the standard
    one loads both models, with one torch thread). Says how many threads torch has."""
    global _warm
    _no_progress_monitor()
    settings = ParserSettings(
        Pipeline(config["pdf_pipeline"]), config.get("artifacts"), OcrMode(config["ocr_mode"])
    )
    _warm = _Warm(settings, build_converters(settings))
    return {"torch_threads": _torch_threads()}


def warm_up_inspection(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    """The plan's zygote: it only inspects (pdfium counts a PDF's pages), so it loads
    neither docling's converters nor the models."""
    import pypdfium2  # noqa: F401

    return {"torch_threads": _torch_threads()}


def _torch_threads() -> int | None:
    """torch's intra-op threads in this process; None where torch is not loaded."""
    torch = sys.modules.get("torch")
    return None if torch is None else int(torch.get_num_threads())


def _no_progress_monitor() -> None:
    """tqdm starts a monitor thread with its first progress bar, and transformers shows
    one while it loads the layout model's weights: the zygote would be left with a
    second thread and refuse to fork. Bars without a monitor still work."""
    import tqdm

    tqdm.tqdm.monitor_interval = 0


def _use_threads(threads: int) -> None:
    """Raise torch's threads for this child's conversion. Safe here only: the zygote never
    ran a parallel operation, so no half-alive OpenMP pool was forked."""
    import torch

    torch.set_num_threads(threads)


def ocr_stage(converter: DocumentConverter) -> PageOcrModel | None:
    """The OCR stage of a converter's warm pipeline; None for a format OCR never reads."""
    from richdoc.parse.ocr.engine import PageOcrModel

    for pipeline in converter.initialized_pipelines.values():
        model = getattr(pipeline, "ocr_model", None)
        if isinstance(model, PageOcrModel):
            return model
    return None


def light_models_use_threads(converter: DocumentConverter, threads: int) -> None:
    """Give the light pipeline's layout and table models ``threads`` onnxruntime threads
    (their sessions are built in the child, on first use)."""
    for pipeline in converter.initialized_pipelines.values():
        for stage in ("layout_model", "table_model"):
            use = getattr(getattr(pipeline, stage, None), "use_threads", None)
            if use is not None:
                use(threads)


def set_document_timeout(converter: DocumentConverter, seconds: float) -> None:
    """Give the converter's warm pipelines docling's document timeout.

    They were built in the zygote without one. Only the pipeline instances get new
    options (in the child, its own copy): the converter's cache key is computed from
    the format options, which stay as they were, so the warm pipeline is reused."""
    for pipeline in converter.initialized_pipelines.values():
        pipeline.pipeline_options = pipeline.pipeline_options.model_copy(
            update={"document_timeout": seconds}
        )


def _expected_pages(page_count: int, pages: PageSpan | None) -> range:
    """The page numbers docling was asked to convert (its own ``get_expected_page_nos``)."""
    if pages is None:
        return range(1, page_count + 1)
    return range(pages.start, min(pages.end, page_count) + 1)


def _failed_pages(result: ConversionResult, pages: PageSpan | None) -> list[int]:
    converted = {page.page_no for page in result.pages}
    expected = _expected_pages(result.input.page_count, pages)
    return [n for n in expected if n not in converted]


class _PageOutcomes:
    """docling's per-page progress events of one conversion: which pages it finished,
    and whether each converted."""

    def __init__(self) -> None:
        self.converted: dict[int, bool] = {}

    def __call__(self, event: ConversionProgressEvent) -> None:
        from docling.datamodel.progress import PageCompletedProgress

        if isinstance(event, PageCompletedProgress):
            self.converted[event.page_no] = event.success

    def every_page_failed(self, expected: range) -> bool:
        return bool(expected) and all(self.converted.get(n) is False for n in expected)


def document_json(result: ConversionResult) -> bytes:
    return dump_document(result.document)


def _page_range_of(task: ConvertTask) -> PageSpan | None:
    if task.page_range is None:
        return None
    if task.format not in PAGINATED_FORMATS:
        raise ValueError(f"a {task.format} has no pages to convert by range")
    return task.page_range


def run_task(args: JsonValue) -> JsonValue:
    """The worker's target: a ``richdoc.parse.tasks`` task in, its report out."""
    task = PARSE_TASK.validate_python(args)
    if isinstance(task, InspectTask):
        return inspect_document(task).model_dump(mode="json")
    return convert_document(task).model_dump(mode="json")


def _inspect(task: ConvertTask | InspectTask) -> Inspection:
    return inspect_file(
        task.source,
        task.format,
        max_pages=task.max_pages,
        archive=ArchiveLimits.for_ceiling(task.mem_ceiling_mb),
    )


def inspect_document(task: InspectTask) -> Inspected:
    """Runs in the forked child: the inspection a conversion starts with, and its page
    count. Isolated like a conversion: pdfium reads the untrusted bytes."""
    started = time.monotonic()
    inspection = _inspect(task)
    return Inspected(
        page_count=inspection.page_count,
        image_only=list(inspection.image_only),
        inspect_s=time.monotonic() - started,
    )


def convert_document(task: ConvertTask) -> ChildReport:
    """Runs in the forked child: inspect, convert, classify, write the JSON.

    With ``page_range`` (a PDF shard) docling converts only those pages; items, pages and
    provenance keep the source's page numbers. A shard whose every page fails to parse is
    a partial shard with no content, not a corrupt document: the rest of the document
    may convert, as it would unsharded (richdoc.parse.merge decides for the whole).
    """
    from docling.datamodel.base_models import ConversionStatus

    if _warm is None:
        raise RuntimeError("convert_document runs only in a warmed-up parse worker")
    settings = _warm.settings
    fmt, source = task.format, task.source
    pipeline = settings.pipeline_for(fmt)
    pages = _page_range_of(task)
    started = time.monotonic()
    inspection = _inspect(task)
    page_count = inspection.page_count
    if pages is not None and page_count is not None and pages.end > page_count:
        raise ValueError(f"pages {pages} are beyond the document's {page_count} pages")
    reading = pages_to_read(settings.ocr_mode, fmt, inspection, pages)
    if reading.read and task.ocr_page_mb is not None and task.mem_ceiling_mb < task.ocr_page_mb:
        raise ResourceLimit(
            f"the parse worker's {task.mem_ceiling_mb} MB memory ceiling is below the "
            f"{task.ocr_page_mb} MB one page needs on the {pipeline} pipeline with OCR "
            f"({len(reading.read)} pages to read); a bigger tier may parse it"
        )
    inspected = time.monotonic()
    converter = _warm.converters[fmt]
    threads = None
    if pipeline in LAYOUT_PIPELINES:
        set_document_timeout(converter, DOCUMENT_TIMEOUT_FRACTION * task.timeout_s)
        threads = task.threads
        if pipeline is Pipeline.STANDARD:
            _use_threads(threads)
        else:
            light_models_use_threads(converter, threads)
    ocr = ocr_stage(converter)
    if ocr is not None:
        ocr.read(reading.read, task.threads)
    outcomes = _PageOutcomes()
    try:
        if pages is None:
            result = converter.convert(source, raises_on_error=True)
        else:
            result = converter.convert(
                source,
                raises_on_error=True,
                page_range=(pages.start, pages.end),
                progress_callback=outcomes,
            )
    except Exception as exc:
        error = conversion_error(exc)
        if error is None:
            raise  # out of memory or disk: the worker reports a resource limit
        if pages is not None and outcomes.every_page_failed(range(pages.start, pages.end + 1)):
            return _failed_shard(task, pipeline, page_count or 0, pages, started, inspected)
        raise error from exc
    partial = result.status is ConversionStatus.PARTIAL_SUCCESS
    failed = _failed_pages(result, pages) if partial else []
    if partial and not task.accept_partial:
        errors = "; ".join(e.error_message for e in result.errors[:3])
        what = f"pages {pages}" if pages else "the document"
        raise ResourceLimit(
            f"docling converted {what} only partially ({len(failed)} of "
            f"{len(_expected_pages(result.input.page_count, pages))} pages failed: {errors}); "
            "a bigger tier may finish it"
        )
    _record_ocr(result, reading, ocr, settings.ocr_mode)
    if pages is None:
        # A shard is part of a document: the merge judges the whole, and gives its
        # headings' levels, seeing every heading.
        require_text(result.document)
        if pipeline in LAYOUT_PIPELINES:
            assign_levels(result.document)
    task.output.write_bytes(document_json(result))
    return ChildReport(
        pipeline=pipeline,
        page_count=result.input.page_count,
        page_range=pages,
        partial=partial,
        failed_pages=failed,
        ocr_pages=list(reading.read),
        unread_pages=list(reading.unread),
        inspect_s=inspected - started,
        convert_s=time.monotonic() - inspected,
        threads=threads,
    )


def _record_ocr(
    result: ConversionResult, reading: OcrPages, ocr: PageOcrModel | None, mode: OcrMode
) -> None:
    from richdoc.parse.ocr.engine import record_ocr

    record_ocr(result.document, reading, ocr.lines if ocr is not None else {}, mode)


def _failed_shard(
    task: ConvertTask,
    pipeline: Pipeline,
    page_count: int,
    pages: PageSpan,
    started: float,
    inspected: float,
) -> ChildReport:
    """Every page of the shard failed: at the biggest tier an empty shard (no pages, no
    items) stands for them, so that the merge reports them as the document's failed pages
    exactly as a whole-document conversion would; below it, a bigger tier may convert them."""
    failed = list(range(pages.start, pages.end + 1))
    if not task.accept_partial:
        raise ResourceLimit(
            f"docling could not convert any of pages {pages}; a bigger tier may convert them"
        )
    from docling_core.types.doc import DoclingDocument

    task.output.write_bytes(dump_document(DoclingDocument(name=task.source.stem)))
    return ChildReport(
        pipeline=pipeline,
        page_count=page_count,
        page_range=pages,
        partial=True,
        failed_pages=failed,
        inspect_s=inspected - started,
        convert_s=time.monotonic() - inspected,
    )
