"""richdoc.detection under the spec-v1 rule set: every rule of docs/detection.md, one
behaviour per test."""

from __future__ import annotations

import json
from datetime import date

import pytest

from richdoc.detection import Ambiguity, AmbiguityKind, Detection
from richdoc.detection import detect as detect_with
from richdoc.detection.ruleset import DetectionRules
from richdoc.detection.spec_v1 import EFFECTIVENESS_MARKERS, ROLES, fired_rules, gather
from richdoc.graph import Projection, Span, SpanKind
from richdoc.taxonomy import CorruptInput
from richdoc.temporal import epoch_micros
from tests.support.detection_layout import layout

FILLER = "The parties agree to the terms below."  # no date, keyword or marker


def detect(projection: Projection, *, clarify: bool) -> Detection:
    return detect_with(projection, clarify=clarify, rules=DetectionRules.SPEC_V1)


def detected(*blocks: str, clarify: bool = True, separator: str = "\n\n") -> Detection:
    return detect(layout(*blocks, separator=separator), clarify=clarify)


def emitted(*blocks: str, separator: str = "\n\n") -> Ambiguity | None:
    ambiguities = detected(*blocks, separator=separator).ambiguities
    assert len(ambiguities) <= 1
    return ambiguities[0] if ambiguities else None


def labels(*blocks: str) -> list[str]:
    ambiguity = emitted(*blocks)
    return [] if ambiguity is None else [c.label for c in ambiguity.candidates]


def fired(*blocks: str) -> list[AmbiguityKind]:
    return [a.kind for a in fired_rules(gather(layout(*blocks)))]


def rule(kind: AmbiguityKind, *blocks: str) -> Ambiguity:
    """The finding of one rule, whether or not it won the priority."""
    (finding,) = [a for a in fired_rules(gather(layout(*blocks))) if a.kind is kind]
    return finding


def us(year: int, month: int, day: int) -> int:
    return epoch_micros(date(year, month, day))


# --- rule 1: role keywords ---------------------------------------------------------------

ALL_ROLE_KEYWORDS = [
    "effective",
    "with effect from",
    "takes effect",
    "commencing",
    "valid from",
    "as of",
    "executed",
    "signed",
    "signature date",
    "dated",
    "countersigned",
]


def test_the_role_lexicon_is_the_spec_table():
    assert [(r.keyword, r.precedence) for r in ROLES] == [
        ("effective", 5),
        ("with effect from", 5),
        ("takes effect", 5),
        ("commencing", 5),
        ("valid from", 5),
        ("as of", 4),
        ("executed", 3),
        ("signed", 3),
        ("signature date", 3),
        ("dated", 2),
        ("countersigned", 1),
    ]


@pytest.mark.parametrize("keyword", ALL_ROLE_KEYWORDS)
def test_each_role_keyword_makes_a_role_dated_mention_labelled_with_it(keyword):
    assert labels(f"{keyword.capitalize()} 1 March 2024.", f"Also {keyword} 2024-04-01.") == [
        f"2024-03-01 ({keyword})",
        f"2024-04-01 ({keyword})",
    ]


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        ("commencing", "as of"),
        ("as of", "executed"),
        ("signature date", "dated"),
        ("dated", "countersigned"),
        ("valid from", "countersigned"),
    ],
)
def test_higher_precedence_ranks_first_whatever_the_dates(higher, lower):
    assert labels(f"{lower} 2024-01-01", f"{higher} 2024-12-31") == [
        f"2024-12-31 ({higher})",
        f"2024-01-01 ({lower})",
    ]


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        ("effective", "as of"),
        ("as of", "signed"),
        ("executed", "dated"),
        ("dated", "countersigned"),
    ],
)
def test_a_date_under_two_roles_is_one_candidate_with_the_higher_role(higher, lower):
    found = labels(f"{lower} 2024-03-01", f"{higher} 1 March 2024", "Dated 2020-01-01")
    assert len(found) == 2
    assert [label for label in found if label.startswith("2024-03-01")] == [
        f"2024-03-01 ({higher})"
    ]


def test_same_date_under_two_roles_points_at_the_block_of_the_higher_role():
    ambiguity = emitted(
        "Dated 2024-03-01.", FILLER, "Effective 1 March 2024.", "Signed 2024-05-01."
    )
    assert ambiguity is not None
    assert [(c.label, c.spanRef) for c in ambiguity.candidates] == [
        ("2024-03-01 (effective)", 2),
        ("2024-05-01 (signed)", 3),
    ]


