"""The parse step: a source document in, a DoclingDocument JSON out, failures typed.

The caller's side (``parse_object`` for the Lambda handler, ``parse_file`` for the CLI)
never imports docling: it picks the format and pipeline, looks the result up in the
artifact cache, and hands the conversion to an isolated worker
(``richdoc.forkserver``): a zygote that imports docling and builds its converters once,
and a forked child per document with a memory ceiling and a wall-clock timeout.
``warm_up`` and ``convert_document`` are the two functions that run over there.

The DoclingDocument is a pure function of the bytes and the processor contract: the
file is staged as ``document.<ext>`` whatever its key or name, so identical bytes give
identical JSON and the artifact ``docling/<sha256>/<contract>.json`` is reused.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from richdoc.artifacts import ArtifactStore, SourceObject, docling_key, s3_errors
from richdoc.forkserver import ChildOutcome, ForkServer, caused_by
from richdoc.formats import ArchiveLimits, DocFormat, format_of, inspect
from richdoc.taxonomy import CorruptInput, ResourceLimit

if TYPE_CHECKING:
    from docling.datamodel.document import ConversionResult
    from docling.document_converter import DocumentConverter, FormatOption

# Bump when anything here changes what the DoclingDocument JSON of the same bytes is.
PARSE_SCHEMA = "richdoc.parse/1"

MAX_PAGES_ENV = "RICHDOC_MAX_PAGES"
TIMEOUT_ENV = "RICHDOC_TIMEOUT_S"
MEM_CEILING_ENV = "RICHDOC_MEM_CEILING_MB"
PDF_PIPELINE_ENV = "RICHDOC_PDF_PIPELINE"
ARTIFACTS_ENV = "DOCLING_ARTIFACTS_PATH"

# Spec section 8. The memory ceiling default applies where no Lambda tier is known.
DEFAULT_MAX_PAGES = 2000
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEM_CEILING_MB = 4096
# docling's own document timeout for the standard pipeline, as a fraction of timeout_s:
# it stops feeding pages there and returns what it has (PARTIAL_SUCCESS) before the hard
# kill. Not set for the native pipeline: its threaded parser finishes every page anyway
# when unloaded, so the timeout only throws parsed pages away (docs/parse.md).
DOCUMENT_TIMEOUT_FRACTION = 0.8

# The folders `docling-tools models download` creates for the standard pipeline's models.
LAYOUT_MODEL_DIR = "docling-project--docling-layout-heron"
TABLE_MODEL_DIR = "docling-project--docling-models"
_STAGED_STEM = "document"


# Limits ---------------------------------------------------------------------------------


def ceiling_for_tier(memory_mb: int) -> int:
    """The child's RSS ceiling inside a Lambda function of ``memory_mb``.

    The function's memory also holds the handler process (about 60 MB measured, plus
    the runtime), the zygote (about 385 MB with docling imported; its pages count in a
    child's RSS only once touched) and the ceiling's overshoot (the RSS is sampled every
    50 ms; at most 25 MB measured). 512 MB plus 5 % of the tier covers them
    (measurements in docs/parse.md).
    """
    return max(256, memory_mb - 512 - memory_mb // 20)


@dataclass(frozen=True)
class ParseLimits:
    max_pages: int
    timeout_s: float
    mem_ceiling_mb: int

    def __post_init__(self) -> None:
        if self.max_pages < 1 or self.timeout_s <= 0 or self.mem_ceiling_mb < 64:
            raise ValueError(f"parse limits out of range: {self}")

    @classmethod
    def resolve(
        cls,
        *,
        max_pages: int | None = None,
        timeout_s: float | None = None,
        mem_ceiling_mb: int | None = None,
        memory_tier_mb: int | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ParseLimits:
        """Arguments win, then the RICHDOC_* variables, then defaults; without an
        explicit ceiling a Lambda memory tier derives one."""
        env = os.environ if environ is None else environ
        ceiling_default = ceiling_for_tier(memory_tier_mb) if memory_tier_mb else None
        return cls(
            max_pages=_first(max_pages, env.get(MAX_PAGES_ENV), DEFAULT_MAX_PAGES, int),
            timeout_s=_first(timeout_s, env.get(TIMEOUT_ENV), DEFAULT_TIMEOUT_S, float),
            mem_ceiling_mb=_first(
                mem_ceiling_mb,
                env.get(MEM_CEILING_ENV),
                ceiling_default or DEFAULT_MEM_CEILING_MB,
                int,
            ),
        )


_Number = TypeVar("_Number", int, float)


def _first(
    given: _Number | None, env: str | None, default: _Number, kind: Callable[[str], _Number]
) -> _Number:
    """An argument, else an environment variable, else the default."""
    if given is not None:
        return given
    return kind(env) if env else default


# Pipelines and the processor contract ---------------------------------------------------


class Pipeline(StrEnum):
    STANDARD = "standard"  # PDF: layout model + table structure (needs model weights)
    NATIVE = "native"  # PDF: text cells as docling-parse reports them, no models
    SIMPLE = "simple"  # DOCX, PPTX, XLSX, HTML, Markdown: the declarative backends


def has_model_weights(artifacts_path: str | None) -> bool:
    if not artifacts_path:
        return False
    root = Path(artifacts_path)
    return all(
        (root / name).is_dir() and any((root / name).iterdir())
        for name in (LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    )


def select_pdf_pipeline(setting: str | None, artifacts_path: str | None) -> Pipeline:
    """``auto`` takes the standard pipeline where the model weights are present."""
    choice = (setting or "auto").strip().lower()
    if choice == "native":
        return Pipeline.NATIVE
    if choice == "standard":
        if not has_model_weights(artifacts_path):
            raise ValueError(
                f"{PDF_PIPELINE_ENV}=standard needs the layout and table model weights in "
                f"{ARTIFACTS_ENV} (now {artifacts_path!r})"
            )
        return Pipeline.STANDARD
    if choice == "auto":
        return Pipeline.STANDARD if has_model_weights(artifacts_path) else Pipeline.NATIVE
    raise ValueError(f"{PDF_PIPELINE_ENV} must be auto, standard or native, not {setting!r}")


# The option values this project sets explicitly, per pipeline. They build the
# converters and go into the processor contract; everything else is docling's default,
# which the docling version in the contract pins. Performance knobs (threads) are not
# part of it: they do not change the output.
PIPELINE_OPTIONS: dict[Pipeline, dict[str, Any]] = {
    Pipeline.STANDARD: {
        "do_ocr": False,
        "do_table_structure": True,
        "table_mode": "accurate",
        "layout_model": LAYOUT_MODEL_DIR,
        "device": "cpu",
    },
    Pipeline.NATIVE: {
        "text_cell_unit": "line",
        "generate_picture_images": False,
        "generate_page_images": False,
    },
    Pipeline.SIMPLE: {},
}


@cache
def docling_versions() -> dict[str, str]:
    return {
        name: importlib.metadata.version(name)
        for name in ("docling", "docling-core", "docling-parse", "docling-ibm-models")
    }


@dataclass(frozen=True)
class ParserSettings:
    """How the worker converts: which PDF pipeline, and where its model weights are."""

    pdf_pipeline: Pipeline
    artifacts_path: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ParserSettings:
        env = os.environ if environ is None else environ
        artifacts = env.get(ARTIFACTS_ENV) or None
        return cls(select_pdf_pipeline(env.get(PDF_PIPELINE_ENV), artifacts), artifacts)

    def pipeline_for(self, fmt: DocFormat) -> Pipeline:
        return self.pdf_pipeline if fmt is DocFormat.PDF else Pipeline.SIMPLE

    def contract(self, fmt: DocFormat) -> str:
        return processor_contract(fmt, self.pipeline_for(fmt))


def processor_contract(fmt: DocFormat, pipeline: Pipeline) -> str:
    """A short stable digest of everything that determines the DoclingDocument of a
    given input: parse schema, docling versions, input format, pipeline and options."""
    identity = {
        "schema": PARSE_SCHEMA,
        "versions": docling_versions(),
        "format": str(fmt),
        "pipeline": str(pipeline),
        "options": PIPELINE_OPTIONS[pipeline],
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


# What the worker reports ----------------------------------------------------------------


class ChildReport(BaseModel):
    """What the isolated child returns for one converted document."""

    model_config = ConfigDict(frozen=True)

    pipeline: Pipeline
    pages: int  # docling's page count: PDF pages, PPTX slides, XLSX sheets; 0 otherwise
    partial: bool
    failed_pages: list[int]
    inspect_s: float
    convert_s: float


class Timings(BaseModel):
    model_config = ConfigDict(frozen=True)

    fetch_s: float  # download (S3) or staging (file)
    inspect_s: float  # the child's pre-parse inspection (richdoc.formats)
    convert_s: float  # docling, in the child, including writing the JSON
    worker_s: float  # the child's whole life, fork to exit
    store_s: float  # uploading or moving the result
    total_s: float


class ParseReport(BaseModel):
    """One parse: where the DoclingDocument went, and what it took."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    size: int
    format: DocFormat
    pipeline: Pipeline
    contract: str
    pages: int
    cached: bool
    partial: bool
    failed_pages: list[int]
    peak_rss_mb: float | None  # the child's; None when the cache answered
    timings: Timings
    docling_key: str | None = None
    output: str | None = None

    def to_state(self) -> dict[str, Any]:
        """The small dict the parse Lambda returns to the state machine."""
        return {
            "docling_key": self.docling_key,
            "sha256": self.sha256,
            "size": self.size,
            "pipeline": str(self.pipeline),
            "pages": self.pages,
            "cached": self.cached,
            "partial": self.partial,
            "failed_pages": list(self.failed_pages),
            "seconds": round(self.timings.total_s, 3),
        }


# The isolated worker --------------------------------------------------------------------


class ParseWorker:
    """The parse step's isolated worker: a zygote warmed with docling's converters."""

    def __init__(self, settings: ParserSettings, *, quiet: bool = False) -> None:
        self.settings = settings
        self.server = ForkServer(
            warmup="richdoc.parse:warm_up",
            target="richdoc.parse:convert_document",
            config={
                "pdf_pipeline": str(settings.pdf_pipeline),
                "artifacts": settings.artifacts_path,
            },
            # Model weights come from the image; never reach for the model hub.
            env_overrides={"HF_HUB_OFFLINE": "1"},
            quiet=quiet,
        )

    def convert(
        self,
        staged: Path,
        fmt: DocFormat,
        output: Path,
        limits: ParseLimits,
        *,
        accept_partial: bool,
    ) -> tuple[ChildReport, ChildOutcome]:
        args = {
            "source": str(staged),
            "format": str(fmt),
            "output": str(output),
            "max_pages": limits.max_pages,
            "timeout_s": limits.timeout_s,
            "mem_ceiling_mb": limits.mem_ceiling_mb,
            "accept_partial": accept_partial,
        }
        outcome = self.server.run(
            args,
            timeout_s=limits.timeout_s,
            mem_ceiling_mb=limits.mem_ceiling_mb,
            result_path=output.with_name("result.json"),
        )
        return ChildReport.model_validate(outcome.value), outcome

    def close(self) -> None:
        self.server.close()


_workers: dict[ParserSettings, ParseWorker] = {}
_workers_lock = threading.Lock()


def shared_worker(settings: ParserSettings | None = None, *, quiet: bool = False) -> ParseWorker:
    """The process-wide worker for these settings: one zygote per process, started on
    first use, so a warm Lambda pays docling's import once. ``quiet`` (silence the
    worker's own output, for the CLI) is decided by whoever creates it."""
    settings = settings or ParserSettings.from_env()
    with _workers_lock:
        worker = _workers.get(settings)
        if worker is None:
            worker = _workers[settings] = ParseWorker(settings, quiet=quiet)
        return worker


# The caller's side ----------------------------------------------------------------------


def _stage(workdir: Path, fmt: DocFormat) -> Path:
    return workdir / f"{_STAGED_STEM}.{fmt}"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _converted(
    report: ChildReport,
    outcome: ChildOutcome,
    *,
    sha256: str,
    size: int,
    fmt: DocFormat,
    contract: str,
    marks: tuple[float, float, float],
    **where: str,
) -> ParseReport:
    """The report of a fresh conversion; ``marks`` are (started, fetched, converted)."""
    started, fetched, converted = marks
    done = time.monotonic()
    return ParseReport(
        sha256=sha256,
        size=size,
        format=fmt,
        pipeline=report.pipeline,
        contract=contract,
        pages=report.pages,
        cached=False,
        partial=report.partial,
        failed_pages=report.failed_pages,
        peak_rss_mb=outcome.peak_rss_mb,
        timings=Timings(
            fetch_s=fetched - started,
            inspect_s=report.inspect_s,
            convert_s=report.convert_s,
            worker_s=outcome.seconds,
            store_s=done - converted,
            total_s=done - started,
        ),
        **where,
    )


def parse_file(
    source: Path,
    output: Path,
    limits: ParseLimits,
    *,
    accept_partial: bool = True,
    worker: ParseWorker | None = None,
) -> ParseReport:
    """Parse a local file into ``output`` (the ``richdoc parse`` command).

    There is no bigger tier to escalate to here, so a partial conversion is accepted by
    default and reported (``partial``, ``failed_pages``).
    """
    started = time.monotonic()
    fmt = format_of(source.name)
    worker = worker or shared_worker(quiet=True)
    with tempfile.TemporaryDirectory(prefix="richdoc-parse-") as tmp:
        staged = _stage(Path(tmp), fmt)
        # A link, not a copy: the child reads the caller's file under the staged name.
        staged.symlink_to(source.resolve())
        sha256, size = _sha256_file(source), source.stat().st_size
        fetched = time.monotonic()
        produced = Path(tmp) / "docling.json"
        report, outcome = worker.convert(
            staged, fmt, produced, limits, accept_partial=accept_partial
        )
        converted = time.monotonic()
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(produced, output)
    return _converted(
        report,
        outcome,
        sha256=sha256,
        size=size,
        fmt=fmt,
        contract=worker.settings.contract(fmt),
        marks=(started, fetched, converted),
        output=str(output),
    )


_META_PIPELINE = "richdoc-pipeline"
_META_PAGES = "richdoc-pages"
_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})


