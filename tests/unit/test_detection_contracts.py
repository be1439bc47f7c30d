"""The contracts-v2 rule set's findings (docs/detection.md, "contracts-v2"), one rule per
test: conflicting dates of the document's own, effectiveness that hangs on an event, the
undated document, table rows, and the explanation."""

from __future__ import annotations

from datetime import date

import pytest

from richdoc.detection import AmbiguityKind, Detection, detect
from richdoc.detection.explain import explain
from richdoc.detection.ruleset import DetectionRules
from richdoc.graph import Projection, SpanKind
from richdoc.temporal import epoch_micros
from tests.support.detection_layout import layout

TITLE = "DISTRIBUTION AGREEMENT"
PREAMBLE = "This Agreement is made by and between Acme Corp. and Beta LLC (the Parties)."


def detected(*blocks: str) -> Detection:
    return detect(layout(*blocks), clarify=True)


def kind(*blocks: str) -> AmbiguityKind | None:
    found = detected(*blocks).ambiguities
    return found[0].kind if found else None


def labels(*blocks: str) -> list[str]:
    found = detected(*blocks).ambiguities
    return [c.label for c in found[0].candidates] if found else []


def test_contracts_v2_is_the_default_and_detection_json_names_it() -> None:
    detection = detected(TITLE, PREAMBLE)
    assert detection.rules == "contracts-v2"
    assert b'"rules": "contracts-v2"' in detection.to_json_bytes()


# --- conflicting_dates --------------------------------------------------------------------


def test_an_agreement_date_and_a_different_effective_date_conflict() -> None:
    assert labels(
        TITLE,
        "This Agreement is made and entered into as of March 3, 2010 by Acme Corp.",
        '"Effective Date" means April 1, 2010.',
    ) == ["2010-04-01 (effective date)", "2010-03-03 (agreement date)"]


def test_the_same_date_said_twice_is_no_conflict() -> None:
    assert (
        kind(
            TITLE,
            'This Agreement is entered into as of January 15, 2015 (the "Effective Date").',
            "The term of this Agreement shall commence on January 15, 2015.",
        )
        is None
    )


def test_a_preamble_made_on_one_date_to_be_effective_on_another_conflicts() -> None:
    assert labels(
        TITLE,
        "This Agreement is made and entered into this 5th day of May, 2004, to be effective as "
        'of April 1, 2004 (the "Effective Date"), by Acme Corp.',
    ) == ["2004-04-01 (effective date)", "2004-05-05 (agreement date)"]


def test_a_preamble_stating_only_when_it_takes_effect_states_the_agreements_date() -> None:
    assert labels(
        TITLE,
        'This Agreement is made effective as of April 1, 2004 (the "Effective Date") by Acme '
        "Corp. and Beta LLC.",
        "6. The Term shall commence on July 1, 2004.",
    ) == ["2004-04-01 (agreement date, effective)", "2004-07-01 (effective date)"]


def test_cited_instruments_terms_and_deadlines_never_conflict() -> None:
    assert (
        kind(
            TITLE,
            "This Agreement is entered into as of May 1, 2016 by Acme Corp. and Beta LLC.",
            "It amends that certain Supply Agreement dated January 1, 2007 (the Prior Agreement).",
            "The Term commences on the Effective Date and ends on June 30, 2019.",
            "Notice shall be given no later than March 31, 2019.",
        )
        is None
    )


def test_signature_dates_do_not_contest_a_date_the_agreement_states() -> None:
    # Signing before or after an "as of" date is ordinary: the stated date governs.
    assert (
        kind(
            TITLE,
            "This Agreement is entered into effective as of June 1, 1998 by Acme Corp.",
            "By: /s/ A Name: A Date: December 16, 1998",
            "By: /s/ B Name: B Date: December 18, 1998",
        )
        is None
    )