def test_equal_precedence_across_mentions_keeps_the_first_in_reading_order():
    ambiguity = emitted("Executed 2024-03-01.", "Signed 2024-03-01.", "Dated 2020-01-01.")
    assert ambiguity is not None
    assert [(c.label, c.spanRef) for c in ambiguity.candidates] == [
        ("2024-03-01 (executed)", 0),
        ("2020-01-01 (dated)", 2),
    ]


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("Executed and signed on 1 March 2024.", "signed"),
        ("Signed and executed on 1 March 2024.", "executed"),
        ("Signed by the buyer; signature date 1 March 2024.", "signature date"),
        ("Commencing, and effective, 1 March 2024.", "effective"),
        ("Effective, commencing 1 March 2024.", "commencing"),
    ],
)
def test_equal_precedence_in_one_window_goes_to_the_keyword_nearest_the_date(text, role):
    assert labels(text, "Dated 2020-01-01.")[0] == f"2024-03-01 ({role})"


def test_the_highest_precedence_in_the_window_wins_even_when_farther():
    assert labels("Effective once signed on 1 March 2024.", "Dated 2020-01-01.")[0] == (
        "2024-03-01 (effective)"
    )


def test_countersigned_is_not_read_as_signed():
    assert labels("Countersigned 2024-03-01.", "Dated 2024-04-01.") == [
        "2024-04-01 (dated)",
        "2024-03-01 (countersigned)",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Updated 2024-03-01. Backdated 2024-04-01.",
        "Ineffective 2024-03-01. Effectively 2024-04-01.",
        "Unsigned 2024-03-01. Signedness 2024-04-01.",
        "Asof 2024-03-01. Executedly 2024-04-01.",
    ],
)
def test_keywords_are_whole_words(text):
    assert [m.role for m in gather(layout(text)).mentions] == [None, None]


def test_punctuation_inside_a_compound_is_a_word_boundary():
    (mention,) = gather(layout("Re-executed 2024-03-01.")).mentions
    assert mention.role is not None and mention.role.keyword == "executed"
    (mention,) = gather(layout("Counter-signed 2024-03-01.")).mentions
    assert mention.role is not None and mention.role.keyword == "signed"


def test_role_keywords_are_case_insensitive_and_span_whitespace_runs():
    assert labels("WITH EFFECT FROM 2024-03-01", "sIgNaTuRe\n  DaTe 2024-04-01") == [
        "2024-03-01 (with effect from)",
        "2024-04-01 (signature date)",
    ]


def test_keyword_words_are_separated_by_one_to_four_whitespace_characters():
    four, five = "with \t\n effect \t\n from", "with \t\n\n effect from"
    assert gather(layout(f"{four} 2024-03-01")).mentions[0].role == ROLES[1]
    assert gather(layout(f"{five} 2024-03-01")).mentions[0].role is None


@pytest.mark.parametrize(("gap", "role_dated"), [(48, True), (49, False)])
def test_the_widest_possible_keyword_is_found_at_the_window_edge(gap, role_dated):
    keyword = "with    effect    from"  # the longest match the lexicon allows
    text = keyword + " " + "x" * (gap - 2) + " " + "1 March 2024"
    (mention,) = gather(layout(text)).mentions
    assert (mention.role is not None) is role_dated


def test_unicode_look_alike_letters_do_not_spell_keywords():
    assert labels("\u017figned 2024-03-01.", "Dated 2024-04-01.") == []  # long s
    assert labels("Ta\u212aes effect 2024-03-01.", "Dated 2024-04-01.") == []  # Kelvin sign


def test_any_unicode_whitespace_separates_keyword_words():
    (mention,) = gather(layout("With\u00a0effect\u2003from 2024-03-01")).mentions
    assert mention.role == ROLES[1]


@pytest.mark.parametrize(("gap", "role_dated"), [(1, True), (47, True), (48, True), (49, False)])
def test_the_role_window_is_48_characters_between_keyword_and_date(gap, role_dated):
    # gap = characters strictly between the keyword's last character and the date's first
    filler = ":" if gap == 1 else " " + "x" * (gap - 2) + " "
    text = f"Signed{filler}2024-03-01"
    assert len(filler) == gap
    (mention,) = gather(layout(text)).mentions
    assert (mention.role is not None) is role_dated


