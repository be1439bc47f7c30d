"""A parse tier escalated to refuses at once when it has no more memory than the tier
that ran out of it (the small account profile gives tiers 2 and 3 the same 3008 MB)."""

from __future__ import annotations

from richdoc.contracts import PageSpan
from richdoc.jobs import Attempt
from richdoc.parse.escalation import no_bigger_tier
from richdoc.taxonomy import FailureKind


def _attempt(tier: int | None, memory_mb: int | None, *, pages: str | None = None) -> Attempt:
    return Attempt(
        job_id="job",
        run=1,
        seq=tier or 0,
        stage="parse",
        attempt=1,
        outcome="ResourceLimit",
        started_at="2026-01-01T00:00:00.000+00:00",
        tier=tier,
        pages=PageSpan.parse(pages) if pages else None,
        memory_mb=memory_mb,
    )


def test_a_bigger_tier_parses() -> None:
    assert no_bigger_tier(2, 6144, None, [_attempt(1, 3008), _attempt(2, 6144)]) is None


def test_a_tier_no_bigger_than_one_that_ran_out_refuses_as_a_resource_limit() -> None:
    refusal = no_bigger_tier(3, 3008, None, [_attempt(1, 2048), _attempt(2, 3008)])
    assert refusal is not None
    assert refusal.kind is FailureKind.RESOURCE_LIMIT
    assert "3008 MB" in refusal.reason and "AccountProfile=small" in refusal.reason
    assert no_bigger_tier(2, 2048, None, [_attempt(1, 3008)]) is not None


def test_only_the_same_document_or_shard_and_earlier_tiers_count() -> None:
    other_shard = _attempt(1, 3008, pages="1-50")
    assert no_bigger_tier(2, 3008, PageSpan.parse("51-100"), [other_shard]) is None
    assert no_bigger_tier(2, 3008, PageSpan.parse("1-50"), [other_shard]) is not None
    # This tier's own attempt (opened before the check) is not an earlier one.
    assert no_bigger_tier(2, 3008, None, [_attempt(2, 3008)]) is None
    # Other stages do not count.
    plan = _attempt(None, 3008).model_copy(update={"stage": "plan"})
    assert no_bigger_tier(2, 3008, None, [plan]) is None


def test_only_earlier_tiers_that_ran_out_count() -> None:
    succeeded = _attempt(1, 3008).model_copy(update={"outcome": "ok"})
    failed_otherwise = _attempt(1, 3008).model_copy(update={"outcome": "Transient"})
    assert no_bigger_tier(2, 3008, None, [succeeded, failed_otherwise]) is None
    killed = _attempt(1, 3008).model_copy(update={"outcome": "Sandbox.Timedout"})
    assert no_bigger_tier(2, 3008, None, [killed]) is not None


def test_an_unknown_earlier_memory_lets_the_tier_parse() -> None:
    # Recorded by the state machine for an attempt the platform ended before its handler
    # opened one: its memory is not known.
    assert no_bigger_tier(2, 3008, None, [_attempt(1, None)]) is None
