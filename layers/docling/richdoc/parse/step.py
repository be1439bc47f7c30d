"""The parse step: a source document in, a DoclingDocument JSON out, failures typed.

The caller's side (``parse_request`` for the Lambda handler, ``parse_file`` for the CLI)
never imports docling: it takes the conversion the run's plan decided (the format, the
pipeline and the processor contract; the CLI, with no plan, takes its worker's), looks
the result up in the artifact cache, and hands the conversion to an isolated worker
(``richdoc.worker``): a zygote that imports docling and builds its converters once,
and a forked child per document with a memory ceiling and a wall-clock timeout.
``richdoc.parse.convert`` is what runs over there.

The DoclingDocument is a pure function of the bytes and the processor contract: the
file is staged as ``document.<ext>`` whatever its key or name, so identical bytes give
identical JSON and the artifact ``docling/<sha256>/<contract>.json`` is reused.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from richdoc.artifacts import ArtifactStore, docling_key, too_large
from richdoc.contracts import PageSpan, ParseInput, ParseOutput, SourceObject
from richdoc.formats import DocFormat, format_of
from richdoc.parse.reports import ChildReport, Inspected, ParseReport, Timings
from richdoc.parse.settings import (
    Conversion,
    ParseLimits,
    ParserSettings,
    Pipeline,
    ZygoteMemory,
    cpu_budget,
    threads_for,
)
from richdoc.parse.shard_plan import PAGINATED_FORMATS
from richdoc.parse.tasks import ConvertTask, InspectTask
from richdoc.taxonomy import InternalError, local_disk_errors
from richdoc.worker.client import ChildOutcome, ForkServer

_STAGED_STEM = "document"
# What the worker's zygote runs once (every converter, or what the inspection needs), and
# each child per document.
WARMUP = "richdoc.parse.convert:warm_up"
INSPECTION_WARMUP = "richdoc.parse.convert:warm_up_inspection"
CONVERT_TARGET = "richdoc.parse.convert:run_task"


# The isolated worker --------------------------------------------------------------------


class ParseWorker:
    """The parse step's isolated worker: a zygote warmed with docling's converters.

    ``target`` is the ``"module:function"`` each child runs on a document. It is
    ``run_task`` everywhere but in tests that need a conversion that never
    finishes (a timeout must not depend on how fast the machine converts).
    ``inspect_only`` (the plan's worker) warms up without docling's converters and
    models: it can inspect, not convert.
    """

    def __init__(
        self,
        settings: ParserSettings,
        *,
        quiet: bool = False,
        target: str = CONVERT_TARGET,
        inspect_only: bool = False,
    ) -> None:
        self.settings = settings
        self.server = ForkServer(
            warmup=INSPECTION_WARMUP if inspect_only else WARMUP,
            target=target,
            config={
                "pdf_pipeline": str(settings.pdf_pipeline),
                "artifacts": settings.artifacts_path,
                "ocr_mode": str(settings.ocr_mode),
            },
            # Model weights come from the image; never reach for the model hub.
            env_overrides={"HF_HUB_OFFLINE": "1"},
            quiet=quiet,
        )
        self._running = 0  # conversions in flight, which share this machine's CPUs
        self._running_lock = threading.Lock()

    def ceiling(self, limits: ParseLimits, fmt: DocFormat) -> int:
        """The child's memory ceiling for a document of ``fmt``: the configured one, or
        the one a Lambda tier leaves beside this worker's warm zygote (started here when
        it is not running; ``richdoc.parse.settings.ceiling_for_tier``, which raises
        ``ResourceLimit`` for a tier too small for one page)."""
        if limits.mem_ceiling_mb is not None:
            return limits.mem_ceiling_mb
        return limits.ceiling(self._zygote(), self.settings.pipeline_for(fmt))

    def ocr_page_mb(self, limits: ParseLimits, fmt: DocFormat) -> int | None:
        """What the ceiling must hold for a page OCR reads, for a format OCR may read on
        a Lambda tier (``ParseLimits.ocr_page_mb``); None otherwise."""
        if not self.settings.may_ocr(fmt) or limits.mem_ceiling_mb is not None:
            return None
        return limits.ocr_page_mb(self._zygote(), self.settings.pipeline_for(fmt))

    def _zygote(self) -> ZygoteMemory:
        hello = self.server.start()
        return ZygoteMemory(anon_mb=hello.anon_mb, file_mb=hello.file_mb)

    def convert(
        self,
        staged: Path,
        fmt: DocFormat,
        output: Path,
        limits: ParseLimits,
        *,
        accept_partial: bool,
        pages: PageSpan | None = None,
    ) -> tuple[ChildReport, ChildOutcome]:
        """Convert ``staged`` (only ``pages`` of it, when given) into ``output``."""
        if pages is not None and fmt not in PAGINATED_FORMATS:
            raise ValueError(f"a {fmt} has no pages to convert by range")
        ceiling = self.ceiling(limits, fmt)
        with self._running_lock:
            self._running += 1
            threads = threads_for(self._running, cpu_budget(limits.memory_tier_mb))
        try:
            task = ConvertTask(
                source=staged,
                format=fmt,
                output=output,
                max_pages=limits.max_pages,
                timeout_s=limits.timeout_s,
                mem_ceiling_mb=ceiling,
                accept_partial=accept_partial,
                page_range=pages,
                threads=threads,
                ocr_page_mb=self.ocr_page_mb(limits, fmt),
            )
            outcome = self.server.run(
                task.model_dump(mode="json"),
                timeout_s=limits.timeout_s,
                mem_ceiling_mb=ceiling,
                result_path=output.with_name("result.json"),
            )
        finally:
            with self._running_lock:
                self._running -= 1
        return ChildReport.model_validate(outcome.value), outcome

    def check_converts(self, conversion: Conversion) -> None:
        """Refuse to make a conversion other than the planned one: the plan of a run made
        under other docling versions or options (a deploy between the plan and this
        parse) names a processor contract this worker's output would not match."""
        own = self.settings.conversion(conversion.format)
        if own != conversion:
            raise InternalError(
                f"the run's plan converts the {conversion.format} with the "
                f"{conversion.pipeline} pipeline under processor contract "
                f"{conversion.contract}; this worker uses {own.pipeline} under "
                f"{own.contract} (planned by another deployment: the next run plans again)"
            )

    def inspect(self, staged: Path, fmt: DocFormat, limits: ParseLimits) -> Inspected:
        """The pre-parse inspection (page count, pages without a text layer), in a child
        like a conversion; raises what the inspection refuses (corrupt, encrypted, over
        max_pages, nothing on any page)."""
        ceiling = self.ceiling(limits, fmt)
        task = InspectTask(
            source=staged,
            format=fmt,
            max_pages=limits.max_pages,
            mem_ceiling_mb=ceiling,
        )
        outcome = self.server.run(
            task.model_dump(mode="json"),
            timeout_s=limits.timeout_s,
            mem_ceiling_mb=ceiling,
            result_path=staged.with_name("inspection.json"),
        )
        return Inspected.model_validate(outcome.value)

    def close(self) -> None:
        self.server.close()