def test_without_a_stated_date_the_last_signature_dates_the_agreement() -> None:
    assert labels(
        TITLE,
        PREAMBLE,
        "This Agreement shall be effective as of October 1, 2020.",
        "By: /s/ A Name: A Date: October 12, 2020",
        "By: /s/ B Name: B Date: October 15, 2020",
    ) == ["2020-10-01 (effective date)", "2020-10-15 (signed)"]


@pytest.mark.parametrize(
    "preamble",
    [
        'This Services Agreement is effective as of October 1, 2020 (the "Effective Date") '
        "between Acme Corp. and Beta LLC.",
        'This Amendment No. 3 (this "Amendment") is made effective as of October 1, 2020 '
        '("Amendment Effective Date"), by and between Acme Corp. and Beta LLC.',
    ],
)
def test_a_head_that_says_only_when_it_takes_effect_leaves_its_making_to_the_signatures(
    preamble: str,
) -> None:
    assert labels(
        TITLE,
        preamble,
        "By: /s/ A Name: A Date: October 1, 2020",
        "By: /s/ B Name: B Date: October 2, 2020",
    ) == ["2020-10-01 (effective date)", "2020-10-02 (signed)"]


def test_a_head_that_says_only_when_it_takes_effect_and_signatures_of_that_day_agree() -> None:
    assert (
        kind(
            TITLE,
            "This Addendum is effective as of 19 May 2021 between Acme Ltd and Beta Ltd.",
            "Signed for Acme Ltd. Date: 19 May 2021",
            "Signed for Beta Ltd. Date: 19 May 2021",
        )
        is None
    )


def test_an_agreement_made_as_of_its_effective_date_is_dated_by_that_definition() -> None:
    assert (
        kind(
            TITLE,
            'This Supply Agreement (this "Agreement") is entered into as of the Effective Date '
            "(as defined below) by and between Acme Corp. and Beta LLC.",
            "RECITALS",
            '1.1 "Effective Date" shall mean December 5, 2014.',
            "By: /s/ A Date: December 9, 2014",
            "By: /s/ B Date: December 11, 2014",
        )
        is None
    )


def test_two_signature_dates_alone_are_no_conflict() -> None:
    assert kind(TITLE, PREAMBLE, "By: /s/ A Date: 1/26/2020", "By: /s/ B Date: 1/27/2020") is None


def test_effectiveness_on_the_last_signature_is_dated_by_the_signatures() -> None:
    blocks = [
        "May 3, 2016 LICENSE AGREEMENT",
        "This License Agreement is entered into by and between JHU and Virtuoso Inc.",
        '"EFFECTIVE DATE" shall mean the date the last party hereto has executed this Agreement.',
        "IN WITNESS WHEREOF the parties have executed this Agreement. Date: May 11, 2016",
        "Date: May 4, 2016",
    ]
    assert labels(*blocks) == [
        "2016-05-11 (effective date: the last signature)",
        "2016-05-03 (agreement date)",
    ]


def test_a_slash_date_read_by_an_unproven_convention_says_its_other_reading() -> None:
    assert labels(
        "CONTRACT",
        "This contract is made on 5/4/2016 between Acme Corp. and Beta LLC (the Parties).",
        "The term of this contract shall commence on 6/1/2016.",
    ) == [
        "2016-06-01 (effective date; 6/1/2016 could be 2016-01-06)",
        "2016-05-04 (agreement date; 5/4/2016 could be 2016-04-05)",
    ]


def test_a_day_over_twelve_proves_the_documents_slash_dates_day_first() -> None:
    assert labels(
        "CONTRACT",
        "This contract is made on 13/07/2005 between Acme Corp. and Beta LLC (the Parties).",
        "The term of this contract shall commence on 01/08/2005.",
    ) == ["2005-08-01 (effective date)", "2005-07-13 (agreement date)"]


