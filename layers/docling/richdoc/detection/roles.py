"""Whose date each date mention is (the ``contracts-v2`` rule set; docs/detection.md,
"contracts-v2: roles").

A mention's role comes from what governs it, read in this order:

1. a stamp: a filing service's footer (``Source: ..., 10-Q, 11/14/2019``), a court's
   (``Filed 04/18/18``), a revision mark (``Rev. 12/13/99``);
2. a definition right after it: ``(the "Effective Date")``, ``("Execution Date")``, or
   a name of something else (``(the "Term")``, ``(the "Plasma Supply Agreement")``);
3. the phrase right before it (the last words between the previous date or the start of
   the block and this date): a label (``Effective Date:``, ``Date:``), an effectiveness
   or commencement clause, the making of an instrument (``made``, ``entered into``,
   ``dated``) with the instrument it is said of, an end or a deadline (``ending on``,
   ``until``, ``no later than``), an acceptance or an e-signature stamp;
4. where it stands, when no phrase governs it: in the document's head (the title block, a
   letter's date line) it is the agreement's date, in a signature block it is a
   signature's, in a list it takes the role of the date before it.

Whose instrument a making phrase speaks of decides between the document's own date and a
cited one: ``This Agreement is dated ...``, ``THIS AMENDMENT (this "Amendment") is made
...``, the head's title (``AGENCY AGREEMENT dated ...``) are the document's; ``that certain
Services Agreement dated ...``, ``the Manufacturing Agreement, effective ...``, ``a letter
dated ...`` are another instrument's. An effectiveness or commencement phrase counts only
when this agreement or its term is its subject (``the Term shall commence on``, not ``the
second year of this Agreement starts`` nor ``payments beginning on``). A phrase reaches
only the date right after it: a date shields the ones after it, so a defined term's later
use (``commencing on the Effective Date and ending on June 30, 2007``) gives the end date
no effective role.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import NamedTuple

from richdoc.detection import trie
from richdoc.detection.phrases import Kind, Phrase, read


class Role(StrEnum):
    AGREEMENT = "agreement date"  # the document's own date
    EFFECTIVE = "effective date"  # when the document takes effect
    SIGNATURE = "signed"  # a party's signature, an execution statement
    CITED = "cited instrument"  # another instrument's date
    TERM = "term or deadline"  # an end, a deadline, a payment or notice date
    STAMP = "stamp"  # a filing service's or a court's page stamp
    OTHER = "other"

    @property
    def own(self) -> bool:
        """The document's own dates: what conflicts are made of."""
        return self in OWN_ROLES


OWN_ROLES = frozenset({Role.AGREEMENT, Role.EFFECTIVE, Role.SIGNATURE})


class Reason(StrEnum):
    """Why a mention has its role; ``{said}`` stands for the words that gave it."""

    STAMP = "a filing or page stamp"
    DEFINED = "defined as “{said}”"
    DEFINED_SELF = "defined as “{said}”: the document names itself"
    LIST = "in a list after a date of that role"
    HEAD = "stands alone in the document's head (title block, date line)"
    SIGNATURES = "stands in a signature block"
    NOTHING = "no phrase or place gives it a role"
    LABEL = "label “{said}”"
    LABEL_IN_HEAD = "label “{said}” in the document's head"
    ESIGN = "e-signature stamp “{said}”"
    ACCEPTANCE = "acceptance “{said}”"
    END = "end or deadline “{said}”"
    PLAIN = "“{said}”: a date of something else"
    OTHER_EFFECTIVE_DATE = "“{said}”: another event's effective date"
    DEFINITION = "definition “{said}”"
    EXECUTION = "execution statement “{said}”"
    OWN_EFFECTIVE = "“{said}”, said of this agreement or its term"
    CITED = "“{said}”, said of another instrument"
    SOMETHING_ELSE = "“{said}”, said of something else"
    OWN_MADE = "“{said}”, said of this document"
    MADE_IN_HEAD = "“{said}” in the document's head"
    SIGNING = "signing statement “{said}”"


