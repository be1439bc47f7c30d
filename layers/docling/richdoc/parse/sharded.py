"""The two steps a sharded parse adds around the per-shard parses: plan and merge.

``plan_request`` (the Plan state) decides whether an S3 object is parsed whole or as
page-range shards; the Map state then parses each shard with
``richdoc.parse.step.parse_request`` (its ``pages``), and ``merge_request`` (the Merge
state) joins the shards' artifacts into the document's. docs/shards.md has the state
machine. Neither imports docling: the plan's inspection runs in the parse worker, and
the merge needs only docling-core (imported when it runs).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from richdoc.artifacts import ArtifactStore, merged_key
from richdoc.contracts import (
    MergeInput,
    PageSpan,
    ParseOutput,
    PlanInput,
    PlanOutput,
    ShardParsed,
    SourceObject,
)
from richdoc.formats import format_of
from richdoc.parse.settings import (
    ParseLimits,
    Pipeline,
    shard_concurrency_setting,
    shard_pages_setting,
)
from richdoc.parse.shards import PAGINATED_FORMATS, PageRange, plan_shards
from richdoc.parse.step import ParseWorker, shared_worker, staged_path


def plan_object(
    store: ArtifactStore,
    source: SourceObject,
    limits: ParseLimits,
    *,
    shard_pages: int,
    max_concurrency: int,
    worker: ParseWorker | None = None,
) -> PlanOutput:
    """Decide how an S3 object is parsed: whole, or as page-range shards of at most
    ``shard_pages`` pages (``richdoc.parse.shards.plan_shards``), ``max_concurrency`` of
    them at once.

    A PDF that may be sharded is downloaded and inspected, in the worker, for its page
    count, so a document the inspection refuses (too big, damaged, encrypted, over
    max_pages, no text) fails here, once, rather than in every shard. Anything else is
    planned whole from its key alone, without a download: its parse inspects it as before.
    """
    started = time.monotonic()
    fmt = format_of(source.key)
    worker = worker or shared_worker()
    sha256 = size = pages = None
    if fmt in PAGINATED_FORMATS and shard_pages > 0:
        with tempfile.TemporaryDirectory(prefix="richdoc-plan-") as tmp:
            downloaded = store.download_source(
                source, staged_path(Path(tmp), fmt), max_bytes=limits.max_object_bytes
            )
            sha256, size = downloaded.sha256, downloaded.size
            pages = worker.inspect(downloaded.path, fmt, limits)
    plan = plan_shards(fmt, pages, shard_pages)
    return PlanOutput(
        sha256=sha256,
        size=size,
        format=str(fmt),
        pipeline=str(worker.settings.pipeline_for(fmt)),
        contract=worker.settings.contract(fmt),
        pages=pages,
        sharded=plan.sharded,
        shards=[PageSpan(start=r.start, end=r.end) for r in plan.ranges],
        shard_count=plan.shards,
        max_concurrency=max_concurrency,
        seconds=round(time.monotonic() - started, 3),
    )


def plan_request(
    request: PlanInput,
    *,
    store: ArtifactStore,
    memory_tier_mb: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> PlanOutput:
    """The plan Lambda's whole job: ``RICHDOC_SHARD_PAGES`` and
    ``RICHDOC_SHARD_CONCURRENCY`` (template parameters) decide the fan-out."""
    return plan_object(
        store,
        request.source,
        ParseLimits.resolve(memory_tier_mb=memory_tier_mb, environ=environ),
        shard_pages=shard_pages_setting(environ),
        max_concurrency=shard_concurrency_setting(environ),
    )


def merge_objects(
    store: ArtifactStore, plan: PlanOutput, shards: Sequence[ShardParsed]
) -> ParseOutput:
    """Merge the parsed shards of ``plan`` (in its order) into the document's
    DoclingDocument, stored under ``merged_key``; answers as the parse step does for a
    whole document (with ``shards``), so project and detect read it as they read any
    parse. A merge of complete shards is reused like a parse; one with partial shards
    (accepted at the biggest tier) goes under the ``-partial`` contract and is never
    reused."""
    started = time.monotonic()
    if not plan.sharded or plan.sha256 is None or plan.size is None or plan.pages is None:
        raise ValueError("only a sharded plan has shards to merge")
    if [shard.page_range for shard in shards] != plan.shards:
        raise ValueError(
            f"the parsed shards {[str(s.page_range) for s in shards]} are not the plan's "
            f"{[str(s) for s in plan.shards]}"
        )
    partial = any(shard.partial for shard in shards)
    contract = f"{plan.contract}-partial" if partial else plan.contract
    key = merged_key(plan.sha256, contract, len(shards))
    cached = not partial and store.docling_pages(key) is not None
    if not cached:
        from richdoc.parse.merge import merge_shard_json  # docling-core: only when merging

        parts = [
            (PageRange(s.page_range.start, s.page_range.end), store.get_bytes(s.docling_key))
            for s in shards
        ]
        merged = merge_shard_json(parts, pipeline=Pipeline(plan.pipeline))
        store.put_docling(key, merged, pipeline=plan.pipeline, pages=plan.pages)
    return ParseOutput(
        docling_key=key,
        sha256=plan.sha256,
        size=plan.size,
        pipeline=plan.pipeline,
        pages=plan.pages,
        cached=cached,
        partial=partial,
        failed_pages=sorted(page for shard in shards for page in shard.failed_pages),
        seconds=round(time.monotonic() - started, 3),
        shards=len(shards),
    )


def merge_request(request: MergeInput, *, store: ArtifactStore) -> ParseOutput:
    """The merge Lambda's whole job."""
    return merge_objects(store, request.plan, request.shards)