def test_a_filing_stamps_slash_date_proves_nothing() -> None:
    assert labels(
        "CONTRACT",
        "This contract is made on 5/4/2016 between Acme Corp. and Beta LLC (the Parties).",
        "Source: ACME CORP, 10-Q, 11/14/2019",
        "The term of this contract shall commence on 6/1/2016.",
    )[0].endswith("could be 2016-01-06)")


def test_the_candidates_point_at_the_blocks_of_their_evidence() -> None:
    (ambiguity,) = detected(
        TITLE,
        "This Agreement is dated as of March 3, 2010 by Acme Corp.",
        '"Effective Date" means April 1, 2010.',
    ).ambiguities
    assert [(c.spanRef, c.validFrom) for c in ambiguity.candidates] == [
        (2, epoch_micros(date(2010, 4, 1))),
        (1, epoch_micros(date(2010, 3, 3))),
    ]
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.7, 0.55)


def table(*rows: str) -> Projection:
    projection = layout(*rows)
    spans = [span.model_copy(update={"kind": SpanKind.TABLE_ROW}) for span in projection.spans]
    return projection.model_copy(update={"spans": spans})


def test_dates_of_two_table_rows_never_pair() -> None:
    # Two suppliers' contracts, one row each: not one document's dates.
    sheet = table(
        "Supplier: Acme | Contract signed: 2024-03-01 | Effective: 2024-03-01",
        "Supplier: Beta | Contract signed: 2024-03-15 | Effective: 2024-03-15",
    )
    assert detect(sheet, clarify=True).ambiguities == []
    spec = detect(sheet, clarify=True, rules=DetectionRules.SPEC_V1).ambiguities
    assert [a.kind for a in spec] == [AmbiguityKind.CONFLICTING_DATES]


def test_dates_of_one_table_row_may_conflict() -> None:
    sheet = table("Supplier: Beta | Contract signed: 2024-03-15 | Effective: 2024-04-01")
    (ambiguity,) = detect(sheet, clarify=True).ambiguities
    assert [c.label for c in ambiguity.candidates] == [
        "2024-04-01 (effective date)",
        "2024-03-15 (signed)",
    ]


# --- relative_date: effectiveness that hangs on an event ----------------------------------


def test_an_event_no_date_settles_is_a_relative_date_without_an_interval() -> None:
    (ambiguity,) = detected(
        TITLE,
        "This Agreement is entered into as of May 1, 2016 by Acme Corp. and Beta LLC.",
        "This Agreement shall become effective upon the Closing.",
    ).ambiguities
    assert ambiguity.kind is AmbiguityKind.RELATIVE_DATE
    (candidate,) = ambiguity.candidates
    assert candidate.label == (
        "This Agreement shall become effective upon the Closing (no date for the event in document)"
    )
    assert (candidate.spanRef, candidate.validFrom) == (2, None)
    assert (ambiguity.detectorConfidence, ambiguity.appliedCandidateConfidence) == (0.85, 0.0)


def test_every_way_of_tying_effectiveness_to_an_event() -> None:
    for clause in [
        '"Effective Date" means the date of actual execution of this Contract by the Parties.',
        "This Agreement will become effective on the date a fully executed copy is received by "
        "Nationwide.",
        "The term of this Agreement shall be ten years, which shall commence on the date upon "
        "which the Company delivers the last Sample.",
        "This Agreement shall become effective when it shall have been executed by all parties.",
        "This Agreement is effective as of the last date signed below.",
        "This Agreement takes effect upon its approval by the Board.",
    ]:
        assert kind(TITLE, PREAMBLE, clause) is AmbiguityKind.RELATIVE_DATE, clause


def test_an_event_in_another_clause_is_not_the_agreements_effectiveness() -> None:
    for clause in [
        "Any notice shall be effective upon receipt by the addressee.",
        "Delivery of an executed counterpart by e-mail shall be effective as delivery of a "
        "manually executed counterpart.",
        "Acme may terminate this Agreement effective upon written notice to Beta.",
        "The date first above written is the date of this Agreement.",
    ]:
        assert kind(TITLE, PREAMBLE, clause) is not AmbiguityKind.RELATIVE_DATE, clause


