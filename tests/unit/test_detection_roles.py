"""richdoc.detection.roles: whose date each date mention is under contracts-v2
(docs/detection.md, "contracts-v2: roles"), one phrase or place per test."""

from __future__ import annotations

import pytest

from richdoc.detection.contracts import gather
from richdoc.detection.roles import Role
from tests.support.detection_layout import layout

TITLE = "SUPPLY AGREEMENT"
PREAMBLE = "This Supply Agreement is made by and between Acme Corp. and Beta LLC (the Parties)."
RECITAL = "WHEREAS, the Parties wish to agree on the supply of goods."


def roles(*blocks: str) -> list[tuple[str, Role]]:
    """(the date as written, its role) for every date of the blocks."""
    evidence = gather(layout(*blocks), every_mention=True)
    return [(m.written, m.role) for m in evidence.mentions]


def in_body(sentence: str) -> list[Role]:
    """The roles of the dates of ``sentence``, standing after a preamble and a recital."""
    evidence = gather(layout(TITLE, PREAMBLE, RECITAL, sentence), every_mention=True)
    return [m.role for m in evidence.mentions if m.span_ref == 3]


# --- the document's own date --------------------------------------------------------------


@pytest.mark.parametrize(
    "preamble",
    [
        "THIS AGREEMENT is made and entered into as of March 1, 2004, by Acme Corp. and Beta LLC.",
        "This Agreement is entered into on March 1, 2004 by Acme Corp. and Beta LLC.",
        "This Lease is made this 1st day of March, 2004, between Acme Corp. and Beta LLC.",
        "This Agreement is dated March 1, 2004 and made between Acme Corp. and Beta LLC.",
        'THIS AMENDMENT (this "Amendment") is made as of March 1, 2004 by Acme Corp.',
    ],
)
def test_the_preamble_dates_the_agreement(preamble: str) -> None:
    assert roles(TITLE, preamble) == [(roles(TITLE, preamble)[0][0], Role.AGREEMENT)]


@pytest.mark.parametrize(
    "title", ["LICENSE AGREEMENT dated as of 1 March 2004", "March 1, 2004", "Date: March 1, 2004"]
)
def test_the_title_block_and_a_date_line_date_the_agreement(title: str) -> None:
    assert [role for _, role in roles(title, PREAMBLE)] == [Role.AGREEMENT]


def test_a_letters_date_line_dates_it() -> None:
    letter = ["Acme Corp.", "June 1, 2012", "Dear Mr. Brown:", "We agree as follows."]
    assert roles(*letter) == [("June 1, 2012", Role.AGREEMENT)]


def test_a_preamble_that_says_effective_dates_the_agreement_and_its_effect() -> None:
    evidence = gather(
        layout(TITLE, "This Agreement is entered into effective as of June 1, 1998 by Acme."),
        every_mention=True,
    )
    (mention,) = evidence.mentions
    assert mention.role is Role.AGREEMENT and mention.assigned.also_effective


# --- the effective date -------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        '"Effective Date" means April 1, 2004.',
        "The Effective Date shall be April 1, 2004.",
        "The effective date of this Agreement is April 1, 2004.",
        "This Agreement shall be effective as of April 1, 2004.",
        "This Agreement shall be effective retroactively to April 1, 2004.",
        "This Agreement is made with retroactive effect from April 1, 2004.",
        "This Agreement shall commence on April 1, 2004.",
        "The Term shall begin on April 1, 2004.",
        "The term of this Agreement for the Site shall commence upon April 1, 2004.",
        "This Agreement comes into force on 1 April 2004.",
        "This Agreement takes effect on April 1, 2004.",
        "This Agreement is valid for three years from April 1, 2004.",
        "The term of this Agreement shall be for a period of five (5) years commencing on "
        "April 1, 2004.",
        "The term of this Agreement shall be one (1) year commencing on April 1, 2004.",
        "The Term shall be thirty-six months beginning April 1, 2004.",
        "This Agreement shall be effective for the period from April 1, 2004 to its end.",
        "This Agreement shall be in effect as of April 1, 2004.",
        "This Agreement shall become operative on April 1, 2004.",
        "Effective Date: April 1, 2004",
        "Commencing: April 1, 2004",
        'The Term starts on April 1, 2004 (the "Commencement Date").',
        'Delivery must occur no later than April 1, 2004 (such date, the "Effective Date").',
    ],
)
def test_a_written_effective_date(sentence: str) -> None:
    assert in_body(sentence) == [Role.EFFECTIVE]


