"""The two steps a sharded parse adds around the per-shard parses: plan and merge.

``plan_object`` decides whether an S3 object is parsed whole or as page-range shards;
each shard is then ``richdoc.parse.step.parse_object(..., pages=)``; ``merge_objects``
joins the shards' artifacts into the document's. docs/shards.md has the state machine
these calls are made from. Neither imports docling: the plan's inspection runs in the
parse worker, and the merge needs only docling-core (imported when it runs).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from richdoc.artifacts import ArtifactStore, merged_key
from richdoc.awserrors import aws_errors
from richdoc.contracts import SourceObject
from richdoc.formats import DocFormat, format_of
from richdoc.parse.settings import ParseLimits, Pipeline
from richdoc.parse.shards import PAGINATED_FORMATS, PageRange, plan_shards
from richdoc.parse.step import (
    _META_PAGES,
    _META_PIPELINE,
    ParseWorker,
    _cached_pages,
    _stage,
    shared_worker,
)


class PlanReport(BaseModel):
    """How a document is parsed: whole (``ranges`` empty) or as page-range shards."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    size: int
    format: DocFormat
    pipeline: Pipeline
    contract: str
    pages: int | None  # the inspected page count; None where not inspected
    ranges: list[list[int]]  # [start, end] of each shard, in page order
    seconds: float

    @property
    def shards(self) -> int:
        """How many parse invocations convert the document (1 when not sharded)."""
        return len(self.ranges) or 1

    def to_state(self) -> dict[str, Any]:
        """The plan's state: about 30 bytes a shard, enough for the Map's items and the
        merge."""
        return {
            "sha256": self.sha256,
            "size": self.size,
            "format": str(self.format),
            "pipeline": str(self.pipeline),
            "contract": self.contract,
            "pages": self.pages,
            "sharded": bool(self.ranges),
            "shard_count": self.shards,
            "shards": [{"start": start, "end": end} for start, end in self.ranges],
            "seconds": round(self.seconds, 3),
        }


class ShardResult(BaseModel):
    """What the merge needs of one shard's parse (a ResultSelector of its state)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    page_range: list[int]
    docling_key: str
    partial: bool = False
    failed_pages: list[int] = []


def plan_object(
    store: ArtifactStore,
    source: SourceObject,
    limits: ParseLimits,
    *,
    shard_pages: int,
    worker: ParseWorker | None = None,
) -> PlanReport:
    """Decide how an S3 object is parsed: whole, or as page-range shards of at most
    ``shard_pages`` pages (``richdoc.parse.shards.plan_shards``).

    A PDF that may be sharded is inspected first, in the worker, for its page count, so
    a document the inspection refuses (damaged, encrypted, over max_pages, no text)
    fails here, once, rather than in every shard. Anything else is planned whole
    without inspection: its parse inspects it as before."""
    started = time.monotonic()
    fmt = format_of(source.key)
    worker = worker or shared_worker()
    with tempfile.TemporaryDirectory(prefix="richdoc-plan-") as tmp:
        downloaded = store.download_source(source, _stage(Path(tmp), fmt))
        pages = None
        if fmt in PAGINATED_FORMATS and shard_pages > 0:
            pages = worker.inspect(downloaded.path, fmt, limits)
    plan = plan_shards(fmt, pages, shard_pages)
    return PlanReport(
        sha256=downloaded.sha256,
        size=downloaded.size,
        format=fmt,
        pipeline=worker.settings.pipeline_for(fmt),
        contract=worker.settings.contract(fmt),
        pages=pages,
        ranges=[r.as_list() for r in plan.ranges],
        seconds=time.monotonic() - started,
    )


def merge_objects(
    store: ArtifactStore, plan: PlanReport, shards: list[ShardResult]
) -> dict[str, Any]:
    """Merge the parsed shards of ``plan`` (in its order) into the document's
    DoclingDocument, stored under ``merged_key``; returns the state the parse step
    returns for a whole document, plus ``shards``, so project and detect read it as
    they read any parse. A merge of complete shards is reused like a parse; one with
    partial shards (accepted at the biggest tier) goes under the ``-partial`` contract
    and is never reused."""
    started = time.monotonic()
    if [shard.page_range for shard in shards] != plan.ranges:
        raise ValueError(
            f"the parsed shards {[s.page_range for s in shards]} are not the plan's {plan.ranges}"
        )
    partial = any(shard.partial for shard in shards)
    contract = f"{plan.contract}-partial" if partial else plan.contract
    key = merged_key(plan.sha256, contract, len(shards))
    cached = not partial and _cached_pages(store, key) is not None
    if not cached:
        from richdoc.parse.merge import merge_shard_json  # docling-core: only when merging

        parts = [(PageRange.of(s.page_range), store.get_bytes(s.docling_key)) for s in shards]
        merged = merge_shard_json(parts, pipeline=plan.pipeline)
        with aws_errors(f"writing s3://{store.bucket}/{key}"):
            store.s3.put_object(
                Bucket=store.bucket,
                Key=key,
                Body=merged,
                ContentType="application/json",
                Metadata={_META_PIPELINE: str(plan.pipeline), _META_PAGES: str(plan.pages)},
            )
    return {
        "docling_key": key,
        "sha256": plan.sha256,
        "size": plan.size,
        "pipeline": str(plan.pipeline),
        "pages": plan.pages,
        "cached": cached,
        "partial": partial,
        "failed_pages": sorted(page for shard in shards for page in shard.failed_pages),
        "seconds": round(time.monotonic() - started, 3),
        "shards": len(shards),
    }