@pytest.mark.parametrize(("gap", "role_dated"), [(48, True), (49, False)])
def test_the_role_window_counts_characters_not_bytes(gap, role_dated):
    text = "Dated " + "é" * (gap - 2) + " 1 March 2024"
    (mention,) = gather(layout(text)).mentions
    assert (mention.role is not None) is role_dated


def test_a_keyword_after_the_date_does_not_role_date_it():
    assert gather(layout("2024-03-01 signed")).mentions[0].role is None


def test_keyword_and_date_in_different_blocks_do_not_pair():
    # Joined by one space in the canonical text they would be 1 character apart.
    mentions = gather(layout("Signed", "2024-03-01", separator=" ")).mentions
    assert [(m.span_ref, m.role) for m in mentions] == [(1, None)]


def test_text_between_spans_is_never_read():
    projection = layout(
        "Signed 2024-03-01.", "Signed 2024-04-01.", separator="\nDated 2019-09-09\n"
    )
    assert [m.value for m in gather(projection).mentions] == [date(2024, 3, 1), date(2024, 4, 1)]


# --- rule 1: conflicting_dates -----------------------------------------------------------


def test_conflicting_dates_needs_two_distinct_role_dated_dates():
    assert fired("Signed 2024-03-01.") == []
    assert fired("Signed 2024-03-01.", "Executed 1 March 2024.") == []
    assert fired("Signed 2024-03-01.", "Invoice of 2024-04-01.") == []
    assert fired("Signed 2024-03-01.", "Executed 2024-04-01.") == [AmbiguityKind.CONFLICTING_DATES]


def test_conflicting_dates_shape_confidences_and_exact_values():
    ambiguity = emitted(FILLER, "Effective March 1st, 2024.", FILLER, "Signed on 15 Feb 2024.")
    assert ambiguity is not None
    assert ambiguity.kind is AmbiguityKind.CONFLICTING_DATES
    assert ambiguity.nodeRef == 0
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.7, 0.55)
    assert [(c.label, c.validFrom, c.spanRef) for c in ambiguity.candidates] == [
        ("2024-03-01 (effective)", 1_709_251_200_000_000, 1),
        ("2024-02-15 (signed)", 1_707_955_200_000_000, 3),
    ]


def test_candidates_order_by_precedence_then_date_and_cap_at_four():
    assert labels(
        "Dated 2024-05-05.",
        "Signed 2024-07-07.",
        "Executed 2024-06-06.",
        "As of 2024-09-09.",
        "Countersigned 2024-01-01.",
    ) == [
        "2024-09-09 (as of)",
        "2024-06-06 (executed)",
        "2024-07-07 (signed)",
        "2024-05-05 (dated)",
    ]


def test_the_cap_keeps_the_four_highest_ranked_of_five_distinct_dates():
    ambiguity = emitted(*(f"Signed 2024-0{month}-01." for month in (5, 1, 4, 2, 3)))
    assert ambiguity is not None
    assert [c.label for c in ambiguity.candidates] == [
        f"2024-0{month}-01 (signed)" for month in (1, 2, 3, 4)
    ]
    assert [c.spanRef for c in ambiguity.candidates] == [1, 3, 4, 2]


def test_a_keyword_reaches_every_date_in_its_window_not_only_the_next_one():
    assert labels("Signed 2024-03-01 and dated 2024-03-02.") == [
        "2024-03-01 (signed)",
        "2024-03-02 (signed)",  # "Signed" is 22 characters before it and outranks "dated"
    ]


# --- rule 2: relative_date ---------------------------------------------------------------


@pytest.mark.parametrize("marker", EFFECTIVENESS_MARKERS)
@pytest.mark.parametrize("unit_phrase", ["next month", "the following quarter", "the next year"])
def test_each_marker_before_each_unit_phrase_is_a_relative_date(marker, unit_phrase):
    ambiguity = emitted(f"The new rate {marker} {unit_phrase}.")
    assert ambiguity is not None and ambiguity.kind is AmbiguityKind.RELATIVE_DATE
    assert ambiguity.candidates[0].label == (f"{marker} {unit_phrase} (no anchor date in document)")


def test_the_effectiveness_marker_list_is_the_spec_list():
    assert EFFECTIVENESS_MARKERS == (
        "effective",
        "with effect",
        "takes effect",
        "starting",
        "commencing",
        "begins",
    )