class Assigned(NamedTuple):
    role: Role
    reason: Reason
    said: str = ""  # the words that gave the role, as written
    # The agreement's own date that the document also calls its effective date ("THIS
    # AGREEMENT, effective as of ...", a preamble date defined as the "Effective Date").
    also_effective: bool = False
    # Given by a weak clue (a self-definition, another term's name): phrases come first.
    weak: bool = False

    @property
    def why(self) -> str:
        """Which phrase or position gave the role, for --explain."""
        why = self.reason.value.replace("{said}", " ".join(self.said.split()))
        return why + ", in the document's head" if self.also_effective else why


class Place(NamedTuple):
    """Where a mention stands in the document."""

    in_head: bool  # before the end of the preamble (title block, date line, preamble)
    in_signatures: bool  # in a signature block


# How much text before a date its governing phrase is looked for in (characters), and
# after it for a definition.
BEFORE = 240
AFTER = 120

_SP = r"\s+"
#: The nouns that name an instrument (each also plural). Words that also mean something
#: else next to a date ("terms", "order", "notice", "policy") are not among them.
INSTRUMENTS = (
    "agreement", "amendment", "contract", "addendum", "lease", "license", "licence", "exhibit",
    "schedule", "annex", "appendix", "memorandum", "letter", "deed", "plan", "indenture", "note",
    "certificate", "prospectus", "supplement", "statement of work", "power of attorney",
    "declaration of trust", "charter", "bylaws", "instrument", "guaranty", "guarantee", "mou",
    "sow", "protocol", "warrant", "purchase order", "invoice", "rider", "joinder",
)  # fmt: skip
_INSTRUMENT = "(?:" + trie.pattern(trie.literal(noun) for noun in INSTRUMENTS) + ")s?"

_STAMP = re.compile(
    r"(?ai:source:[^\n]{1,160}?,\s*|\bfiled\s+|\brev(?:ised|ision|\.)?\s*:?\s*|"
    r"\bprinted\s*:?\s*|\bpage\s+\d+\s+of\s+\d+\s*)\Z"
)

# A definition right after a date: ("Effective Date"), (the "Term"), (such date, the
# "Effective Date"), ("Amendment Effective Date". Quotes straight or curly, or none at
# all where text extraction lost them: (the Effective Date).
_DEFINITION = re.compile(
    r"[\s,]*\(\s*(?P<det>(?ai:the|this|such\s+date,?\s+the|hereinafter(?:\s+(?:referred\s+to\s+as"
    r"|called))?(?:\s+the)?|each\s+(?:a|an)|collectively,?\s+the)\s+)?(?P<quote>[\"“”'‘’]+)?"
    r"(?P<name>[^\"“”'‘’()]{1,60}?)[\"“”'‘’]*\s*(?:\)|,|;|\Z)"
)
# A name in a definition without quotes (text extraction loses them): a Title Case term.
_TITLE_CASE = re.compile(r"\A(?:[A-Z][\w#-]*\s+){0,4}[A-Z][\w#-]*\Z")
_OWN_NAME = re.compile(rf"\A(?ai:{_INSTRUMENT})\Z")
_DEFINED_EFFECTIVE = re.compile(r"(?ai:effective\s+date|commencement\s+date|start\s+date)")
_DEFINED_AGREEMENT = re.compile(
    r"(?ai:\b(?:execution|agreement|signing|contract)\s+date\b|\bdate\s+hereof\b)"
)
_DEFINED_INSTRUMENT = re.compile(rf"(?ai:\b{_INSTRUMENT}\b)")
_DEFINED_TERM = re.compile(r"(?ai:\bterm\b|terminat|expir|\bend\b|period|deadline)")

# A date written right after the previous one, in a list ("March 31, June 30 or ...").
_LIST_JOIN = re.compile(r"(?ai:[\s,;]*(?:and|or|&)?[\s,;]*\Z)")