_workers: dict[tuple[ParserSettings, bool], ParseWorker] = {}
_workers_lock = threading.Lock()


def shared_worker(
    settings: ParserSettings | None = None, *, quiet: bool = False, inspect_only: bool = False
) -> ParseWorker:
    """The process-wide worker for these settings: one zygote per process, started on
    first use, so a warm Lambda pays docling's import once. ``quiet`` (silence the
    worker's own output, for the CLI) is decided by whoever creates it; ``inspect_only``
    is the plan's worker (no converters, no models)."""
    settings = settings or ParserSettings.from_env()
    with _workers_lock:
        worker = _workers.get((settings, inspect_only))
        if worker is None:
            worker = ParseWorker(settings, quiet=quiet, inspect_only=inspect_only)
            _workers[(settings, inspect_only)] = worker
        return worker


# The caller's side ----------------------------------------------------------------------


def staged_path(workdir: Path, fmt: DocFormat) -> Path:
    """Where a document is staged for the worker: ``document.<ext>`` whatever its name,
    so identical bytes give identical DoclingDocuments."""
    return workdir / f"{_STAGED_STEM}.{fmt}"


def _converted(
    report: ChildReport,
    outcome: ChildOutcome,
    *,
    sha256: str,
    size: int,
    conversion: Conversion,
    marks: tuple[float, float, float],
    **where: str,
) -> ParseReport:
    """The report of a fresh conversion; ``marks`` are (started, fetched, converted)."""
    started, fetched, converted = marks
    done = time.monotonic()
    return ParseReport(
        sha256=sha256,
        size=size,
        format=conversion.format,
        pipeline=report.pipeline,
        contract=conversion.contract,
        page_count=report.page_count,
        page_range=report.page_range,
        cached=False,
        partial=report.partial,
        failed_pages=report.failed_pages,
        ocr_pages=report.ocr_pages,
        unread_pages=report.unread_pages,
        peak_rss_mb=outcome.peak_rss_mb,
        mem_ceiling_mb=outcome.mem_ceiling_mb,
        threads=report.threads,
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
    pages: PageSpan | None = None,
) -> ParseReport:
    """Parse a local file (only ``pages`` of it, when given) into ``output`` (the
    ``richdoc parse`` command).

    There is no bigger tier to escalate to here, so a partial conversion is accepted by
    default and reported (``partial``, ``failed_pages``). With no plan, the worker's
    settings decide the conversion.
    """
    started = time.monotonic()
    fmt = format_of(source.name)
    size = source.stat().st_size
    if size > limits.max_object_bytes:
        raise too_large(size, limits.max_object_bytes)
    worker = worker or shared_worker(quiet=True)
    with (
        local_disk_errors("parsing a file"),
        tempfile.TemporaryDirectory(prefix="richdoc-parse-") as tmp,
    ):
        staged = staged_path(Path(tmp), fmt)
        # A link, not a copy: the child reads the caller's file under the staged name.
        staged.symlink_to(source.resolve())
        with source.open("rb") as file:
            sha256 = hashlib.file_digest(file, "sha256").hexdigest()
        fetched = time.monotonic()
        produced = Path(tmp) / "docling.json"
        report, outcome = worker.convert(
            staged, fmt, produced, limits, accept_partial=accept_partial, pages=pages
        )
        converted = time.monotonic()
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(produced, output)
    return _converted(
        report,
        outcome,
        sha256=sha256,
        size=size,
        conversion=worker.settings.conversion(fmt),
        marks=(started, fetched, converted),
        output=str(output),
    )