@pytest.mark.parametrize(("gap", "relative"), [(1, True), (31, True), (32, True), (33, False)])
def test_the_marker_window_is_32_characters_between_marker_and_phrase(gap, relative):
    # gap = characters strictly between the marker's last character and the phrase's first
    filler = " " if gap == 1 else " " + "x" * (gap - 2) + " "
    assert len(filler) == gap
    assert (gather(layout(f"Starting{filler}the next month")).relative is not None) is relative


@pytest.mark.parametrize(("gap", "relative"), [(32, True), (33, False)])
def test_the_widest_possible_marker_is_found_at_the_window_edge(gap, relative):
    text = "takes    effect " + "x" * (gap - 2) + " the    following    quarter"
    assert (gather(layout(text)).relative is not None) is relative


def test_the_marker_window_counts_characters_not_bytes():
    assert gather(layout("Begins " + "é" * 30 + " next year")).relative is not None
    assert gather(layout("Begins " + "é" * 31 + " next year")).relative is None


@pytest.mark.parametrize(
    "text",
    [
        "The next month, effective immediately.",  # marker after the phrase
        "Effective the next monthly report.",
        "Effective the following years.",
        "Effective nextmonth.",
        "Reffective next month.",
    ],
)
def test_phrases_without_a_preceding_whole_word_marker_are_not_relative(text):
    assert gather(layout(text)).relative is None


def test_marker_and_phrase_in_different_blocks_do_not_pair():
    assert gather(layout("Effective", "the next quarter", separator=" ")).relative is None


@pytest.mark.parametrize(
    ("anchor_text", "unit", "derived", "anchor"),
    [
        ("15 March 2024", "quarter", "2024-04-01", "2024-03-15"),
        ("2024-03-31", "quarter", "2024-04-01", "2024-03-31"),
        ("2024-04-01", "quarter", "2024-07-01", "2024-04-01"),
        ("2024-11-20", "quarter", "2025-01-01", "2024-11-20"),
        ("2024-01-31", "month", "2024-02-01", "2024-01-31"),
        ("2024-12-05", "month", "2025-01-01", "2024-12-05"),
        ("2024-01-01", "year", "2025-01-01", "2024-01-01"),
        ("2024-12-31", "year", "2025-01-01", "2024-12-31"),
    ],
)
def test_anchored_relative_date_resolves_to_the_next_unit_strictly_after(
    anchor_text, unit, derived, anchor
):
    ambiguity = emitted(f"Dated {anchor_text}.", FILLER, f"Fees change effective next {unit}.")
    assert ambiguity is not None and ambiguity.kind is AmbiguityKind.RELATIVE_DATE
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.85, 0.5)
    d = date.fromisoformat(derived)
    a = date.fromisoformat(anchor)
    assert [(c.label, c.validFrom, c.spanRef) for c in ambiguity.candidates] == [
        (f"{derived} (start of next {unit} after {anchor})", epoch_micros(d), 2),
        (f"{anchor} (document date)", epoch_micros(a), 0),
    ]


def test_anchor_is_the_highest_precedence_role_dated_mention():
    finding = rule(
        AmbiguityKind.RELATIVE_DATE,
        "Invoice of 2024-01-10.",
        "Dated 2024-02-20.",
        "Effective 2024-03-15.",
        "Signed 2024-05-01.",
        "Rent rises starting the next month.",
    )
    assert [c.label for c in finding.candidates] == [
        "2024-04-01 (start of next month after 2024-03-15)",
        "2024-03-15 (document date)",
    ]
    assert finding.candidates[1].spanRef == 2


def test_anchor_ties_go_to_the_first_in_reading_order():
    finding = rule(
        AmbiguityKind.RELATIVE_DATE,
        "Signed 2024-05-01.",
        "Executed 2024-02-01.",
        "Takes effect the following year.",
    )
    assert [(c.label, c.spanRef) for c in finding.candidates] == [
        ("2025-01-01 (start of next year after 2024-05-01)", 2),
        ("2024-05-01 (document date)", 0),
    ]


def test_a_role_dated_mention_outranks_an_earlier_plain_date_as_anchor():
    ambiguity = emitted("Invoice of 2024-01-10.", "Dated 2024-02-20.", "Begins next month.")
    assert ambiguity is not None
    assert ambiguity.candidates[1].label == "2024-02-20 (document date)"