# The sentence a phrase is in: from the last sentence end before it (". " before a capital,
# ";" or a line break) to the phrase.
_ABBREVIATIONS = ("No", "Nos", "Inc", "Co", "Corp", "Ltd", "St", "Dr", "Mr", "Ms", "vs", "Sec")
SENTENCE_END = re.compile(
    r"(?:(?<![A-Z])"
    + "".join(rf"(?<!\b{word})" for word in _ABBREVIATIONS)
    + r"\.\s+(?=[A-Z(\"“])|;\s|\n)"
)
_WITNESS = re.compile(r"(?ai:in\s+witness\s+(?:whereof|hereof)|witnesseth)")
# The last instrument named before a phrase, with the word that determines it.
_INSTRUMENT_REF = re.compile(
    r"(?:\b(?P<det>(?ai:this|that\s+certain|the|a|an|said|such|any|each|its|their|prior|existing"
    r"|original|certain|which|our|your))\s+(?:[a-z][\w-]*\s+){0,2}?)?"
    r"(?P<name>(?:(?:[A-Z0-9#][\w#.&'’/-]*|and|of|for|&)\s+){0,6})"
    rf"(?P<noun>(?ai:{_INSTRUMENT}))\b"
)
# "this Agreement as of", "THIS AGREEMENT (the "Agreement") is made as of": the instrument
# right before the phrase, with a definition or a verb between at most.
_RIGHT_AFTER_INSTRUMENT = re.compile(
    rf"(?ai:\b{_INSTRUMENT}\b\s*(?:\([^)]{{0,60}}\)\s*)?,?\s*(?:(?:is|was|has\s+been|shall\s+be|be)\s+)?"
    r"(?:(?:made|entered\s+into|executed|dated|effective)\s+)?\Z)"
)
_IDENTIFIED = re.compile(
    r"\s*(?:(?ai:no\.?|number|#)\s*)?[0-9][\w/.-]*|\s+[0-9A-Z][0-9A-Z/.-]*[0-9]"
)
_SIGNING_VERBS = frozenset({"signed", "executed", "countersigned"})
_AMENDED = re.compile(r"(?ai:amended|restated|supplemented)")
_NOUN = re.compile(rf"\b(?ai:{_INSTRUMENT})\b")
NAME_REACH = 100  # characters before an instrument's noun where its name and determiner stand
# The nouns a document calls itself by, defined ("the Agreement"): not "the Power of Attorney".
_BARE_OWN = re.compile(r"(?ai:agreement|contract|amendment|addendum|lease|licen[cs]e)s?\Z")
_OWN_INSTRUMENT_AFTER = re.compile(
    r"(?ai:\A[^.;]{0,40}?\b(?:hereby|herein|hereto|hereof|hereunder)\b)"
)
_CITED_DETERMINERS = frozenset(
    {
        "that certain",
        "a",
        "an",
        "said",
        "such",
        "any",
        "each",
        "its",
        "their",
        "prior",
        "existing",
        "original",
        "certain",
        "which",
        "our",
        "your",
    }
)
# What a commencement or effectiveness clause must be about: this agreement or its term.
_OWN_NOUNS = r"(?ai:agreement|contract|amendment|addendum|lease|licen[cs]e|franchise|arrangement)"
_OWN_SUBJECT = re.compile(
    rf"\b(?ai:this)\s+(?:[\w#-]+\s+){{0,4}}?{_OWN_NOUNS}\b|\b(?ai:the)\s+{_OWN_NOUNS}\b"
    r"|\b(?ai:(?:initial|original)\s+)?(?ai:term)\b"
)
_NOT_THE_SUBJECT = re.compile(
    r"(?ai:\b(?:year|month|quarter|period|phase|portion|part|day|week|anniversary|section"
    r"|provisions?|obligations?|rights?)\s+of\s+\Z)"
)
_SUBJECTLESS_IN_CLAUSE = re.compile(
    r"(?ai:\b(?:payments?|fees?|royalt\w*|invoices?|prices?|pricing|rent|interest|services?|deliver\w*"
    r"|shipments?|sales?|period|production|option|warrant|offering|notice|insurance|salary|bonus"
    r"|coverage|program|year|quarter|month)\b)"
)
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen"
    r"|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
)
# A term's length ("for a period of five (5) years", "one (1) year", "for the period
# from") names no other thing.
_DURATION = re.compile(
    r"(?ai:\bfor\s+(?:an?|the)\s+(?:initial\s+)?period\b)|"
    r"(?ai:\b(?:(?:an?|the)\s+)?(?:initial\s+)?period\s+of\s+)?"
    rf"(?ai:\b(?:\d+|{_NUMBER_WORD}(?:-{_NUMBER_WORD})?)(?:\s*\(\d+\))?\s+"
    r"(?:(?:full|calendar|contract)\s+)?"
    r"(?:years?|months?|days?)\b)"
)
# "the effective date of the X": X is this agreement (or what it grants), not an event's.
_EFFECTIVE_OF_OTHER = re.compile(
    r"(?ai:terminat|expir|notice|assignment|change|increase|price|amendment|renewal|cancel)"
)


