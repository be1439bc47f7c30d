"""A parse tier escalated to must have more memory than the tier that ran out of it.

The state machine escalates a resource limit from tier 1 to 2 to 3. Each tier is its own
function, sized by a template parameter; the small account profile, or parameters chosen
to fit an account's memory quota, can give two tiers the same memory. Parsing again at
the same size fails the same way after the same time, holding one of the function's
concurrent executions meanwhile, so a tier that is no bigger than the one that failed refuses at
once, as a resource limit: the next tier is tried the same way, and after the biggest the
job is dead-lettered as ``resource_limit``, as it would be at the end of a real ladder.
"""

from __future__ import annotations

from collections.abc import Iterable

from richdoc.contracts import PageSpan
from richdoc.jobs import Attempt
from richdoc.taxonomy import FailureKind, ResourceLimit, kind_of_error_name


def no_bigger_tier(
    tier: int, memory_mb: int, pages: PageSpan | None, attempts: Iterable[Attempt]
) -> ResourceLimit | None:
    """The refusal for a parse at ``tier`` with ``memory_mb`` when an earlier tier of the
    same run and document (or shard, ``pages``) ran out with at least that much memory;
    None when this tier is bigger (or the earlier memory is unknown: an attempt the
    platform ended before its handler recorded one)."""
    earlier = [
        a.memory_mb
        for a in attempts
        if a.stage == "parse"
        and a.pages == pages
        and a.tier is not None
        and a.tier < tier
        and a.memory_mb is not None
        and kind_of_error_name(a.outcome) is FailureKind.RESOURCE_LIMIT
    ]
    if not earlier or max(earlier) < memory_mb:
        return None
    return ResourceLimit(
        f"parse tier {tier} has {memory_mb} MB, no more than an earlier tier that ran out "
        f"({max(earlier)} MB): the tiers' memory is capped (AccountProfile=small, or the "
        "ParseTier*MemoryMB parameters), so parsing again here would fail the same way"
    )
