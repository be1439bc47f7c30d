"""Invariants of contracts-v2 detection on arbitrary text with dates of every form, role
phrases and event clauses sprinkled in."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from richdoc.detection import AmbiguityKind, detect, fired_rules
from richdoc.detection.dates import DATE_PATTERN, _matches, find
from richdoc.detection.ruleset import DetectionRules
from richdoc.temporal import epoch_micros, find_dates
from tests.support.detection_layout import layout

V2 = DetectionRules.CONTRACTS_V2
MONTHS = ["January", "Feb", "Feb.", "march", "APRIL", "May", "Jun", "July", "aug", "Sept", "Oct."]


@st.composite
def rendered_dates(draw: st.DrawFn) -> str:
    day = draw(st.dates(min_value=date(1950, 1, 1), max_value=date(2060, 12, 31)))
    month = MONTHS[(day.month - 1) % len(MONTHS)]
    return draw(
        st.sampled_from(
            [
                day.isoformat(),
                f"{day.day} {month} {day.year}",
                f"{day.day}th {month} {day.year}",
                f"{month} {day.day}, {day.year}",
                f"the {day.day}th day of {month}, {day.year}",
                f"{day.day}t h day of {month} {day.year}",
                f"{day.month}/{day.day}/{day.year % 100:02d}",
                f"{day.day}/{day.month}/{day.year}",
                f"{day.day}.{day.month}.{day.year}",
                f"31 {month} {day.year}",  # often no real date
            ]
        )
    )


WORDS = [
    "This Agreement is made as of",
    "effective as of",
    "shall commence on",
    '(the "Effective Date")',
    "that certain Lease dated",
    "and ending on",
    "no later than",
    "IN WITNESS WHEREOF, executed as of",
    "Date:",
    "Source: ACME, 10-Q,",
    "This Agreement shall become effective upon the Closing.",
    "effective the following quarter",
    "By: /s/ Name",
]
pieces = st.one_of(
    st.text(max_size=30),
    st.sampled_from(WORDS),
    rendered_dates(),
    st.sampled_from([" ", "\n", ", ", ". ", "é" * 20, "x" * 60]),
)
blocks_strategy = st.lists(st.lists(pieces, max_size=8).map(" ".join), max_size=6)


@given(blocks_strategy)
def test_contracts_v2_never_calls_undated_a_text_holding_a_date_spec_v1_reads(blocks):
    projection = layout(*blocks)
    if any(next(find_dates(block), None) is not None for block in blocks):
        kinds = [a.kind for a in fired_rules(projection, V2)]
        assert AmbiguityKind.UNDATED not in kinds


@given(blocks_strategy)
def test_every_date_spec_v1_reads_contracts_v2_reads_too(blocks):
    for block in blocks:
        read = {(f.start, f.end, f.value) for f in find(block)}
        for found in find_dates(block):
            assert (found.start, found.end, found.value) in read


@given(blocks_strategy, st.sampled_from(["\n\n", " ", ""]))
def test_detection_is_deterministic_and_emits_at_most_one_finding(blocks, separator):
    projection = layout(*blocks, separator=separator)
    first = detect(projection, clarify=True, rules=V2)
    assert detect(layout(*blocks, separator=separator), clarify=True, rules=V2) == first
    fired = fired_rules(projection, V2)
    assert first.ambiguities == fired[:1]
    assert first.stats.ambiguities + first.stats.ambiguities_suppressed == len(fired)
    off = detect(projection, clarify=False, rules=V2)
    assert off.ambiguities == [] and off.stats.ambiguities_suppressed == len(fired)


def _read_from_blocks(blocks: list[str], separator: str) -> list[object]:
    """The findings read from the blocks: all but undated, whose threshold counts the
    whole canonical text, separators included (as spec-v1's)."""
    found = fired_rules(layout(*blocks, separator=separator), V2)
    return [a for a in found if a.kind is not AmbiguityKind.UNDATED]


@given(blocks_strategy)
def test_findings_do_not_depend_on_the_block_separator(blocks):
    reference = _read_from_blocks(blocks, "\n\n")
    for separator in ("", " ", "\n", "\nThis Agreement is made as of 1 May 2001 effective 2 May\n"):
        assert _read_from_blocks(blocks, separator) == reference


@given(blocks_strategy)
def test_every_dated_candidate_is_a_date_of_the_block_it_points_at(blocks):
    for ambiguity in fired_rules(layout(*blocks), V2):
        assert ambiguity.nodeRef == 0 and 1 <= len(ambiguity.candidates) <= 4
        assert not {AmbiguityKind.CONFLICTING_DATES, AmbiguityKind.UNDATED} <= {
            a.kind for a in fired_rules(layout(*blocks), V2)
        }
        for candidate in ambiguity.candidates:
            if candidate.validFrom is None:
                continue
            assert candidate.spanRef is not None
            values = {epoch_micros(f.value) for f in find(blocks[candidate.spanRef]) if f.value}
            derived = "(start of next" in candidate.label
            assert derived or candidate.validFrom in values or "/" in blocks[candidate.spanRef]


@given(
    st.lists(
        st.one_of(pieces, st.sampled_from(["September. 5", "Sept.    12", "1 to", "- 30"])),
        max_size=12,
    ).map("".join)
)
def test_dates_tried_near_their_digits_are_the_dates_of_one_whole_block_pass(text: str) -> None:
    # find tries the date pattern only from DATE_LEAD characters before each digit: it
    # must find exactly what one finditer pass over the whole block finds.
    whole = [match.span() for match in DATE_PATTERN.finditer(text)]
    assert [match.span() for match in _matches(text)] == whole