def _cached_pages(store: ArtifactStore, key: str) -> int | None:
    """The page count recorded on a cached DoclingDocument, or None on a cache miss."""
    with s3_errors(f"checking s3://{store.bucket}/{key}"):
        try:
            head = store.s3.head_object(Bucket=store.bucket, Key=key)
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in _MISSING:
                return None
            raise
    return int(head.get("Metadata", {}).get(_META_PAGES, 0))


def parse_object(
    store: ArtifactStore,
    source: SourceObject,
    limits: ParseLimits,
    *,
    accept_partial: bool,
    worker: ParseWorker | None = None,
) -> ParseReport:
    """Parse an S3 object into the artifact bucket, reusing an earlier parse of the same
    bytes under the same contract. Partial results (accepted only at the biggest tier)
    go to a ``-partial`` contract key, so they never answer a later cache lookup."""
    started = time.monotonic()
    fmt = format_of(source.key)
    worker = worker or shared_worker()
    pipeline = worker.settings.pipeline_for(fmt)
    contract = worker.settings.contract(fmt)
    with tempfile.TemporaryDirectory(prefix="richdoc-parse-") as tmp:
        downloaded = store.download_source(source, _stage(Path(tmp), fmt))
        fetched = time.monotonic()
        key = docling_key(downloaded.sha256, contract)
        cached_pages = _cached_pages(store, key)
        if cached_pages is not None:
            done = time.monotonic()
            return ParseReport(
                sha256=downloaded.sha256,
                size=downloaded.size,
                format=fmt,
                pipeline=pipeline,
                contract=contract,
                pages=cached_pages,
                cached=True,
                partial=False,
                failed_pages=[],
                peak_rss_mb=None,
                timings=Timings(
                    fetch_s=fetched - started,
                    inspect_s=0.0,
                    convert_s=0.0,
                    worker_s=0.0,
                    store_s=0.0,
                    total_s=done - started,
                ),
                docling_key=key,
            )
        produced = Path(tmp) / "docling.json"
        report, outcome = worker.convert(
            downloaded.path, fmt, produced, limits, accept_partial=accept_partial
        )
        converted = time.monotonic()
        if report.partial:
            key = docling_key(downloaded.sha256, f"{contract}-partial")
        with s3_errors(f"writing s3://{store.bucket}/{key}"), produced.open("rb") as body:
            store.s3.put_object(
                Bucket=store.bucket,
                Key=key,
                Body=body,
                ContentType="application/json",
                Metadata={_META_PIPELINE: str(report.pipeline), _META_PAGES: str(report.pages)},
            )
    return _converted(
        report,
        outcome,
        sha256=downloaded.sha256,
        size=downloaded.size,
        fmt=fmt,
        contract=contract,
        marks=(started, fetched, converted),
        docling_key=key,
    )