# The kinds of phrase that decide a role alone (a label in the head is the agreement's).
_SIMPLE: dict[Kind, tuple[Role, Reason]] = {
    Kind.END: (Role.TERM, Reason.END),
    Kind.DEADLINE: (Role.TERM, Reason.END),
    Kind.LABEL_DATE: (Role.SIGNATURE, Reason.LABEL),
    Kind.LABEL_EFFECTIVE: (Role.EFFECTIVE, Reason.LABEL),
    Kind.LABEL_AGREEMENT: (Role.AGREEMENT, Reason.LABEL),
    Kind.LABEL_TERM: (Role.TERM, Reason.LABEL),
    Kind.ESIGN: (Role.SIGNATURE, Reason.ESIGN),
    Kind.ACCEPTED: (Role.SIGNATURE, Reason.ACCEPTANCE),
    Kind.SIGNED_BY: (Role.SIGNATURE, Reason.SIGNING),
}
_UNEXPLAINED = {kind: Assigned(*_SIMPLE[kind]) for kind in (Kind.END, Kind.DEADLINE)}
# The roles no words gave: one of each.
_STAMPED = Assigned(Role.STAMP, Reason.STAMP)
_IN_HEAD = Assigned(Role.AGREEMENT, Reason.HEAD)
_IN_SIGNATURES = Assigned(Role.SIGNATURE, Reason.SIGNATURES)
_NOTHING = Assigned(Role.OTHER, Reason.NOTHING)


def _sentence_start(text: str, end: int) -> int:
    """Where the sentence holding ``text[end]`` begins: after the last line break,
    semicolon or full stop before ``end`` that ends a sentence (not an abbreviation's:
    "Inc.", "No.")."""
    cut = max(text.rfind("\n", 0, end), text.rfind("; ", 0, end)) + 1
    stop = end
    while (stop := text.rfind(". ", cut, stop)) > 0:
        if _full_stop(text, stop):
            return stop + 1
    return cut


def _witnessed(sentence: str, at: int) -> bool:
    """The sentence is an execution clause ("IN WITNESS WHEREOF ...") before ``at``."""
    return ("itness" in sentence or "ITNESS" in sentence) and bool(_WITNESS.search(sentence, 0, at))


def _full_stop(text: str, stop: int) -> bool:
    """The full stop at ``text[stop]`` (followed by a space) ends a sentence: a capital,
    a parenthesis or a quote follows, and the word before is no abbreviation and does
    not end in a capital ("INC.", "U.S.A.")."""
    after = stop + 1
    while after < len(text) and text[after].isspace():
        after += 1
    if after == len(text) or not (text[after].isupper() or text[after] in '("“'):
        return False
    if stop == 0 or text[stop - 1].isupper():
        return False
    word = text[text.rfind(" ", 0, stop) + 1 : stop]
    return word not in _ABBREVIATIONS