@pytest.mark.parametrize(
    "sentence",
    [
        "The services will begin on April 1, 2004.",
        "The second year of this Agreement starts April 1, 2005.",
        "Beginning April 1, 2005, the Supplier shall invoice monthly.",
        "The price list effective as of April 1, 2005 applies.",
        "The Executive's employment commenced on June 1, 2001.",
        "The Term and the royalty period commencing on April 1, 2004 are one.",
        "This Agreement and the payments for the first year shall commence on April 1, 2004.",
        "The prices in effect on April 1, 2004 apply.",
    ],
)
def test_effectiveness_of_something_else_is_not_the_agreements(sentence: str) -> None:
    assert in_body(sentence) == [Role.OTHER]


# --- signatures ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "IN WITNESS WHEREOF, the parties have executed this Agreement as of March 3, 2004.",
        "By: /s/ John Smith Name: John Smith Title: CEO Date: March 4, 2004",
        "Date Signed: NOVEMBER 5, 1997",
        "Dated: July 6, 2020",
        "AGREED AND ACCEPTED as of March 5, 2004",
        "It was signed on 15 February 2024 by both parties.",
        "Signed by both parties on 15 February 2024.",
        "By Newegg Legal at 11:40 am, Feb 25, 2019",
        "Signature: ________ Date: 3/4/04",
    ],
)
def test_a_signature_block_an_execution_clause_or_a_signing_statement_is_a_signature(
    sentence: str,
) -> None:
    assert in_body(sentence) == [Role.SIGNATURE]


def test_a_bare_date_in_a_signature_block_is_a_signature() -> None:
    block = "IN WITNESS WHEREOF the parties sign below. /s/ Yannick Tessier 9/9/97 Date"
    assert in_body(block) == [Role.SIGNATURE]


# --- not the document's ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "The parties are parties to that certain Services Agreement dated as of January 1, 2004.",
        "pursuant to the Credit Agreement, dated as of January 1, 2004, among the Lenders",
        "under the Manufacturing Agreement, effective September 30, 2011, as amended",
        "the letter agreement dated October 7, 2013 between the Bank and the Agent",
        'the Plasma Agreement dated January 20, 2009 (the "Plasma Supply Agreement")',
        "acting on the Power of Attorney dated January 3, 2000",
        "the Schedule 13G/A, dated as of December 31, 2019",
        "the Manufacturing and Supply Agreement dated as of December 8, 2009",
        "as amended by an amendment agreement dated 31 December 2013",
    ],
)
def test_a_cited_instruments_date_is_not_the_documents(sentence: str) -> None:
    assert in_body(sentence) == [Role.CITED]


@pytest.mark.parametrize(
    "sentence",
    [
        "The Term commences on the Effective Date and ends on June 30, 2007.",
        "This Agreement shall remain in effect until December 31, 2006.",
        "Payment is due no later than March 31, 2005.",
        "The report is due on or before March 31, 2005.",
        "Licensee shall pay within thirty days after January 1, 2006.",
        'This Agreement shall continue until June 27, 2011 (the "Term").',
        "Expiration Date: June 30, 2010",
    ],
)
def test_ends_and_deadlines_are_not_the_documents_effectiveness(sentence: str) -> None:
    assert in_body(sentence) == [Role.TERM]


def test_a_defined_term_shields_the_dates_after_it() -> None:
    sentence = "The Term shall commence on the Effective Date and end on June 30, 2007."
    assert in_body(sentence) == [Role.TERM]


def test_a_filing_services_page_stamp_is_a_stamp() -> None:
    assert in_body("Source: ACME CORP, 10-Q, November 14, 2019") == [Role.STAMP]


def test_a_record_date_is_no_making() -> None:
    sentence = 'to depositors as of March 31, 2008 ("Eligible Account Holders") of the Bank'
    assert in_body(sentence) == [Role.OTHER]


def test_a_date_in_a_list_takes_the_role_of_the_one_before() -> None:
    sentence = "The Term ends on June 30, 2007, December 31, 2007 or March 31, 2008."
    assert in_body(sentence) == [Role.TERM] * 3


def test_a_range_has_a_start_and_an_end() -> None:
    sentence = "The term of this Lease shall be from March 1 to June 30, 2001."
    assert in_body(sentence) == [Role.EFFECTIVE, Role.TERM]


def test_each_mention_says_why_it_has_its_role() -> None:
    evidence = gather(
        layout(TITLE, PREAMBLE, RECITAL, "This Agreement shall commence on April 1, 2004."),
        every_mention=True,
    )
    (mention,) = evidence.mentions
    assert mention.assigned.why == "“commence on”, said of this agreement or its term"
