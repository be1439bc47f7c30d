"""Memory tiers for tests that need a real ceiling: the smallest Lambda tier whose derived
ceiling (``richdoc.parse.settings.ceiling_for_tier``) holds one page beside a zygote."""

from __future__ import annotations

from richdoc.parse.settings import Pipeline, ZygoteMemory, ceiling_for_tier
from richdoc.taxonomy import ResourceLimit
from richdoc.worker.protocol import Hello


def zygote_memory(hello: Hello) -> ZygoteMemory:
    return ZygoteMemory(anon_mb=hello.anon_mb, file_mb=hello.file_mb)


def smallest_tier_mb(zygote: ZygoteMemory, pipeline: Pipeline) -> int:
    """The smallest memory (MB, Lambda's range) whose ceiling is not refused: it holds one
    page of ``pipeline`` and little more."""
    for tier in range(1024, 10241):
        try:
            ceiling_for_tier(tier, zygote, pipeline)
        except ResourceLimit:
            continue
        return tier
    raise AssertionError(f"no Lambda tier holds one page beside {zygote}")