def _instrument_is_own(sentence: str, phrase_start: int, place: Place) -> bool | None:
    """Whether the instrument a making phrase is said of is this document (None: no
    instrument is named in the sentence before the phrase)."""
    nouns = list(_NOUN.finditer(sentence, 0, phrase_start))
    if not nouns:
        return None
    noun = nouns[-1]  # the full pattern runs only just before the last noun: it is costly
    refs = list(_INSTRUMENT_REF.finditer(sentence, max(0, noun.start() - NAME_REACH), noun.end()))
    if not refs:
        return None
    ref = refs[-1]
    for before in reversed(refs[:-1]):  # a compound noun ("an amendment agreement")
        if ref["det"] is not None or not sentence[before.end() : ref.start()].isspace():
            break
        ref = before
    if _SUBJECTLESS_IN_CLAUSE.search(sentence, refs[-1].end(), phrase_start):
        return None  # the phrase is said of something named after the instrument
    det = (ref["det"] or "").lower()
    det = " ".join(det.split())
    if det == "this" or _OWN_INSTRUMENT_AFTER.match(sentence, refs[-1].end()):
        return True
    if det in _CITED_DETERMINERS:
        return False
    if _IDENTIFIED.match(sentence, refs[-1].end()):
        return False  # "the Schedule 13G/A", "Agreement Number 12965": another, by its number
    if det == "the":
        # "the Agreement" is this one where a document defines itself so (a capital: the
        # defined term); a named one ("the Manufacturing Agreement"), or "the agreement
        # between A and B", is another instrument.
        named = ref["noun"]
        return not ref["name"].strip() and named[0].isupper() and bool(_BARE_OWN.match(named))
    return place.in_head  # a title: "AGENCY AGREEMENT dated ..."


def _own_subject(sentence: str, phrase_start: int) -> bool:
    """Whether an effectiveness or commencement phrase is said of this agreement or its
    term (its subject, in the sentence before it)."""
    clause = sentence[:phrase_start]
    subjects = list(_OWN_SUBJECT.finditer(clause))
    if not subjects:
        return False
    subject = subjects[-1]
    if _NOT_THE_SUBJECT.search(clause, 0, subject.start()):
        return False
    # Between the subject and the verb: no other noun that the verb would be about.
    between = _DURATION.sub(" ", clause[subject.end() :])
    return not _SUBJECTLESS_IN_CLAUSE.search(between)


def _definition(text: str, end: int) -> Assigned | None:
    """The role a definition right after a date (ending at ``end``) gives it. A
    self-definition ("(this "Agreement")") is weak: it names the document only where no
    phrase names another."""
    match = _DEFINITION.match(text, end, end + AFTER)
    if match is None:
        return None
    name = " ".join(match["name"].split())
    if match["quote"] is None and not (match["det"] and _TITLE_CASE.match(name)):
        return None
    if _DEFINED_EFFECTIVE.search(name):
        return Assigned(Role.EFFECTIVE, Reason.DEFINED, name)
    if _DEFINED_AGREEMENT.search(name):
        return Assigned(Role.AGREEMENT, Reason.DEFINED, name)
    if _OWN_NAME.match(name):
        return Assigned(Role.AGREEMENT, Reason.DEFINED_SELF, name, weak=True)
    if _DEFINED_INSTRUMENT.search(name):
        return Assigned(Role.CITED, Reason.DEFINED, name)
    if _DEFINED_TERM.search(name):
        return Assigned(Role.TERM, Reason.DEFINED, name)
    return Assigned(Role.OTHER, Reason.DEFINED, name, weak=True)


def assign(
    text: str,
    start: int,
    end: int,
    floor: int,
    place: Place,
    previous: Role | None,
    *,
    explained: bool = True,
) -> Assigned:
    """The role of the date at ``text[start:end]`` (a block); ``floor`` is where the
    previous date of the block ends (a phrase before it governs that one), ``previous``
    that date's role. Without ``explained``, a date that is not the document's own may
    come without the words that gave its role (detection keeps no such date).

    In the document's head, its own effective date is the agreement's date too: a
    preamble states the agreement's date however it words it ("made as of", "effective as
    of", "(the "Effective Date")").
    """
    assigned = _assign(text, start, end, floor, place, previous, explained)
    if place.in_head and assigned.role is Role.EFFECTIVE:
        return assigned._replace(role=Role.AGREEMENT, also_effective=True)
    return assigned