class SourceRef(BaseModel):
    model_config = ConfigDict(extra="ignore")

    bucket: str
    key: str
    version_id: str | None = None


class ParseEvent(BaseModel):
    """The parse task's input from the state machine."""

    model_config = ConfigDict(extra="ignore")

    job_id: str
    run: int
    tier: int
    accept_partial: bool = False
    source: SourceRef


def parse_event(
    event: Mapping[str, Any], *, s3: Any, memory_tier_mb: int | None = None
) -> dict[str, Any]:
    """The parse Lambda's whole job: event in, the small state dict out."""
    request = ParseEvent.model_validate(event)
    store = ArtifactStore.from_env(s3)
    source = SourceObject(request.source.bucket, request.source.key, request.source.version_id)
    limits = ParseLimits.resolve(memory_tier_mb=memory_tier_mb)
    report = parse_object(store, source, limits, accept_partial=request.accept_partial)
    return report.to_state()


# Inside the worker ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Warm:
    settings: ParserSettings
    converters: dict[DocFormat, DocumentConverter]


_warm: _Warm | None = None


def pdf_format_option(settings: ParserSettings) -> FormatOption:
    from docling.datamodel.accelerator_options import AcceleratorOptions
    from docling.datamodel.pipeline_options import (
        NativePdfPipelineOptions,
        TableFormerMode,
        TableStructureOptions,
        TextCellUnit,
        ThreadedPdfPipelineOptions,
    )
    from docling.document_converter import NativePdfFormatOption, PdfFormatOption

    if settings.pdf_pipeline is Pipeline.STANDARD:
        options = PIPELINE_OPTIONS[Pipeline.STANDARD]
        standard = ThreadedPdfPipelineOptions(
            artifacts_path=settings.artifacts_path,
            do_ocr=options["do_ocr"],
            do_table_structure=options["do_table_structure"],
            table_structure_options=TableStructureOptions(
                mode=TableFormerMode(options["table_mode"])
            ),
            # One thread while the zygote loads the models; children raise it.
            accelerator_options=AcceleratorOptions(num_threads=1, device=options["device"]),
        )
        return PdfFormatOption(pipeline_options=standard)
    options = PIPELINE_OPTIONS[Pipeline.NATIVE]
    return NativePdfFormatOption(
        pipeline_options=NativePdfPipelineOptions(
            text_cell_unit=TextCellUnit(options["text_cell_unit"]),
            generate_picture_images=options["generate_picture_images"],
            generate_page_images=options["generate_page_images"],
        )
    )


