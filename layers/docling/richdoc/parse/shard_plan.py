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

# Only these formats have pages docling can convert by range (a PDF's pages, a multi-page
# TIFF's frames). PPTX and XLSX have slides and sheets, but a deck or workbook is never too
# big for one invocation.
PAGINATED_FORMATS = frozenset({DocFormat.PDF, DocFormat.IMAGE})

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
    fmt: DocFormat,
    page_count: int | None,
    shard_pages: int,
    *,
    costs: Sequence[int] | None = None,
    max_shards: int = MAX_SHARDS,
) -> ShardPlan:
    """Split a document of ``page_count`` pages into the fewest ranges that cost at most
    ``shard_pages`` text pages each (bigger ones when ``max_shards`` would be exceeded),
    balanced by cost: the slowest shard sets the latency.

    ``costs`` is each page's cost in text pages (``richdoc.parse.ocr.pages.page_costs``: a page
    OCR reads costs several), 1 each when not given: then the ranges' sizes differ by at
    most one page, the bigger ones first. A document that is not paginated, costs no
    more than ``shard_pages``, or is planned with ``shard_pages=0`` (sharding off) is not
    sharded: it is parsed whole, under the whole-document artifact key, exactly as
    without this module.
    """
    if shard_pages < 0 or max_shards < 1:
        raise ValueError(f"need shard_pages >= 0 and max_shards >= 1: {shard_pages}, {max_shards}")
    if fmt not in PAGINATED_FORMATS or page_count is None or shard_pages == 0:
        return ShardPlan(page_count=page_count)
    costs = [1] * page_count if costs is None else list(costs)
    if len(costs) != page_count or min(costs, default=1) < 1:
        raise ValueError(
            f"need one cost of at least 1 per page: {len(costs)} for {page_count} pages"
        )
    total = sum(costs)
    count = min(math.ceil(total / shard_pages), max_shards, page_count)
    if count < 2:
        return ShardPlan(page_count=page_count)
    return ShardPlan(page_count=page_count, ranges=tuple(_balanced(costs, count)))


def _balanced(costs: list[int], count: int) -> list[PageSpan]:
    """``count`` consecutive ranges of at least one page whose costs are as even as the
    pages allow: the k-th ends at the first page where the running cost reaches k
    shares of the total (the first ``total % count`` shares one unit bigger)."""
    base, bigger = divmod(sum(costs), count)
    ranges: list[PageSpan] = []
    start, running, page = 1, 0, 0
    for index in range(1, count):
        share = index * base + min(index, bigger)
        last = len(costs) - (count - index)  # leave a page for each range after this one
        while page < start or (running < share and page < last):
            running += costs[page]
            page += 1
        ranges.append(PageSpan(start=start, end=page))
        start = page + 1
    ranges.append(PageSpan(start=start, end=len(costs)))
    return ranges


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
