"""What the parse step asks of a worker child: one task per document or shard, sent as
the worker's task arguments (``richdoc.worker``) and read by ``richdoc.parse.convert``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from richdoc.contracts import PageSpan
from richdoc.formats import DocFormat


class _Task(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Path  # the staged document (richdoc.parse.step.staged_path)
    format: DocFormat
    max_pages: int
    mem_ceiling_mb: int  # the child's; the inspection bounds archives by it


class ConvertTask(_Task):
    """Inspect and convert the document (only ``page_range`` of it, when given) into
    ``output``; the child answers with a ``ChildReport``."""

    task: Literal["convert"] = "convert"
    output: Path
    timeout_s: float  # the standard pipeline's own document timeout derives from it
    threads: int = 1  # torch's threads for the conversion (richdoc.parse.settings.threads_for)
    accept_partial: bool
    page_range: PageSpan | None = None  # a shard's pages
    # What one page OCR reads needs of mem_ceiling_mb (richdoc.parse.settings.one_page_mb);
    # the child refuses a document with such pages below it. None: no check.
    ocr_page_mb: int | None = None


class InspectTask(_Task):
    """The inspection alone, for its page count (the plan step); answered with an
    ``Inspected``."""

    task: Literal["inspect"] = "inspect"


PARSE_TASK: TypeAdapter[ConvertTask | InspectTask] = TypeAdapter(
    Annotated[ConvertTask | InspectTask, Field(discriminator="task")]
)