def build_converters(settings: ParserSettings) -> dict[DocFormat, DocumentConverter]:
    """One converter per format, each allowing only its format: a file whose content
    docling recognises as something else is refused instead of parsed as that."""
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    converters = {}
    for fmt in DocFormat:
        input_format = InputFormat(fmt.value)
        options = {input_format: pdf_format_option(settings)} if fmt is DocFormat.PDF else None
        converter = DocumentConverter(allowed_formats=[input_format], format_options=options)
        converter.initialize_pipeline(input_format)
        converters[fmt] = converter
    return converters


def warm_up(config: Mapping[str, Any]) -> None:
    """Runs once in the zygote: import docling and build every pipeline."""
    global _warm
    settings = ParserSettings(Pipeline(config["pdf_pipeline"]), config.get("artifacts"))
    _warm = _Warm(settings, build_converters(settings))


def _use_all_cores() -> None:
    import torch

    torch.set_num_threads(os.cpu_count() or 1)


def set_document_timeout(converter: DocumentConverter, seconds: float) -> None:
    """Give the converter's warm pipelines docling's document timeout.

    They were built in the zygote without one. Only the pipeline instances get new
    options (in the child, its own copy): the converter's cache key is computed from
    the format options, which stay as they were, so the warm pipeline is reused."""
    for pipeline in converter.initialized_pipelines.values():
        pipeline.pipeline_options = pipeline.pipeline_options.model_copy(
            update={"document_timeout": seconds}
        )


