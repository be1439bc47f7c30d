"""What a parse reports: the child's account of one conversion and the caller's whole report."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from richdoc.contracts import PageSpan, ParseOutput
from richdoc.formats import DocFormat
from richdoc.parse.settings import Pipeline


class ChildReport(BaseModel):
    """What the isolated child returns for one converted document."""

    model_config = ConfigDict(frozen=True)

    pipeline: Pipeline
    page_count: int  # docling's: PDF pages, PPTX slides, XLSX sheets; 0 otherwise
    page_range: PageSpan | None = None  # a shard's pages; None for the whole document
    partial: bool
    failed_pages: list[int]
    ocr_pages: list[int] = []  # the pages OCR read
    unread_pages: list[int] = []  # pages without a text layer left unread (OCR off)
    inspect_s: float
    convert_s: float
    threads: int | None = None  # torch's threads in the conversion; None: no model ran


class Inspected(BaseModel):
    """What the isolated child returns for an inspection alone."""

    model_config = ConfigDict(frozen=True)

    page_count: int | None  # as inspected; None where the format has no pages
    image_only: list[int] = []  # pages without a text layer (richdoc.formats.Inspection)
    inspect_s: float


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
    page_count: int
    page_range: PageSpan | None = None  # when this parse was one shard
    cached: bool
    partial: bool
    failed_pages: list[int]
    ocr_pages: list[int] = []  # the pages OCR read (unknown when the cache answered: [])
    unread_pages: list[int] = []  # pages without a text layer OCR left unread (mode off)
    peak_rss_mb: float | None  # the child's; None when the cache answered
    mem_ceiling_mb: int | None = None  # the child's RSS ceiling; None when the cache answered
    threads: int | None = None  # torch's threads in the child's conversion
    timings: Timings
    docling_key: str | None = None
    output: str | None = None

    def to_output(self) -> ParseOutput:
        """The parse step's state output (a report of ``parse_object``, which stored the
        document under ``docling_key``)."""
        if self.docling_key is None:
            raise ValueError("only a parse into the artifact bucket has a state output")
        return ParseOutput(
            docling_key=self.docling_key,
            sha256=self.sha256,
            size=self.size,
            pipeline=str(self.pipeline),
            page_count=self.page_count,
            cached=self.cached,
            partial=self.partial,
            failed_pages=list(self.failed_pages),
            seconds=round(self.timings.total_s, 3),
            mem_ceiling_mb=self.mem_ceiling_mb,
            peak_rss_mb=round(self.peak_rss_mb) if self.peak_rss_mb is not None else None,
            page_range=self.page_range,
        )