def _assign(
    text: str,
    start: int,
    end: int,
    floor: int,
    place: Place,
    previous: Role | None,
    explained: bool,
) -> Assigned:
    lowered, phrase = read(text, floor, start)
    if (
        "source" in lowered
        or "filed" in lowered
        or "rev" in lowered
        or "printed" in lowered
        or "page" in lowered
    ) and _STAMP.search(lowered):
        return _STAMPED
    defined = _definition(text, end) if "(" in text[end : end + 6] else None
    if defined is not None and not defined.weak:
        return defined
    if phrase is not None:
        assigned = _by_phrase(phrase, text, start, place, explained)
        if assigned is not None:
            return assigned
    if defined is not None:
        return defined._replace(weak=False)
    if previous is not None and floor > 0 and _LIST_JOIN.match(text, floor, start):
        return Assigned(previous, Reason.LIST)
    if place.in_signatures:  # a short document's signatures may lie within its head's reach
        return _IN_SIGNATURES
    if place.in_head:
        return _IN_HEAD
    return _NOTHING


def _by_phrase(
    phrase: Phrase, text: str, date_start: int, place: Place, explained: bool
) -> Assigned | None:
    kind, phrase_start, phrase_words = phrase
    if not explained and kind in _UNEXPLAINED:
        return _UNEXPLAINED[kind]  # an end or a deadline: no date of the document's own
    said = text[phrase_start:date_start]
    simple = _SIMPLE.get(kind)
    if simple is not None:  # the phrase alone decides
        role, reason = simple
        if kind is Kind.LABEL_DATE and place.in_head and not place.in_signatures:
            return Assigned(Role.AGREEMENT, Reason.LABEL_IN_HEAD, said)
        return Assigned(role, reason, said)
    low = max(0, phrase_start - BEFORE)
    sentence = text[low:date_start]
    cut = _sentence_start(sentence, phrase_start - low)
    sentence = sentence[cut:]
    at = phrase_start - low - cut
    if kind is Kind.PLAIN:  # "from": the start of the term, or of something else
        if _own_subject(sentence, at):
            return Assigned(Role.EFFECTIVE, Reason.OWN_EFFECTIVE, said)
        return Assigned(Role.OTHER, Reason.PLAIN, said)
    if kind is Kind.EFFECTIVE_DATE_IS:
        if _EFFECTIVE_OF_OTHER.search(sentence, max(0, at - 60), at):
            return Assigned(Role.TERM, Reason.OTHER_EFFECTIVE_DATE, said)
        return Assigned(Role.EFFECTIVE, Reason.DEFINITION, said)
    if kind in (Kind.EFFECTIVE, Kind.COMMENCE):
        if _witnessed(sentence, at):
            return Assigned(Role.SIGNATURE, Reason.EXECUTION, said)
        if _own_subject(sentence, at) or (place.in_head and kind is Kind.EFFECTIVE):
            return Assigned(Role.EFFECTIVE, Reason.OWN_EFFECTIVE, said)
        own = _instrument_is_own(sentence, at, place)
        if own is False:
            return Assigned(Role.CITED, Reason.CITED, said)
        return Assigned(Role.OTHER, Reason.SOMETHING_ELSE, said)
    # "made", "as_of": the making of an instrument.
    if _witnessed(sentence, at):
        return Assigned(Role.SIGNATURE, Reason.EXECUTION, said)
    if (
        kind is Kind.AS_OF
        and not place.in_head
        and not _RIGHT_AFTER_INSTRUMENT.search(sentence, 0, at)
    ):
        return None  # "depositors as of March 31, 2008": a record date, not a making
    own = _instrument_is_own(sentence, at, place)
    if own:
        return Assigned(Role.AGREEMENT, Reason.OWN_MADE, said)
    if own is False or (own is None and _AMENDED.search(phrase_words)):
        return Assigned(Role.CITED, Reason.CITED, said)
    if place.in_head:
        return Assigned(Role.AGREEMENT, Reason.MADE_IN_HEAD, said)
    if phrase_words in _SIGNING_VERBS:  # "It was signed on", "Executed as of"
        return Assigned(Role.SIGNATURE, Reason.SIGNING, said)
    return None
