"""The page-range shards of a job's parse, as its attempts tell them: each run's shards in
page order, with their attempts, last tier and outcome (``richdoc jobs show`` and the
console's job page list them)."""

from __future__ import annotations

from dataclasses import dataclass

from richdoc.contracts import PageSpan
from richdoc.jobs import Attempt


@dataclass(frozen=True)
class ShardParse:
    """One page-range shard of a run's parse, as its attempts tell it."""

    run: int
    pages: PageSpan
    attempts: int
    tier: int | None  # of the last attempt
    outcome: str  # of the last attempt: ok, or the error name
    cached: bool | None  # the last attempt was answered from the artifact cache


def shard_parses(attempts: list[Attempt]) -> list[ShardParse]:
    """The shards of each run, in run and page order (none for a job parsed whole)."""
    by_shard: dict[tuple[int, PageSpan], list[Attempt]] = {}
    for attempt in sorted(attempts, key=lambda a: (a.run, a.seq)):
        if attempt.stage == "parse" and attempt.pages:
            by_shard.setdefault((attempt.run, attempt.pages), []).append(attempt)

    def order(key: tuple[int, PageSpan]) -> tuple[int, int]:
        run, pages = key
        return run, pages.start

    return [
        ShardParse(
            run=run,
            pages=pages,
            attempts=len(tried),
            tier=tried[-1].tier,
            outcome=tried[-1].outcome,
            cached=tried[-1].cached,
        )
        for (run, pages), tried in sorted(by_shard.items(), key=lambda item: order(item[0]))
    ]
