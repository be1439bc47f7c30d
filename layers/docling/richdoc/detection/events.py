"""Effectiveness that hangs on an event (the ``contracts-v2`` rule set; docs/detection.md,
"contracts-v2: event-based effectiveness").

The agreement's own effectiveness tied to an event instead of a date: its "Effective
Date" defined as an event's date, the agreement said to become effective on or upon an
event, its term said to commence on one, its preamble dated as of one:

* ``"Effective Date" means the date of actual execution of this Contract by the Parties``
* ``This Agreement will become effective on the date a fully executed copy ... is
  received by Nationwide``
* ``The term of this Agreement ... shall commence on the date upon which the Company
  delivers to Distributor the last Sample``
* ``This Agreement is effective as of the last date signed below``

The clause must name an event (execution, signature, acceptance, closing, approval,
receipt, delivery, completion, launch, a condition's satisfaction, "the later of ...")
and no date of its own; a reference to a written date ("the date first above written",
"the date hereof", "the Effective Date") is not an event. Effectiveness of anything else
("notice is effective upon receipt", "delivery of a counterpart ... shall be effective")
is not the agreement's: the clause's subject must be the agreement, its term or its
Effective Date.

A signing event is one the signature dates can date: the last signature (``last``,
``latest``, ``all parties``, ``fully executed``, or a plain "upon execution": an agreement
is executed when its last party signs), or one party's signature (``signed acceptance by
MMMW``), which the signature dates date only when they agree. Every other event is dated
by nothing the detector reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from richdoc.detection.dates import Found
from richdoc.temporal import CalendarUnit


class EventKind(StrEnum):
    LAST_SIGNATURE = "the last signature"
    PARTY_SIGNATURE = "one party's signature"
    OTHER = "an event"
    NEXT_UNIT = "the start of the next calendar unit"


@dataclass(frozen=True, slots=True)
class EventClause:
    span_ref: int
    start: int  # character offsets of the clause in its block
    end: int
    text: str  # the clause, whitespace runs collapsed
    kind: EventKind
    unit: CalendarUnit | None = None  # for NEXT_UNIT


# An effectiveness clause is found from its keyword: the words after it must lead to an
# event's text, the words before it must make the agreement, its term or its "Effective
# Date" the subject. Keywords are found by substring search, and the patterns run only
# where one stands.
_EVENT_TEXT = r"(?P<event>[^.;]{4,300})"
_DEFINITION_AFTER = re.compile(
    r"(?ai:effective\s+date[\"”']?\s+(?:of\s+this\s+\w+\s+)?(?:shall\s+)?(?:mean|means|is|shall\s+be"
    r"|will\s+be|has\s+the\s+meaning\s+(?:of|given\s+to)|refers\s+to)\s+)" + _EVENT_TEXT
)
# Before "effective date": a quote, "the term", or nothing but numbering (a definitions list).
_DEFINITION_BEFORE = re.compile(
    r"(?ai:(?:[\"“']\s*(?:[\w-]+\s+){0,2}|\bthe\s+term\s+[\"“']?|(?:\A|\n|\d\.[\d.]*\s+))\Z)"
)
_EFFECT_AFTER = re.compile(
    r"(?ai:(?:effective|in\s+(?:full\s+)?force(?:\s+and\s+effect)?|into\s+(?:force|effect)|effect)"
    r"\s+(?:and\s+binding\s+)?(?:on|upon|as\s+of|from|at|when|with\s+effect\s+from|following|after"
    r"|immediately\s+upon)\s+)" + _EVENT_TEXT
)
# The agreement right before its verb: "this Agreement shall become", "The Contract becomes".
_AGREEMENT_BEFORE = re.compile(
    r"(?ai:\b(?:this|the)\s+(?:[\w#-]+\s+){0,3}?(?:agreement|contract|amendment|addendum|lease"
    r"|licen[cs]e)\b(?:\s*\([^)]{0,80}\))?\s+(?:(?:shall|will|is\s+to|is\s+intended\s+to)\s+"
    r"(?:automatically\s+)?(?:become|be|take|come|enter|go)|becomes|is|takes|comes|enters|goes)\s+\Z)"
)
_COMMENCE_AFTER = re.compile(
    r"(?ai:(?:commence[sd]?|begins?|starts?)\s+(?:on|upon|as\s+of|from|at|with)\s+)" + _EVENT_TEXT
)
_TERM_BEFORE = re.compile(
    r"(?ai:\b(?:initial\s+|original\s+)?term\b(?:\s+of\s+this\s+\w+)?[^.;]{0,80}?"
    r"(?:\b(?:shall|will)\s+(?:automatically\s+)?)?\Z)"
)
_PREAMBLE_AFTER = re.compile(
    r"(?ai:as\s+of\s+|on\s+)(?=the\s+(?:date|day)\s+(?:of\s+)?(?:the\s+)?(?:last|later|latest|final|full"
    r"|mutual))" + _EVENT_TEXT
)
_PREAMBLE_BEFORE = re.compile(
    r"(?ai:\b(?:entered\s+into|made|executed)\s+(?:and\s+(?:is\s+)?effective\s+)?(?:effective\s+)?\Z)"
)
BEFORE_REACH = 140  # characters before a keyword its subject is looked for in
# keyword -> (the pattern of what follows it, the pattern that must end what precedes it)
_ANCHORS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "effective date": (_DEFINITION_AFTER, _DEFINITION_BEFORE),
    "effective": (_EFFECT_AFTER, _AGREEMENT_BEFORE),
    "force": (_EFFECT_AFTER, _AGREEMENT_BEFORE),
    "effect": (_EFFECT_AFTER, _AGREEMENT_BEFORE),
    "commence": (_COMMENCE_AFTER, _TERM_BEFORE),
    "begin": (_COMMENCE_AFTER, _TERM_BEFORE),
    "start": (_COMMENCE_AFTER, _TERM_BEFORE),
    "as of the": (_PREAMBLE_AFTER, _PREAMBLE_BEFORE),
    "on the": (_PREAMBLE_AFTER, _PREAMBLE_BEFORE),
}
# "as of the" and "on the" begin an event only before these words.
_PREAMBLE_WORDS = ("last", "later", "latest", "final", "full", "mutual")
_IN_FORCE = re.compile(r"(?ai:(?:in\s+(?:full\s+)?|into\s+)\Z)")


# What makes the clause text an event: its words.
_EVENT_WORDS = re.compile(
    r"(?ai:execut|sign|countersign|accept|approv|\bclos|receipt|receiv|deliver|complet|launch|occur"
    r"|satisf|fulfil|consummat|issu|\bfiling|\bfiled|registr|obtain|grant|effectiveness|later\s+of"
    r"|latest\s+of|earlier\s+of|first\s+(?:date|day)|funding|notif|next|following)"
)
_SIGNING = re.compile(r"(?ai:execut|\bsign|countersign|accept)")
_NOT_SIGNING = re.compile(
    r"(?ai:approv|\bclos|receipt|receiv|deliver|complet|launch|occur|satisf|fulfil|consummat|issu"
    r"|\bfiling|\bfiled|registr|obtain|grant|effectiveness|earlier\s+of|funding|notif|payment"
    r"|condition|\bhsr\b|waiting\s+period)"
)
_LAST = re.compile(
    r"(?ai:\blast\b|latest|later|final|\ball\s+(?:of\s+)?(?:the\s+)?parties|both\s+parties|fully"
    r"\s+executed|mutual|each\s+(?:of\s+the\s+)?part(?:y|ies)|\bby\s+the\s+parties)"
)
_BY_PARTY = re.compile(
    r"\b(?ai:by)\s+(?!(?ai:all|both|each|the\s+part|either|any)\b)[A-Z][\w&.,'’ -]{1,40}"
)
# A reference to a date written elsewhere, not an event.
_WRITTEN = re.compile(
    r"(?ai:\A\s*(?:the\s+close\s+of\s+business\s+on\s+)?(?:the\s+)?(?:date|day)\s+(?:first\s+)?"
    r"(?:above|below|hereinabove|hereinbelow|set\s+forth|specified|referred\s+to|written|stated"
    r"|indicated|shown|appearing|hereof|of\s+this\s+(?:agreement|contract))"
    r"|\A\s*the\s+[\"“]?effective\s+date|\A\s*the\s+date\s+(?:on\s+which|when)\s+this\s+\w+\s+is\s+dated)"
)
_NEXT_UNIT = re.compile(
    r"(?ai:\b(?:the\s+)?(?:start\s+of\s+the\s+|beginning\s+of\s+the\s+|first\s+day\s+of\s+the\s+)?"
    r"(?:next|following)\s+(?P<unit>month|quarter|year)\b)"
)


def _occurrences(lowered: str, word: str) -> Iterator[int]:
    at = lowered.find(word)
    while at >= 0:
        yield at
        at = lowered.find(word, at + len(word))


def _found_clauses(
    text: str, lowered: str, dates: Sequence[Found]
) -> Iterator[tuple[int, int, re.Match[str]]]:
    """(clause start, clause end, the match of what follows the keyword), in text order
    and without overlaps; a clause whose event text holds a date is a written date's."""
    # Substring searches, not a regex pass: a block costs little more than its date pass.
    keywords = [word for word in _ANCHORS if word in lowered]
    if not keywords:
        return
    if ("as of the" in keywords or "on the" in keywords) and not any(
        word in lowered for word in _PREAMBLE_WORDS
    ):
        keywords = [word for word in keywords if word not in ("as of the", "on the")]
    hits = sorted(
        (at, word)
        for word in keywords
        for at in _occurrences(lowered, word)
        # "effective date" is read as such, not again as "effective" nor "effect"
        if not (word in ("effective", "effect") and lowered.startswith("effective date", at))
        and not (word == "effect" and lowered.startswith("effective", at))
    )
    end = -1
    for start, word in hits:
        after, before = _ANCHORS[word]
        if word in ("force", "effect"):
            lead = _IN_FORCE.search(text, max(0, start - 12), start)
            start = lead.start() if lead is not None else start
        match = after.match(text, start)
        if match is None or any(match.start("event") <= f.start < match.end() for f in dates):
            continue
        subject = before.search(text, max(0, start - BEFORE_REACH), start)
        if subject is not None and subject.start() >= end:
            end = match.end()
            yield subject.start(), end, match


def clauses(
    span_ref: int, text: str, lowered: str, dates: Sequence[Found]
) -> Iterator[EventClause]:
    """The event-based effectiveness clauses of a block (``lowered``: its text in lower
    case); the block's ``dates`` make a clause that holds one a written date's, not an
    event's."""
    for start, end, match in _found_clauses(text, lowered, dates):
        event = match["event"]
        if _WRITTEN.match(event):
            continue
        next_unit = _NEXT_UNIT.search(event, 0, 60)
        kind: EventKind
        unit = None
        if next_unit is not None:
            kind, unit = EventKind.NEXT_UNIT, CalendarUnit(next_unit["unit"].lower())
        elif not _EVENT_WORDS.search(event):
            continue
        elif _SIGNING.search(event) and not _NOT_SIGNING.search(event):
            by_party = _BY_PARTY.search(event)
            kind = (
                EventKind.PARTY_SIGNATURE
                if by_party is not None and not _LAST.search(event)
                else EventKind.LAST_SIGNATURE
            )
        else:
            kind = EventKind.OTHER
        words = " ".join(text[start:end].split())
        if len(words) > 160:
            words = words[:159].rstrip() + "…"
        yield EventClause(span_ref, start, end, words, kind, unit)
