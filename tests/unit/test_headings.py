"""Heading levels where the layout model gives none (``richdoc.parse.headings``): numbering
and type size decide, over the whole document, deterministically."""

from __future__ import annotations

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument, SectionHeaderItem
from hypothesis import given
from hypothesis import strategies as st

from richdoc.markdown import render_markdown
from richdoc.parse.headings import (
    ALPHA_LOWER,
    ARABIC,
    ARTICLE,
    ROMAN_LOWER,
    ROMAN_UPPER,
    SECTION,
    Marker,
    assign_levels,
    heading_levels,
    marker_of,
    record_size,
    size_of,
)


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("ARTICLE IV DEFINITIONS", Marker(ARTICLE)),
        ("Section 2.3 Payment", Marker(SECTION, depth=2)),
        ("§ 4 Scope", Marker(SECTION)),
        ("1. Scope", Marker(ARABIC)),
        ("(1) 개정", Marker(ARABIC)),
        ("1.1 Loading bays", Marker(ARABIC, depth=2)),
        ("2.3.4. Interest", Marker(ARABIC, depth=3)),
        ("IV. Findings", Marker(ROMAN_UPPER)),
        ("(a) the Supplier", Marker(ALPHA_LOWER)),
        ("(iv) notices", Marker(ROMAN_LOWER)),
        ("Definitions", None),
        ("Summary.", None),
        ("2025 in review", None),  # a bare number: judged over the document
    ],
)
def test_the_numbering_a_heading_starts_with(text, marker):
    assert marker_of(text) == marker


def test_numbering_ranks_article_over_section_and_one_over_one_point_one():
    levels = heading_levels(
        [
            ("ARTICLE I DEFINITIONS", 12.0),
            ("Section 1.01 Terms", 12.0),
            ("Section 1.02 Notices", 12.1),
            ("ARTICLE II TERM", 12.0),
            ("1. Scope", None),
            ("1.1 Detail", None),
        ]
    )
    assert levels == [1, 2, 2, 1, 3, 4]


def test_a_larger_type_is_a_higher_level_and_unnumbered_headings_join_their_size():
    levels = heading_levels(
        [
            ("Field Report", 18.0),
            ("1. Scope", 14.0),
            ("1.1 Loading bays", 12.0),
            ("Appendix notes", 14.0),  # no marker: the level of the "N." headings beside it
            ("2. Findings", 14.2),  # within the size tolerance of 14
        ]
    )
    assert levels == [1, 2, 3, 2, 2]


def test_bare_numbers_count_only_as_a_sequence_from_one():
    assert heading_levels([("1 Introduction", 12.0), ("2 Methods", 12.0)]) == [1, 1]
    assert heading_levels([("2025 in review", 14.0), ("Outlook", 12.0)]) == [1, 2]


def test_a_single_letter_is_roman_or_a_letter_as_the_document_s_other_markers_are():
    assert heading_levels([("I. Scope", None), ("A. Parties", None), ("II. Terms", None)]) == [
        1,
        2,
        1,
    ]
    assert heading_levels([("V. Five", None), ("VI. Six", None)]) == [1, 1]  # Roman both
    assert heading_levels([("A. Parties", None), ("B. Terms", None), ("C. Costs", None)]) == [
        1,
        1,
        1,
    ]
    # the evidence conflicts (a letter and a Roman numeral): "C." is a letter, "I." Roman
    assert heading_levels([("A. x", None), ("C. y", None), ("II. z", None)]) == [2, 2, 1]


def test_a_heading_with_neither_numbering_nor_size_keeps_its_level():
    assert heading_levels([("Preamble", None)]) == [None]


def _document(headings: list[tuple[str, list[float]]]) -> DoclingDocument:
    doc = DoclingDocument(name="levels")
    for text, heights in headings:
        item = doc.add_heading(text)
        record_size(item, heights)
        doc.add_text(DocItemLabel.TEXT, f"Text under {text}.")
    return doc


def test_assign_levels_sets_every_heading_of_the_document_from_its_recorded_size():
    doc = _document([("Report", [18.0]), ("1. Scope", [14.0, 14.2]), ("1.1 Bays", [12.0])])
    assign_levels(doc)
    found = [(h.text, h.level, size_of(h)) for h in doc.texts if isinstance(h, SectionHeaderItem)]
    assert found == [("Report", 1, 18.0), ("1. Scope", 2, 14.1), ("1.1 Bays", 3, 12.0)]
    # the recorded size is provenance, not text: the Markdown shows the levels only
    markdown = render_markdown(doc).decode()
    assert "size" not in markdown
    assert [line for line in markdown.splitlines() if line.startswith("#")] == [
        "## Report",
        "### 1. Scope",
        "#### 1.1 Bays",
    ]


_headings = st.lists(
    st.tuples(
        st.sampled_from(["1. A", "1.1 B", "Article I", "Section 2.3", "(a) c", "Plain", "IV. D"]),
        st.none() | st.sampled_from([9.0, 10.0, 12.0, 14.0, 18.0]),
    ),
    max_size=12,
)


@given(_headings)
def test_levels_are_consecutive_from_one_and_depend_only_on_the_headings(headings):
    levels = heading_levels(headings)
    assert levels == heading_levels(list(headings))
    used = sorted({level for level in levels if level is not None})
    assert used == list(range(1, len(used) + 1))
