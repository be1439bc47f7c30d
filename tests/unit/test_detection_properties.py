"""Invariants of spec-v1 detection on arbitrary text with dates, keywords and phrases
sprinkled in."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from richdoc.detection import AmbiguityKind, Detection
from richdoc.detection import detect as detect_with
from richdoc.detection.ruleset import DetectionRules
from richdoc.detection.spec_v1 import (
    _MARKER_PATTERN,
    _RELATIVE_PATTERN,
    _ROLE_PATTERN,
    EFFECTIVENESS_MARKERS,
    MARKER_WINDOW,
    ROLE_WINDOW,
    ROLES,
    DateMention,
    RelativePhrase,
    fired_rules,
    gather,
)
from richdoc.graph import Projection
from richdoc.temporal import CalendarUnit, epoch_micros, find_dates
from tests.support.detection_layout import layout


def detect(projection: Projection, *, clarify: bool) -> Detection:
    return detect_with(projection, clarify=clarify, rules=DetectionRules.SPEC_V1)


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


# --- the bounded lookbacks agree with the plain definition ------------------------------

whitespace_runs = st.text(alphabet=" \t\n\u00a0", min_size=1, max_size=4)


@st.composite
def spaced(draw: st.DrawFn, entries: list[str]) -> str:
    """A lexicon entry with 1-4 mixed whitespace characters between its words."""
    words = draw(st.sampled_from(entries)).split()
    return "".join(word + draw(whitespace_runs) for word in words[:-1]) + words[-1]


@st.composite
def near_misses(draw: st.DrawFn) -> str:
    """A keyword or marker, then a date or unit phrase, around the window edges."""
    lead = draw(spaced(WORDS))
    gap = draw(st.integers(1, ROLE_WINDOW + 4))
    filler = " " if gap == 1 else " " + "x" * (gap - 2) + " "
    target = draw(st.one_of(rendered_dates(), spaced(PHRASES)))
    return lead + filler + target


near_pieces = st.one_of(near_misses(), pieces)


def reference_mentions(span_ref: int, text: str) -> list[DateMention]:
    """Spec rule 1 read literally: every keyword of the block, filtered by distance."""
    keywords = list(_ROLE_PATTERN.finditer(text))
    mentions = []
    for found in find_dates(text):
        in_window = [k for k in keywords if 0 <= found.start - k.end() <= ROLE_WINDOW]
        roles = [ROLES[int(str(k.lastgroup)[1:])] for k in in_window]
        best = max(range(len(roles)), key=lambda i: (roles[i].precedence, i), default=None)
        mentions.append(DateMention(span_ref, found.value, None if best is None else roles[best]))
    return mentions


def reference_relative(span_ref: int, text: str) -> RelativePhrase | None:
    markers = list(_MARKER_PATTERN.finditer(text))
    for phrase in _RELATIVE_PATTERN.finditer(text):
        near = [m for m in markers if 0 <= phrase.start() - m.end() <= MARKER_WINDOW]
        if near:
            words = text[near[-1].start() : phrase.end()].split()
            unit = CalendarUnit(phrase["unit"].lower())
            return RelativePhrase(span_ref, " ".join(words), unit)
    return None


@given(st.lists(st.lists(near_pieces, max_size=12).map(" ".join), max_size=4))
def test_bounded_lookbacks_find_exactly_what_whole_block_scans_find(blocks):
    evidence = gather(layout(*blocks))
    expected = [m for i, text in enumerate(blocks) for m in reference_mentions(i, text)]
    assert evidence.mentions == expected
    relatives = (reference_relative(i, text) for i, text in enumerate(blocks))
    assert evidence.relative == next((r for r in relatives if r is not None), None)
