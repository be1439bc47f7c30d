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

# Bump when anything here changes what the DoclingDocument JSON of the same bytes is.
PARSE_SCHEMA = "richdoc.parse/1"

MAX_PAGES_ENV = "RICHDOC_MAX_PAGES"
TIMEOUT_ENV = "RICHDOC_TIMEOUT_S"
MEM_CEILING_ENV = "RICHDOC_MEM_CEILING_MB"
MAX_OBJECT_ENV = "RICHDOC_MAX_OBJECT_MB"
PDF_PIPELINE_ENV = "RICHDOC_PDF_PIPELINE"
SHARD_PAGES_ENV = "RICHDOC_SHARD_PAGES"
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
# (richdoc.parse.page_ranges; 0 turns sharding off). At the Docling report's 0.6-1.6 pages/s
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
    max_object_mb: int = DEFAULT_MAX_OBJECT_MB

    def __post_init__(self) -> None:
        if (
            self.max_pages < 1
            or self.timeout_s <= 0
            or self.mem_ceiling_mb < 64
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
            max_object_mb=_first(
                max_object_mb, env.get(MAX_OBJECT_ENV), DEFAULT_MAX_OBJECT_MB, int
            ),
        )


def shard_pages_setting(environ: Mapping[str, str] | None = None) -> int:
    """``RICHDOC_SHARD_PAGES``: the most pages per shard, 0 for no sharding."""
    env = os.environ if environ is None else environ
    raw = env.get(SHARD_PAGES_ENV, "").strip()
    if not raw:
        return DEFAULT_SHARD_PAGES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{SHARD_PAGES_ENV} must be a whole number of pages >= 0, not {raw!r}")
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
