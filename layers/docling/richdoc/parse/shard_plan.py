"""Page-range shards: how a large paginated document is split for the parse step.

A PDF with more pages than the shard size is parsed as consecutive page ranges, each in
its own parse invocation (its own memory tier, its own cached artifact), and the shards'
DoclingDocuments are joined in page order by ``richdoc.parse.merge``. Pure: no I/O, no
docling. docs/shards.md has the design and the budgets behind the numbers here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from richdoc.contracts import PageSpan
from richdoc.formats import DocFormat

# Only these formats have pages docling can convert by range. PPTX and XLSX have slides
# and sheets, but a deck or workbook is never too big for one invocation.
PAGINATED_FORMATS = frozenset({DocFormat.PDF})

# The most shards one document is split into. Each shard is one iteration of an inline
# Map state, whose events all go into the execution's history, which Standard caps at
# 25,000 events: at the worst (every retrier of every task exhausted, both escalations,
# the shard's failure recorded) an iteration writes 305 events and the rest of a sharded
# execution 433, so 80 shards fit (24,833; richdoc_tools.ops.history derives it from the
# definition, tests/unit/test_history_budget.py holds this to it). 80 is also what
# MaxPages (2,000) needs at the small account profile's 25-page shards. Past it, shards
# get bigger instead of more numerous (docs/shards.md, "Budgets").
MAX_SHARDS = 80


@dataclass(frozen=True)
class ShardPlan:
    """How one document is parsed: whole (no ranges), or as these ranges in page order."""

    page_count: int | None  # as inspected; None where the format has no pages
    ranges: tuple[PageSpan, ...] = ()

    @property
    def sharded(self) -> bool:
        return bool(self.ranges)

    @property
    def shard_count(self) -> int:
        """How many parse invocations convert the document (1 when not sharded)."""
        return len(self.ranges) or 1


def plan_shards(
    fmt: DocFormat, page_count: int | None, shard_pages: int, *, max_shards: int = MAX_SHARDS
) -> ShardPlan:
    """Split a document of ``page_count`` pages into the fewest ranges of at most
    ``shard_pages`` pages (bigger ones when ``max_shards`` would be exceeded), balanced
    so that their sizes differ by at most one page: the slowest shard sets the latency.

    A document that is not paginated, has no more pages than ``shard_pages``, or is
    planned with ``shard_pages=0`` (sharding off) is not sharded: it is parsed whole,
    under the whole-document artifact key, exactly as without this module.
    """
    if shard_pages < 0 or max_shards < 1:
        raise ValueError(f"need shard_pages >= 0 and max_shards >= 1: {shard_pages}, {max_shards}")
    if (
        fmt not in PAGINATED_FORMATS
        or page_count is None
        or shard_pages == 0
        or page_count <= shard_pages
    ):
        return ShardPlan(page_count=page_count)
    count = min(math.ceil(page_count / shard_pages), max_shards)
    if count < 2:
        return ShardPlan(page_count=page_count)
    base, bigger = divmod(page_count, count)
    ranges: list[PageSpan] = []
    start = 1
    for index in range(count):
        size = base + (1 if index < bigger else 0)
        ranges.append(PageSpan(start=start, end=start + size - 1))
        start += size
    return ShardPlan(page_count=page_count, ranges=tuple(ranges))


def check_partition(ranges: Sequence[PageSpan], page_count: int | None = None) -> None:
    """Raise ``ValueError`` unless ``ranges`` cover pages 1..N in order without gaps or
    overlaps (N = ``page_count`` when given): what a merge needs to rebuild the document."""
    if not ranges:
        raise ValueError("no shards")
    expected = 1
    for page_range in ranges:
        if page_range.start != expected:
            raise ValueError(
                f"shards must cover consecutive pages from page 1: pages {page_range} where "
                f"page {expected} should start"
            )
        expected = page_range.end + 1
    if page_count is not None and expected - 1 != page_count:
        raise ValueError(f"shards cover pages 1-{expected - 1} of a {page_count}-page document")
