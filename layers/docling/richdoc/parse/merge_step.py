"""The Merge state: the parsed shards of a document joined into its DoclingDocument.

``merge_request`` takes the plan (``richdoc.parse.plan_step``) and the shards the Map
state parsed, in page order, and answers as the parse step does for a whole document.
It needs docling-core (``richdoc.parse.merge``, imported only when a merge runs), never
docling: the merge function is a zip function on the layer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from richdoc.artifacts import ArtifactStore, merged_key
from richdoc.contracts import MergeInput, ParseOutput, PlanOutput, ShardParsed
from richdoc.parse.settings import Pipeline


def merge_objects(
    store: ArtifactStore, plan: PlanOutput, shards: Sequence[ShardParsed]
) -> ParseOutput:
    """Merge the parsed shards of ``plan`` (in its order) into the document's
    DoclingDocument, stored under ``merged_key``; answers as the parse step does for a
    whole document, so project and detect read it as they read any parse. A merge of
    complete shards is reused like a parse; one with partial shards (accepted at the
    biggest tier) goes under the ``-partial`` contract and is never reused."""
    started = time.monotonic()
    if not plan.sharded or plan.sha256 is None or plan.size is None or plan.page_count is None:
        raise ValueError("only a sharded plan has shards to merge")
    if [shard.page_range for shard in shards] != plan.shards:
        raise ValueError(
            f"the parsed shards {[str(s.page_range) for s in shards]} are not the plan's "
            f"{[str(s) for s in plan.shards]}"
        )
    partial = any(shard.partial for shard in shards)
    contract = f"{plan.contract}-partial" if partial else plan.contract
    key = merged_key(plan.sha256, contract, len(shards))
    cached = not partial and store.docling_page_count(key) is not None
    if not cached:
        from richdoc.parse.merge import merge_shard_json  # docling-core: only when merging

        parts = [(s.page_range, store.get_bytes(s.docling_key)) for s in shards]
        merged = merge_shard_json(parts, pipeline=Pipeline(plan.pipeline))
        store.put_docling(key, merged, pipeline=plan.pipeline, page_count=plan.page_count)
    return ParseOutput(
        docling_key=key,
        sha256=plan.sha256,
        size=plan.size,
        pipeline=plan.pipeline,
        page_count=plan.page_count,
        cached=cached,
        partial=partial,
        failed_pages=sorted(page for shard in shards for page in shard.failed_pages),
        seconds=round(time.monotonic() - started, 3),
    )


def merge_request(request: MergeInput, *, store: ArtifactStore) -> ParseOutput:
    """The merge Lambda's whole job."""
    return merge_objects(store, request.plan, request.shards)
