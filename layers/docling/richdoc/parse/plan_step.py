"""The Plan state: is an S3 object parsed whole or as page-range shards, and which of its
pages does OCR read?

``plan_request`` decides (``richdoc.parse.shard_plan.plan_shards``, the pages weighed
by their cost: ``richdoc.parse.ocr.pages``); the Map state then
parses each shard with ``richdoc.parse.step.parse_request`` (its ``pages``), and the Merge
state joins them (``richdoc.parse.merge_step``). docs/shards.md has the state machine.
No docling here: a PDF's page count comes from the inspection, run in the parse worker.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from richdoc.artifacts import ArtifactStore
from richdoc.contracts import PlanInput, PlanOutput, SourceObject
from richdoc.formats import Inspection, format_of
from richdoc.parse.ocr.pages import page_costs, pages_to_read
from richdoc.parse.settings import ParseLimits, shard_concurrency_setting, shard_pages_setting
from richdoc.parse.shard_plan import PAGINATED_FORMATS, plan_shards
from richdoc.parse.step import ParseWorker, shared_worker, staged_path


def plan_object(
    store: ArtifactStore,
    source: SourceObject,
    limits: ParseLimits,
    *,
    shard_pages: int,
    max_concurrency: int,
    worker: ParseWorker | None = None,
    remaining_s: Callable[[], float] | None = None,
) -> PlanOutput:
    """Decide how an S3 object is parsed: its conversion (format, pipeline, processor
    contract: every parse of the run carries it out), and whole or as page-range shards
    that cost at most ``shard_pages`` text pages each (a page OCR reads costs
    ``OCR_PAGE_COST``: ``richdoc.parse.shard_plan.plan_shards``), ``max_concurrency``
    of them at once.

    A PDF or an image that may be sharded is downloaded and inspected, in the worker,
    for its page count and its pages without a text layer, so a document the inspection
    refuses (too big, damaged, encrypted, over max_pages, nothing on any page, only
    scans with OCR off) fails here, once, rather than in every shard. Anything else (and
    everything with sharding off) is planned whole from its key alone, without a
    download: its parse inspects it as before.
    ``remaining_s`` (the invocation's time left, read when the inspection starts) cuts
    its wall clock (``plan_limits``).
    """
    started = time.monotonic()
    fmt = format_of(source.key)
    # Its own worker: counting pages needs pdfium, not docling's converters or models.
    worker = worker or shared_worker(inspect_only=True)
    sha256 = size = page_count = ocr_page_count = cost = None
    costs: list[int] | None = None
    if fmt in PAGINATED_FORMATS and shard_pages > 0:
        with tempfile.TemporaryDirectory(prefix="richdoc-plan-") as tmp:
            downloaded = store.download_source(
                source, staged_path(Path(tmp), fmt), max_bytes=limits.max_object_bytes
            )
            sha256, size = downloaded.sha256, downloaded.size
            if remaining_s is not None:
                limits = plan_limits(limits, remaining_s())
            inspected = worker.inspect(downloaded.path, fmt, limits)
        page_count = inspected.page_count
        inspection = Inspection(page_count=page_count, image_only=tuple(inspected.image_only))
        reading = pages_to_read(worker.settings.ocr_mode, fmt, inspection)
        if page_count is not None:
            costs = page_costs(page_count, reading.read)
            ocr_page_count, cost = len(reading.read), sum(costs)
    plan = plan_shards(fmt, page_count, shard_pages, costs=costs)
    conversion = worker.settings.conversion(fmt)
    return PlanOutput(
        sha256=sha256,
        size=size,
        format=str(conversion.format),
        pipeline=str(conversion.pipeline),
        contract=conversion.contract,
        page_count=page_count,
        ocr_page_count=ocr_page_count,
        page_cost=cost,
        sharded=plan.sharded,
        shards=list(plan.ranges),
        shard_count=plan.shard_count,
        max_concurrency=max_concurrency,
        seconds=round(time.monotonic() - started, 3),
    )


# The plan function's timeout (template.yaml: 300 s) is shorter than the parse tiers'
# (900 s), while its worker takes the tiers' RICHDOC_TIMEOUT_S (ParseTimeoutSeconds, up
# to 840 s). So the inspection gets what the invocation has left when it starts, less
# this reserve for the records after it: a slow inspection ends as the worker's typed
# ResourceLimit, not as the platform's Sandbox.Timedout. (The parse tiers keep the same
# rule: richdoc.parse.step.PARSE_RESERVE_S.)
PLAN_RESERVE_S = 60.0


def plan_limits(limits: ParseLimits, remaining_s: float | None) -> ParseLimits:
    """The limits of the plan's inspection in an invocation with ``remaining_s`` left
    (None: no deadline, as on the command line)."""
    if remaining_s is None:
        return limits
    return limits.within_invocation(remaining_s, PLAN_RESERVE_S, "the plan")


def plan_request(
    request: PlanInput,
    *,
    store: ArtifactStore,
    memory_tier_mb: int | None = None,
    environ: Mapping[str, str] | None = None,
    remaining_s: Callable[[], float] | None = None,
) -> PlanOutput:
    """The plan Lambda's whole job: ``RICHDOC_SHARD_PAGES`` and
    ``RICHDOC_SHARD_CONCURRENCY`` (template parameters) decide the fan-out; the
    inspection ends before the invocation does (``remaining_s``: the invocation's
    clock, ``plan_limits``)."""
    limits = ParseLimits.resolve(memory_tier_mb=memory_tier_mb, environ=environ)
    return plan_object(
        store,
        request.source,
        limits,
        shard_pages=shard_pages_setting(environ),
        max_concurrency=shard_concurrency_setting(environ),
        remaining_s=remaining_s,
    )