def test_a_written_effective_date_comes_before_an_event_clause() -> None:
    assert (
        kind(
            TITLE,
            'This Agreement is entered into as of May 1, 2016 (the "Effective Date") by Acme.',
            "This Agreement shall become effective upon the Closing.",
        )
        is None
    )


def test_an_effective_date_written_in_a_field_of_the_document_is_no_event() -> None:
    # The document defines its Effective Date as the date a field of its own holds: the
    # event clause is the condition under which that date is written. A form leaves the
    # field blank, and is undated; a filled one states its effective date.
    for definition in [
        'THIS FRANCHISE AGREEMENT is made and entered into as of the "Effective Date" that we '
        "have indicated on the signature page of this Agreement by and between Acme and Beta.",
        '"Effective Date" means the date set forth on the cover page of this Agreement.',
        "This Agreement is entered into as of the Effective Date as stated on the signature page.",
    ]:
        blocks = [
            TITLE,
            definition,
            "This Agreement takes effect when we accept and sign this document. It is governed "
            "by the laws of the State of Texas, without regard to its conflict of laws rules.",
            "By: ______ Name: ______ Title: ______ Effective Date: ______",
        ]
        assert kind(*blocks) is AmbiguityKind.UNDATED, definition
        filled = [*blocks[:3], "By: /s/ A Name: A Title: CEO Effective Date: March 5, 2018"]
        assert kind(*filled) is None, definition


def test_an_event_dated_on_the_signature_page_is_still_an_event() -> None:
    # "set forth on the signature page" said of the execution, not of an Effective Date
    # field: the effectiveness hangs on the last execution.
    assert (
        kind(
            TITLE,
            PREAMBLE,
            "This Agreement shall become effective on the last date of execution set forth on "
            'the signature page (the "Effective Date").',
        )
        is AmbiguityKind.RELATIVE_DATE
    )


def test_one_partys_signature_anchors_to_the_signature_dates_when_they_differ() -> None:
    (ambiguity,) = detected(
        "Date: March 1, 1998",
        PREAMBLE,
        'This Agreement shall be effective on the date of signed acceptance ("Effective Date") '
        "by MMMW.",
        "By: /s/ Gail Knopf By: /s/ Tom Liddell Date: March 4, 1998 Date: 3-5-98",
    ).ambiguities
    assert ambiguity.kind is AmbiguityKind.RELATIVE_DATE
    assert [c.label for c in ambiguity.candidates][:2] == [
        "1998-03-04 (signed)",
        "1998-03-05 (signed; 3-5-98 could be 1998-05-03)",
    ]
    assert ambiguity.candidates[2].validFrom is None  # the clause itself
    assert ambiguity.appliedCandidateConfidence == 0.5


def test_a_signing_event_the_signatures_date_is_settled() -> None:
    assert (
        kind(
            TITLE,
            PREAMBLE,
            "This Agreement shall become effective upon execution by both parties.",
            "By: /s/ A Date: 3/15/2011",
            "By: /s/ B Date: 3/20/2011",
        )
        is None
    )


def test_the_date_an_agreement_states_of_its_making_dates_its_execution() -> None:
    # An agreement is made when it is executed: "made this ..." dates "upon execution".
    for clause in [
        "This Agreement shall become effective upon its execution by both parties.",
        "This Agreement will become effective as of the last date of signature (Effective Date).",
        "This Agreement shall become effective when each party hereto shall have received a "
        "counterpart hereof signed by the other parties hereto.",
    ]:
        blocks = [TITLE, "This Agreement is made this 22nd day of September, 2008 by Acme."]
        assert kind(*blocks, clause) is None, clause
        assert kind(TITLE, PREAMBLE, clause) is AmbiguityKind.RELATIVE_DATE, clause