# What a parse tier keeps of its invocation after the conversion: storing the
# DoclingDocument (a multipart upload above 64 MiB) and the records. The worker's wall
# clock is cut to the time left less this, read when the conversion starts: with
# ParseTimeoutSeconds up to 840 s in a 900 s function, a conversion that starts late
# (a slow download) would otherwise end as the platform's Sandbox.Timedout, or leave no
# time to store what it made. The plan keeps the same rule (PLAN_RESERVE_S).
PARSE_RESERVE_S = 60.0


def parse_object(
    store: ArtifactStore,
    source: SourceObject,
    conversion: Conversion,
    limits: ParseLimits,
    *,
    accept_partial: bool,
    worker: ParseWorker | None = None,
    pages: PageSpan | None = None,
    remaining_s: Callable[[], float] | None = None,
) -> ParseReport:
    """Parse an S3 object (only ``pages`` of it, when given: one shard) into the artifact
    bucket as ``conversion`` (the run's plan) says, reusing an earlier parse of the same
    bytes (and pages) under its contract. Partial results (accepted only at the biggest
    tier) go to a ``-partial`` contract key, so they never answer a later cache lookup.
    ``remaining_s`` is the invocation's clock: the conversion ends ``PARSE_RESERVE_S``
    before it does."""
    started = time.monotonic()
    fmt, contract = conversion.format, conversion.contract
    worker = worker or shared_worker()
    with (
        local_disk_errors(f"parsing s3://{source.bucket}/{source.key}"),
        tempfile.TemporaryDirectory(prefix="richdoc-parse-") as tmp,
    ):
        downloaded = store.download_source(
            source, staged_path(Path(tmp), fmt), max_bytes=limits.max_object_bytes
        )
        fetched = time.monotonic()
        key = docling_key(downloaded.sha256, contract, pages)
        cached_page_count = store.docling_page_count(key)
        if cached_page_count is not None:
            done = time.monotonic()
            return ParseReport(
                sha256=downloaded.sha256,
                size=downloaded.size,
                format=fmt,
                pipeline=conversion.pipeline,
                contract=contract,
                page_count=cached_page_count,
                page_range=pages,
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
        worker.check_converts(conversion)
        produced = Path(tmp) / "docling.json"
        if remaining_s is not None:
            limits = limits.within_invocation(remaining_s(), PARSE_RESERVE_S, "the parse")
        report, outcome = worker.convert(
            downloaded.path, fmt, produced, limits, accept_partial=accept_partial, pages=pages
        )
        converted = time.monotonic()
        if report.partial:
            key = docling_key(downloaded.sha256, f"{contract}-partial", pages)
        with produced.open("rb") as body:
            store.put_docling(
                key, body, pipeline=str(report.pipeline), page_count=report.page_count
            )
    return _converted(
        report,
        outcome,
        sha256=downloaded.sha256,
        size=downloaded.size,
        conversion=conversion,
        marks=(started, fetched, converted),
        docling_key=key,
    )


def parse_request(
    request: ParseInput,
    *,
    store: ArtifactStore,
    memory_tier_mb: int | None = None,
    remaining_s: Callable[[], float] | None = None,
) -> ParseOutput:
    """The parse Lambda's whole job: its state input in, its state output out. The input
    carries the plan's conversion (format, pipeline, processor contract), which the
    parse carries out rather than deciding again; the conversion ends before the
    invocation does (``remaining_s``: its clock)."""
    limits = ParseLimits.resolve(memory_tier_mb=memory_tier_mb)
    planned = Conversion(DocFormat(request.format), Pipeline(request.pipeline), request.contract)
    report = parse_object(
        store,
        request.source,
        planned,
        limits,
        accept_partial=request.accept_partial,
        pages=request.pages,
        remaining_s=remaining_s,
    )
    return report.to_output()