def test_without_role_dated_mentions_the_anchor_is_the_first_date_in_reading_order():
    ambiguity = emitted("Invoice of 2024-02-10.", "Paid on 2024-01-05.", "Begins next month.")
    assert ambiguity is not None
    assert [(c.label, c.spanRef) for c in ambiguity.candidates] == [
        ("2024-03-01 (start of next month after 2024-02-10)", 2),
        ("2024-02-10 (document date)", 0),
    ]


def test_the_first_date_in_a_block_comes_first_in_reading_order():
    ambiguity = emitted("Paid 2024-06-01 for 2024-05-01.", "Begins the next quarter.")
    assert ambiguity is not None
    assert ambiguity.candidates[1].label == "2024-06-01 (document date)"


def test_unanchored_relative_date_is_one_interval_less_candidate():
    ambiguity = emitted(FILLER, "Prices change with effect from the next quarter.")
    assert ambiguity is not None and ambiguity.kind is AmbiguityKind.RELATIVE_DATE
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.85, 0.0)
    (candidate,) = ambiguity.candidates
    assert candidate.label == "with effect from the next quarter (no anchor date in document)"
    assert (candidate.spanRef, candidate.validFrom) == (1, None)


def test_the_unanchored_label_keeps_case_and_collapses_whitespace():
    assert labels("It Takes\n effect  at the start of The Following\tYear.") == [
        "Takes effect at the start of The Following Year (no anchor date in document)"
    ]


def test_the_matched_phrase_starts_at_the_marker_nearest_the_unit_phrase():
    assert labels("Starting on signature, effective the next month.") == [
        "effective the next month (no anchor date in document)"
    ]


def test_the_first_relative_phrase_in_reading_order_is_used():
    ambiguity = emitted(
        "Dated 2024-02-10.", "Next year maybe.", "Begins next month.", "Effective next year."
    )
    assert ambiguity is not None
    assert ambiguity.candidates[0].label == "2024-03-01 (start of next month after 2024-02-10)"
    assert ambiguity.candidates[0].spanRef == 2


def test_no_derived_candidate_when_the_next_unit_is_past_year_9999():
    ambiguity = emitted("Dated 9999-12-31.", "Effective the next year.")
    assert ambiguity is not None
    assert [c.label for c in ambiguity.candidates] == ["9999-12-31 (document date)"]


def test_an_invalid_date_does_not_anchor():
    assert labels("Dated 2023-02-29.", "Effective the next month.") == [
        "Effective the next month (no anchor date in document)"
    ]


# --- rule 3: undated ---------------------------------------------------------------------


def test_undated_fires_from_200_utf8_bytes_of_dateless_text():
    assert fired("a" * 199) == []
    ambiguity = emitted("a" * 200)
    assert ambiguity is not None and ambiguity.kind is AmbiguityKind.UNDATED
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.9, 0.0)
    (candidate,) = ambiguity.candidates
    assert (candidate.label, candidate.validFrom, candidate.spanRef) == (
        "No date found in document",
        None,
        None,
    )


def test_the_undated_threshold_is_measured_in_bytes_not_characters():
    assert fired("é" * 100) == [AmbiguityKind.UNDATED]  # 100 characters, 200 bytes
    assert fired("é" * 99 + "a") == []  # 100 characters, 199 bytes


def test_the_undated_threshold_counts_the_whole_canonical_text():
    # Two 99-byte blocks and a 2-byte separator: the canonical text is 200 bytes.
    assert fired("a" * 99, "b" * 99) == [AmbiguityKind.UNDATED]
    assert fired("a" * 99, "b" * 98) == []


@pytest.mark.parametrize(
    "dated", ["Invoice of 2024-01-10.", "Meeting on 5 May 2024.", "Paid June 1st, 2024."]
)
def test_any_absolute_date_prevents_undated(dated):
    assert fired("a" * 300, dated) == []


@pytest.mark.parametrize("not_a_date", ["31 April 2024", "1/2/2026", "01-02-2026", "12024-01-01"])
def test_text_that_only_looks_dated_is_undated(not_a_date):
    assert fired("a" * 300, f"Due {not_a_date}.") == [AmbiguityKind.UNDATED]


def test_undated_candidate_serializes_without_span_ref_or_valid_from():
    data = json.loads(detected("a" * 300).to_json_bytes())
    assert data["ambiguities"][0]["candidates"] == [{"label": "No date found in document"}]