def _failed_pages(result: ConversionResult) -> list[int]:
    converted = {page.page_no for page in result.pages}
    return [n for n in range(1, result.input.page_count + 1) if n not in converted]


def _describe(exc: BaseException, limit: int = 400) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if exc.__cause__ is not None:
        text += f" (caused by {type(exc.__cause__).__name__}: {exc.__cause__})"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def document_json(result: ConversionResult) -> bytes:
    """The bytes of compact ``json.dumps(document.export_to_dict())``, serialized by
    pydantic-core directly in 60 % of the time."""
    return result.document.model_dump_json(by_alias=True, exclude_none=True).encode()


def convert_document(args: Mapping[str, Any]) -> dict[str, Any]:
    """Runs in the forked child: inspect, convert, classify, write the JSON."""
    from docling.datamodel.base_models import ConversionStatus

    if _warm is None:
        raise RuntimeError("convert_document runs only in a warmed-up parse worker")
    settings = _warm.settings
    fmt = DocFormat(args["format"])
    source, output = Path(args["source"]), Path(args["output"])
    pipeline = settings.pipeline_for(fmt)
    started = time.monotonic()
    inspect(
        source,
        fmt,
        max_pages=int(args["max_pages"]),
        archive=ArchiveLimits.for_ceiling(int(args["mem_ceiling_mb"])),
    )
    inspected = time.monotonic()
    converter = _warm.converters[fmt]
    if pipeline is Pipeline.STANDARD:
        set_document_timeout(converter, DOCUMENT_TIMEOUT_FRACTION * float(args["timeout_s"]))
        _use_all_cores()
    try:
        result = converter.convert(source, raises_on_error=True)
    except Exception as exc:
        if caused_by(exc, MemoryError):
            raise  # the worker reports it as a resource limit
        raise CorruptInput(f"docling could not convert the document: {_describe(exc)}") from exc
    partial = result.status is ConversionStatus.PARTIAL_SUCCESS
    failed = _failed_pages(result) if partial else []
    if partial and not args["accept_partial"]:
        errors = "; ".join(e.error_message for e in result.errors[:3])
        raise ResourceLimit(
            f"docling converted the document only partially ({len(failed)} of "
            f"{result.input.page_count} pages failed: {errors}); a bigger tier may finish it"
        )
    output.write_bytes(document_json(result))
    return ChildReport(
        pipeline=pipeline,
        pages=result.input.page_count,
        partial=partial,
        failed_pages=failed,
        inspect_s=inspected - started,
        convert_s=time.monotonic() - inspected,
    ).model_dump(mode="json")
