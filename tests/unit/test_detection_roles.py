"""richdoc.detection.roles: whose date each date mention is under contracts-v2
(docs/detection.md, "contracts-v2: roles"), one phrase or place per test."""

from __future__ import annotations

import pytest

from richdoc.detection.contracts import Mention, gather
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


def head_mention(*blocks: str) -> Mention:
    """The one date mention of a document's head."""
    (mention,) = gather(layout(*blocks), every_mention=True).mentions
    return mention


@pytest.mark.parametrize(
    "preamble",
    [
        "This Agreement is entered into effective as of June 1, 1998 by Acme Corp.",
        "THIS AGREEMENT is entered into by and among ACME, INC. (the Company), Jane Roe and "
        "ROE MEDIA, INC. (Roe Media), effective as of June 1, 1998.",
        "This Supply Agreement, effective as of June 1, 1998, is made and entered into by and "
        "between Acme Corp. and Beta LLC.",
        'This Agreement is made and effective as of June 1, 1998 (the "Effective Date") by '
        "Acme Corp. and Beta LLC.",
        "This Agreement is entered into by and between Acme Corp., a corporation organized and "
        "existing under the laws of the State of Delaware with its principal place of business "
        "at 100 Main Street, Springfield, and Beta LLC, a limited liability company organized "
        "under the laws of the Federal Republic of Germany, with its registered office at "
        'Berlin, as of June 1, 1998 ("Effective Date").',
    ],
)
def test_a_preamble_that_says_when_it_is_made_and_effective_dates_both(preamble: str) -> None:
    mention = head_mention(TITLE, preamble)
    assert mention.role is Role.AGREEMENT and mention.assigned.also_effective


@pytest.mark.parametrize(
    "head",
    [
        ['This Amendment No. 2 (this "Amendment") is made effective as of December 21, 2017 '
         '("Amendment Effective Date"), by and between Acme Corp. and Beta LLC.'],
        ['This Services Agreement ("Agreement"), effective as of December 21, 2017, sets out '
         "the terms on which Acme Corp. serves Beta LLC."],
        ["DISTRIBUTOR AGREEMENT Agreement Number: N-7 Effective Date: December 21, 2017",
         "Acme Corp. and Beta LLC agree that the following terms govern their dealings."],
    ],
)  # fmt: skip
def test_a_head_that_says_only_when_it_takes_effect_states_no_making_date(
    head: list[str],
) -> None:
    mention = head_mention(TITLE, *head)
    assert mention.role is Role.EFFECTIVE and mention.assigned.head_effective


def test_outside_the_head_an_effective_date_said_with_the_making_dates_both() -> None:
    evidence = gather(
        layout(
            TITLE,
            PREAMBLE,
            RECITAL,
            'THIS MARKETING AGREEMENT (the "MA") is entered into on June 1, 1998 (the '
            '"Effective Date") by and among Acme Corp. and Beta LLC.',
        ),
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
        "This Agreement is effective on and after April 1, 2004.",
        "This Agreement shall become operative on April 1, 2004.",
        "Effective Date: April 1, 2004",
        "Commencing: April 1, 2004",
        'The Term starts on April 1, 2004 (the "Commencement Date").',
        'Delivery must occur no later than April 1, 2004 (such date, the "Effective Date").',
        '"Commencement Date" means April 1, 2004.',
        "The Commencement Date shall be April 1, 2004.",
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
        "Dated this 4th day of March, 2004.",
    ],
)
def test_a_signature_block_an_execution_clause_or_a_signing_statement_is_a_signature(
    sentence: str,
) -> None:
    assert in_body(sentence) == [Role.SIGNATURE]


@pytest.mark.parametrize(
    "sentence",
    [
        "Under the Supply Agreement the goods were listed, and this page was signed by both "
        "parties on 15 February 2024.",
        "This Addendum supplements the Endorsement Agreement and was signed by both parties on "
        "15 February 2024.",
    ],
)
def test_a_signing_statement_is_said_of_the_instrument_right_before_it_not_of_one_named_earlier(
    sentence: str,
) -> None:
    assert in_body(sentence) == [Role.SIGNATURE]


@pytest.mark.parametrize(
    "sentence",
    [
        "Acme relies on the Lease Agreement signed by Beta on 15 February 2024.",
        "The Master Services Agreement, signed by both parties on 15 February 2024, governs.",
    ],
)
def test_a_signing_statement_right_after_another_instrument_dates_that_instrument(
    sentence: str,
) -> None:
    assert in_body(sentence) == [Role.CITED]


@pytest.mark.parametrize(
    "sentence",
    [
        "The term shall commence on the tentative launch date of January 4, 1999.",
        "Acme entered into a Distributor Agreement with an Effective Date of March 1, 1996.",
    ],
)
def test_a_date_after_the_word_date_and_of_is_no_date_label(sentence: str) -> None:
    assert Role.SIGNATURE not in in_body(sentence)


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
        "Nothing herein limits the rights confirmed in the license effective April 1, 1998.",
        "Nothing in this Agreement limits the sublicense effective April 1, 1998 between them.",
        "This Addendum is enforceable under the Endorsement Agreement executed by the Parties "
        "on October 30, 2017.",
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


@pytest.mark.parametrize(
    "sentences",
    [
        # A full stop after a word in capitals ends a sentence; one after "INC." does not.
        "THE OMITTED PORTIONS ARE FILED WITH THE COMMISSION. This Agreement, dated as of "
        "June 27, 2017, is made and entered into by Acme Corp.",
        # A clause's number after a full stop begins a sentence.
        "Each original has the same effect. 14.6 This Agreement is dated April 29, 2010.",
        "The shares are held by ACME HOLDINGS INC. This Agreement is dated April 29, 2010.",
    ],
)
def test_sentences_end_where_contracts_end_them(sentences: str) -> None:
    assert in_body(sentences) == [Role.AGREEMENT]


def test_a_phase_that_commences_after_a_numbered_clause_is_not_the_agreements_start() -> None:
    sentences = (
        "The parties shall renew before the expiration of this Agreement. 3.3 Phases of "
        "Cooperation. Phase I will commence on August 1, 2010 and end on July 31, 2011."
    )
    assert in_body(sentences) == [Role.OTHER, Role.TERM]


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