# --- priority, suppression, gating -------------------------------------------------------


def test_conflicting_dates_beats_relative_date_and_counts_it_suppressed():
    blocks = ("Signed 2024-03-01.", "Dated 2024-02-01.", "Effective next month.")
    assert fired(*blocks) == [AmbiguityKind.CONFLICTING_DATES, AmbiguityKind.RELATIVE_DATE]
    detection = detected(*blocks)
    assert [a.kind for a in detection.ambiguities] == [AmbiguityKind.CONFLICTING_DATES]
    assert detection.stats.model_dump() == {"ambiguities": 1, "ambiguities_suppressed": 1}


def test_relative_date_beats_undated_and_counts_it_suppressed():
    blocks = ("x" * 200, "Effective next month.")
    assert fired(*blocks) == [AmbiguityKind.RELATIVE_DATE, AmbiguityKind.UNDATED]
    detection = detected(*blocks)
    assert [a.kind for a in detection.ambiguities] == [AmbiguityKind.RELATIVE_DATE]
    assert detection.stats.model_dump() == {"ambiguities": 1, "ambiguities_suppressed": 1}


def test_conflicting_dates_and_undated_exclude_each_other():
    # Conflicts need dates and undated needs none, so at most two rules ever fire.
    assert fired("Signed 2024-03-01. " + "x" * 300, "Dated 2024-02-01.", "Begins next year.") == [
        AmbiguityKind.CONFLICTING_DATES,
        AmbiguityKind.RELATIVE_DATE,
    ]


def test_without_clarify_nothing_is_emitted_and_every_finding_counts_as_suppressed():
    detection = detected(
        "Signed 2024-03-01.", "Dated 2024-02-01.", "Begins next month.", clarify=False
    )
    assert detection.ambiguities == []
    assert detection.stats.model_dump() == {"ambiguities": 0, "ambiguities_suppressed": 2}


def test_a_document_without_findings_has_zero_stats_either_way():
    for clarify in (True, False):
        detection = detected("Signed 2024-03-01.", clarify=clarify)
        assert detection.ambiguities == []
        assert detection.stats.model_dump() == {"ambiguities": 0, "ambiguities_suppressed": 0}


def test_an_empty_projection_has_no_findings():
    assert detected().stats.model_dump() == {"ambiguities": 0, "ambiguities_suppressed": 0}


# --- the detection.json shape ------------------------------------------------------------


def test_detection_json_is_sorted_utf8_with_a_trailing_newline_and_no_severity():
    raw = detected("Rates rise effective — from the next quarter.").to_json_bytes()
    assert raw.endswith(b"}\n")
    assert "—".encode() in raw
    data = json.loads(raw)
    assert raw == (json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode()
    assert data["schema"] == "richdoc.detection/v1"
    (ambiguity,) = data["ambiguities"]
    assert data["rules"] == "spec-v1"
    assert set(ambiguity) == {
        "kind",
        "nodeRef",
        "detectorConfidence",
        "appliedCandidateConfidence",
        "candidates",
    }
    assert b"severity" not in raw.lower()
    assert b"validTo" not in raw


def test_detection_json_round_trips():
    detection = detected("Signed 2024-03-01.", "Dated 2024-02-01.")
    assert Detection.model_validate_json(detection.to_json_bytes()) == detection


def test_detection_without_clarify_serializes_an_empty_list_and_the_stats():
    data = json.loads(detected("a" * 300, clarify=False).to_json_bytes())
    assert data == {
        "schema": "richdoc.detection/v1",
        "schema_version": "1.2",
        "rules": "spec-v1",
        "ambiguities": [],
        "stats": {"ambiguities": 0, "ambiguities_suppressed": 1},
    }


# --- malformed projections ---------------------------------------------------------------


def test_a_span_outside_the_text_is_corrupt_input():
    projection = layout("Signed 2024-03-01.")
    projection.spans.append(Span(node=1, start=5, end=500, kind=SpanKind.PARAGRAPH))
    with pytest.raises(CorruptInput, match="span 1"):
        detect(projection, clarify=True)


def test_a_span_that_cuts_a_character_is_corrupt_input():
    projection = layout("é")
    projection.spans[0] = Span(node=1, start=0, end=1, kind=SpanKind.PARAGRAPH)
    with pytest.raises(CorruptInput, match="span 0"):
        detect(projection, clarify=True)
