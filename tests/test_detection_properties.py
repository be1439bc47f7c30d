"""Invariants of detection on arbitrary text with dates, keywords and phrases sprinkled in."""

from __future__ import annotations

from datetime import date

from detection_layout import layout
from hypothesis import given
from hypothesis import strategies as st
from richdoc.detection import (
    EFFECTIVENESS_MARKERS,
    ROLES,
    AmbiguityKind,
    detect,
    fired_rules,
    gather,
)
from richdoc.temporal import epoch_micros, find_dates

MONTHS = [  # mixed spellings and cases on purpose
    "January",
    "Feb",
    "march",
    "APRIL",
    "May",
    "Jun",
    "July",
    "aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
]


@st.composite
def rendered_dates(draw: st.DrawFn) -> str:
    day = draw(st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 12, 31)))
    month = MONTHS[day.month - 1]
    return draw(
        st.sampled_from(
            [
                day.isoformat(),
                f"{day.day} {month} {day.year}",
                f"{day.day}th {month} {day.year}",
                f"{month} {day.day}, {day.year}",
                f"31 {month} {day.year}",  # often not a real date
                f"{day.month}/{day.day}/{day.year}",  # never recognised
            ]
        )
    )


WORDS = [role.keyword for role in ROLES] + list(EFFECTIVENESS_MARKERS)
PHRASES = ["next month", "the following quarter", "the next year", "following year"]

pieces = st.one_of(
    st.text(max_size=40),
    st.sampled_from(WORDS).map(lambda w: w.upper() if len(w) % 2 else w.capitalize()),
    st.sampled_from(PHRASES),
    rendered_dates(),
    st.sampled_from([" ", "\n", ", ", "é" * 20, "x" * 60]),
)
blocks_strategy = st.lists(
    st.lists(pieces, max_size=8).map(" ".join),
    max_size=6,
)


@given(blocks_strategy, st.sampled_from(["\n\n", " ", ""]))
def test_detection_never_raises_and_is_deterministic(blocks, separator):
    projection = layout(*blocks, separator=separator)
    first = detect(projection, clarify=True).to_json_bytes()
    assert detect(projection, clarify=True).to_json_bytes() == first
    assert detect(layout(*blocks, separator=separator), clarify=True).to_json_bytes() == first


@given(blocks_strategy)
def test_at_most_one_ambiguity_and_the_stats_add_up(blocks):
    projection = layout(*blocks)
    fired = fired_rules(gather(projection))
    on = detect(projection, clarify=True)
    off = detect(projection, clarify=False)
    assert on.ambiguities == fired[:1]
    assert off.ambiguities == []
    for detection in (on, off):
        stats = detection.stats
        assert stats.ambiguities == len(detection.ambiguities)
        assert stats.ambiguities + stats.ambiguities_suppressed == len(fired)


@given(blocks_strategy)
def test_rules_fire_in_priority_order_and_conflicts_exclude_undated(blocks):
    kinds = [a.kind for a in fired_rules(gather(layout(*blocks)))]
    priority = list(AmbiguityKind)
    assert kinds == sorted(kinds, key=priority.index)
    assert not {AmbiguityKind.CONFLICTING_DATES, AmbiguityKind.UNDATED} <= set(kinds)


@given(blocks_strategy)
def test_every_dated_candidate_points_at_a_block_holding_its_evidence(blocks):
    projection = layout(*blocks)
    for ambiguity in fired_rules(gather(projection)):
        assert ambiguity.nodeRef == 0
        assert 1 <= len(ambiguity.candidates) <= 4
        for candidate in ambiguity.candidates:
            if candidate.spanRef is None:
                assert ambiguity.kind is AmbiguityKind.UNDATED
                continue
            text = blocks[candidate.spanRef]
            if ambiguity.kind is AmbiguityKind.CONFLICTING_DATES or "(document date)" in (
                candidate.label
            ):
                assert candidate.validFrom in {epoch_micros(m.value) for m in find_dates(text)}
            else:  # the derived or diagnostic relative candidate: its phrase is in the block
                assert any(unit in text.lower() for unit in ("month", "quarter", "year"))


@given(blocks_strategy)
def test_evidence_does_not_depend_on_the_block_separator(blocks):
    reference = gather(layout(*blocks))
    for separator in ("", " ", "\n", "\nSigned 2024-01-01 effective next month\n"):
        evidence = gather(layout(*blocks, separator=separator))
        assert (evidence.mentions, evidence.relative) == (reference.mentions, reference.relative)