def test_the_actual_execution_is_not_dated_by_the_date_the_agreement_states() -> None:
    assert (
        kind(
            "Astana January 31, 2000",
            PREAMBLE,
            '"Effective Date" means the date of actual execution of this Contract by the Parties.',
        )
        is AmbiguityKind.RELATIVE_DATE
    )


def test_the_month_following_the_execution_is_read_from_the_last_signature() -> None:
    assert labels(
        TITLE,
        PREAMBLE,
        "This Agreement shall commence on the first day of the calendar month following its "
        "execution by both parties.",
        "By: /s/ A Date: 9/18/2013",
        "By: /s/ B Date: 9/24/2013",
    ) == ["2013-10-01 (start of next month after 2013-09-24)", "2013-09-24 (signed)"]


def test_an_agreement_that_commences_on_an_event() -> None:
    clause = "This Agreement shall commence on the date the Company first delivers Products."
    assert kind(TITLE, PREAMBLE, clause) is AmbiguityKind.RELATIVE_DATE


def test_a_commencement_date_defined_elsewhere_is_the_effective_date() -> None:
    assert labels(
        TITLE,
        'This Agreement (the "Agreement"), dated as of March 15, 2016, is between Acme and Beta.',
        '"Commencement Date" means June 1, 2016.',
        "This Agreement will take effect on the Commencement Date.",
    ) == ["2016-06-01 (effective date)", "2016-03-15 (agreement date)"]


def test_the_next_quarter_is_read_from_the_agreements_own_date() -> None:
    assert labels(
        "Travel policy update",
        "Published 10 May 2024 by the finance team.",
        "The new rules are effective the following quarter, once budgets are approved.",
    ) == ["2024-07-01 (start of next quarter after 2024-05-10)", "2024-05-10 (agreement date)"]


# --- undated ---------------------------------------------------------------------------------


def test_a_text_with_no_date_is_undated() -> None:
    assert kind("Notes " * 40) is AmbiguityKind.UNDATED


def test_a_numeric_filing_stamp_alone_leaves_a_document_undated() -> None:
    assert kind("Notes " * 40, "Source: ACME CORP, 10-Q, 11/14/2019") is AmbiguityKind.UNDATED


def test_any_other_date_dates_the_document() -> None:
    assert kind("Notes " * 40, "The old agreement dated 3 March 2001 is void.") is None


# --- explain ---------------------------------------------------------------------------------


def test_the_explanation_lists_every_date_with_its_form_role_why_and_whether_it_was_kept() -> None:
    projection = layout(
        TITLE,
        "This Agreement is dated as of March 3, 2010 by Acme Corp.",
        '"Effective Date" means April 1, 2010.',
        "The Term ends on 3/31/2012.",
    )
    explained = explain(projection, DetectionRules.CONTRACTS_V2)
    assert explained.fired == ["conflicting_dates"]
    assert [(m.written, m.form, m.role, m.kept) for m in explained.mentions] == [
        ("March 3, 2010", "month day, year", "agreement date", True),
        ("April 1, 2010", "month day, year", "effective date", True),
        ("3/31/2012", "numeric m/d/y", "term or deadline", False),
    ]
    assert explained.mentions[1].why == 'definition “"Effective Date" means”'


def test_the_explanation_names_the_event_clauses() -> None:
    projection = layout(TITLE, PREAMBLE, "This Agreement shall become effective upon the Closing.")
    (event,) = explain(projection, DetectionRules.CONTRACTS_V2).events
    assert (event.span_ref, event.event) == (2, "an event")


def test_spec_v1_is_explained_by_its_own_rules() -> None:
    projection = layout("Signed 2024-03-01.", "Effective 2024-04-01.")
    explained = explain(projection, DetectionRules.SPEC_V1)
    assert explained.rules == "spec-v1" and explained.events == []
    assert [(m.written, m.role, m.kept) for m in explained.mentions] == [
        ("2024-03-01", "signed", True),
        ("2024-04-01", "effective", True),
    ]
