"""The ``contracts-v2`` rule set: dates as contracts write them, whose date each one is,
and effectiveness that hangs on an event (docs/detection.md, "contracts-v2").

``gather`` reads every block once: its dates (``dates``), where each stands (the
document's head, a signature block), its role (``roles``) and the clauses that tie the
agreement's effectiveness to an event (``events``); then it reads the document's slash
dates by one convention. The three rules (``conflicts``, ``relative``, ``undated``)
decide from that evidence alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple

from richdoc.detection import conflicts, relative, undated
from richdoc.detection.blocks import blocks, text_bytes
from richdoc.detection.dates import DateForm, Found, Numeric, SlashOrder, find, legend_order
from richdoc.detection.events import EventClause, EventKind, clauses
from richdoc.detection.own import own_dates
from richdoc.detection.roles import (
    INSTRUMENT_PATTERN,
    OWN_ROLES,
    SENTENCE_END,
    Assigned,
    Place,
    Role,
    assign,
)
from richdoc.graph import Projection, SpanKind
from richdoc_client.detection import Ambiguity

# The document's head ends with the sentence of its preamble (the first in which this
# agreement is made, entered into or dated, or is between its parties; a cover page's
# "Dated as of" is not yet the preamble), at a letter's salutation or its recitals, and at
# most this many characters into the text.
HEAD_MAX_CHARS = 4000
_PREAMBLE = re.compile(
    rf"(?ai:\bthis\s+(?:[^\s.;]+\s+){{0,6}}?{INSTRUMENT_PATTERN}\b[^.;]{{0,200}}?"
    r"\b(?:made|entered\s+into|dated|executed|effective|is\s+(?:by\s+and\s+)?(?:between|among))\b)"
)
_HEAD_STOP = re.compile(
    r"(?ai:\bdear\s+[^\n:,]{1,60}[:,]|\bladies\s+and\s+gentlemen|\bgentlemen\s*:|\bwhereas\b|\brecitals\b"
    r"|\bwitnesseth\b|\bw\s+i\s+t\s+n\s+e\s+s\s+s\s+e\s+t\s+h\b|\bnow,?\s+therefore\b)"
)
# A signature block begins at the execution clause or an acceptance, and ends at the next
# exhibit, schedule or annex, or after this many characters.
SIGNATURES_MAX_CHARS = 2500
_SIGNATURES_START = re.compile(
    r"(?ai:in\s+witness\s+(?:whereof|hereof)|agreed\s+(?:to\s+)?and\s+accepted|accepted\s+and\s+agreed"
    r"|signature\s+page|/s/)"
)
# "This Agreement is entered into as of the Effective Date (as defined below)": the
# preamble dates the making by the defined term.
_MADE_ON_EFFECTIVE_DATE = re.compile(
    r"(?ai:\b(?:made|entered\s+into|executed|dated)\s+(?:and\s+entered\s+into\s+)?(?:as\s+of|on)"
    r"\s+the\s+[\"“]?effective\s+date\b)"
)
# "made and entered into as of the "Effective Date" that we have indicated on the signature
# page", ""Effective Date" means the date set forth on the cover page": the document's
# Effective Date is a date written in a field of its own (blank in a form), not an event.
_EFFECTIVE_DATE_FIELD = re.compile(
    r"(?ai:\beffective\s+date[\"”']?,?\s+(?:(?:that|which|as)\s+(?:\w+\s+){0,3}?"
    r"|(?:means|shall\s+mean|is)\s+the\s+date\s+(?:that\s+is\s+|which\s+is\s+)?)?"
    r"(?:indicated|set\s+forth|specified|written|stated|shown|inserted|entered|designated)"
    r"\s+(?:on|in|at)\s+(?:the\s+)?(?:\w+\s+){0,2}?page\b)"
)
_SIGNATURES_END = re.compile(
    r"(?:\b(?:EXHIBIT|SCHEDULE|ANNEX|APPENDIX|ATTACHMENT)\b|(?ai:\bexhibit\s+[a-z0-9]\b))"
)


class Mention(NamedTuple):
    """A date mention with its role."""

    span_ref: int
    start: int  # character offsets in its block
    end: int
    written: str  # the date as the block writes it
    form: DateForm
    value: date
    assigned: Assigned
    # A slash date read by an unproven convention whose other reading is another date.
    other_reading: date | None = None
    row: int | None = None  # the span of the TABLE_ROW it stands in

    @property
    def role(self) -> Role:
        return self.assigned.role


@dataclass
class Evidence:
    # The document's own dates (agreement, effective, signature), in reading order; every
    # date mention when gathered for --explain.
    mentions: list[Mention]
    events: list[EventClause]
    text_bytes: int
    slash_order: SlashOrder
    slash_order_proven: bool
    dated: bool  # the document holds a date (any role; a numeric stamp's aside)
    # Its preamble says it is made as of its Effective Date (defined elsewhere).
    made_on_effective_date: bool = False
    # It defines its Effective Date as a date written in a field of its own (a signature
    # or cover page's), filled or blank: its effectiveness is that date, not an event.
    effective_date_field: bool = False
    # Slash dates neither reading of which is a real date, and numeric stamps: not dates.
    dropped: list[tuple[int, Found]] = field(default_factory=list)


# A table row is a record of its own: never a title block, nor a signature block.
_IN_A_ROW = Place(in_head=False, in_signatures=False)
_PLACES = {
    (head, signatures): Place(in_head=head, in_signatures=signatures)
    for head in (False, True)
    for signatures in (False, True)
}
_BODY = _PLACES[False, False]


def _ends_a_sentence(text: str) -> bool:
    """The block ends with a full stop (not an abbreviation's: "INC.") or a colon."""
    end = text.rstrip()
    if end.endswith(":"):
        return True
    return end.endswith(".") and len(end) > 1 and not end[-2].isupper()


class _Places:
    """Where the head ends and where signature blocks are, in characters of the blocks'
    texts read one after the other (separators not counted)."""

    def __init__(self) -> None:
        self.offset = 0  # characters before the current block
        self.head_end: int | None = None
        self.in_preamble = False  # its sentence began and has not ended
        self.signatures: list[tuple[int, int]] = []

    def read(self, text: str, lowered: str) -> None:
        """Note the head's end and the signature blocks found in ``text``, the next block."""
        if self.head_end is None:
            self._read_head(text)
        if self.open_signatures():
            heading = _SIGNATURES_END.search(text)
            if heading is not None:  # an exhibit after the signatures ends them
                start, end = self.signatures[-1]
                self.signatures[-1] = (start, min(end, self.offset + heading.start()))
        if "witness" in lowered or "accept" in lowered or "signature" in lowered or "/s/" in text:
            for match in _SIGNATURES_START.finditer(text):
                start = self.offset + match.start()
                if self.signatures and start <= self.signatures[-1][1]:
                    continue
                end = start + SIGNATURES_MAX_CHARS
                heading = _SIGNATURES_END.search(text, match.end())
                if heading is not None:
                    end = min(end, self.offset + heading.start())
                self.signatures.append((start, end))

    def _read_head(self, text: str) -> None:
        reach = max(0, HEAD_MAX_CHARS - self.offset)
        ends = []
        stop = _HEAD_STOP.search(text, 0, reach)
        if stop is not None:
            ends.append(stop.start())
        if not self.in_preamble:
            verb = _PREAMBLE.search(text, 0, reach)
            self.in_preamble = verb is not None
            sentence_from = verb.end() if verb is not None else 0
        else:
            sentence_from = 0
        if self.in_preamble:
            # The preamble's sentence ends at a full stop: within the block, or at its end
            # (a paragraph may also be one line of a preamble that goes on in the next).
            end = SENTENCE_END.search(text, sentence_from, reach)
            if end is not None:
                ends.append(end.end())
            elif _ends_a_sentence(text) and len(text) <= reach:
                ends.append(len(text))
        if ends:
            self.head_end = self.offset + min(ends)
        elif reach <= len(text):
            self.head_end = HEAD_MAX_CHARS

    def at(self, position: int) -> Place:
        absolute = self.offset + position
        in_head = self.head_end is None or absolute < self.head_end
        in_signatures = False
        for start, end in self.signatures[-2:]:
            in_signatures = in_signatures or start <= absolute < end
        return _PLACES[in_head, in_signatures]

    def open_signatures(self) -> bool:
        """A signature block began before the current block and goes on into it."""
        return bool(self.signatures) and self.signatures[-1][1] > self.offset

    def head_reach(self, length: int) -> int:
        """How many characters of the current block (``length`` long) are in the head."""
        if self.head_end is None:
            return length
        return max(0, min(length, self.head_end - self.offset))

    def of_block(self, length: int) -> Place | None:
        """The place of every position of the current block (``length`` characters), when
        they share one: past the head and outside every signature block."""
        if self.head_end is None or self.offset < self.head_end:
            return None
        end = self.offset + length
        for start, stop in self.signatures[-2:]:
            if start < end and self.offset < stop:
                return None
        return _BODY

    def next_block(self, text: str) -> None:
        self.offset += len(text)


def _slash_order(
    numeric: list[tuple[int, Found, Assigned]], legend: SlashOrder | None
) -> tuple[SlashOrder, bool]:
    """The document's slash-date convention and whether the document proves it."""
    if legend is not None:
        return legend, True
    proofs = {
        proof
        for _, found, assigned in numeric
        if found.form is DateForm.NUMERIC_SLASH
        and assigned.role is not Role.STAMP
        and found.numeric is not None
        and (proof := found.numeric.proves()) is not None
    }
    if len(proofs) == 1:
        return proofs.pop(), True
    return SlashOrder.MONTH_FIRST, False


def _numeric_value(
    numeric: Numeric, order: SlashOrder, proven: bool
) -> tuple[date | None, date | None]:
    """A slash or dash date's value by the document's convention, and its other reading
    when the convention is not proven and that reading is another real date."""
    value = numeric.reading(order)
    other_order = (
        SlashOrder.DAY_FIRST if order is SlashOrder.MONTH_FIRST else SlashOrder.MONTH_FIRST
    )
    other = numeric.reading(other_order)
    if value is None:  # the convention's reading does not exist: the other one is meant
        return other, None
    if proven or other is None or other == value:
        return value, None
    return value, other


def gather(projection: Projection, *, every_mention: bool = False) -> Evidence:
    """The evidence of one projection: the document's own dates (every date mention with
    ``every_mention``, for --explain), the event clauses, and whether any date is there."""
    data = text_bytes(projection)
    places = _Places()
    mentions: list[Mention] = []
    # The slash and dash dates, read once the document's convention is known: (their index
    # in ``mentions``, or -1 when not kept; the date; its role).
    numeric: list[tuple[int, Found, Assigned]] = []
    # The blocks that may hold an event clause, with their dates: read only when the
    # document writes no effective date (a written one comes first: ``own``), or for
    # --explain. Once one is written, no block is kept (nor looked at) any more.
    candidates: list[tuple[int, str, str, list[Found]]] = []
    effective_seen = False
    kept_before = 0
    legend: SlashOrder | None = None
    dated = made_on_effective_date = effective_date_field = False
    spans = projection.spans
    for span_ref, text in blocks(projection, data):
        lowered = text.lower()
        places.read(text, lowered)
        if places.head_end is None or places.offset < places.head_end:
            head_reach = places.head_reach(len(text))
            if "effective date" in lowered[:head_reach]:
                made_on_effective_date = made_on_effective_date or bool(
                    _MADE_ON_EFFECTIVE_DATE.search(text, 0, head_reach)
                )
        if not effective_date_field and "page" in lowered and "effective date" in lowered:
            effective_date_field = bool(_EFFECTIVE_DATE_FIELD.search(text))
        row = span_ref if spans[span_ref].kind is SpanKind.TABLE_ROW else None
        found = find(text)
        floor, previous = 0, None
        block_place = _IN_A_ROW if row is not None else places.of_block(len(text))
        for f in found:
            start, end = f.start, f.end
            place = block_place or places.at(start)
            assigned = assign(text, start, end, floor, place, previous, explained=every_mention)
            keep = every_mention or assigned.role in OWN_ROLES
            if f.numeric is not None:
                numeric.append((len(mentions) if keep else -1, f, assigned))
            else:
                dated = True
            if keep:
                mentions.append(
                    Mention(
                        span_ref,
                        start,
                        end,
                        text[start:end],
                        f.form,
                        f.value or _UNREAD,
                        assigned,
                        None,
                        row,
                    )
                )
            floor, previous = end, assigned.role
        if every_mention or not effective_seen:
            if any(_written_effective(m) for m in mentions[kept_before:]):
                effective_seen = not every_mention
                candidates.clear()
            elif every_mention or _may_hold_event(lowered):
                candidates.append((span_ref, text, lowered, found))
        kept_before = len(mentions)
        if legend is None and ("dd/" in lowered or "mm/" in lowered):
            legend = legend_order(text)
        places.next_block(text)
    order, proven = _slash_order(numeric, legend)
    dropped: list[tuple[int, Found]] = []
    unread: set[int] = set()
    for index, f, assigned in numeric:
        if index < 0 and dated:
            continue  # neither kept nor needed to know whether the document is dated
        assert f.numeric is not None
        read_value, other = _numeric_value(f.numeric, order, proven)
        if read_value is None or assigned.role is Role.STAMP:
            unread.add(index)
            dropped.append((mentions[index].span_ref if index >= 0 else -1, f))
            continue
        dated = True
        if index >= 0:
            mentions[index] = mentions[index]._replace(value=read_value, other_reading=other)
    kept = [m for i, m in enumerate(mentions) if i not in unread] if unread else mentions
    kept = _effective_beside_a_stated_date(kept)
    events: list[EventClause] = []
    effective_written = any(_written_effective(m) for m in kept)
    if every_mention or not effective_written:
        for span_ref, text, lowered, found in candidates:
            events.extend(clauses(span_ref, text, lowered, found))
        if not events:
            events.extend(_unit_phrase(candidates))
    return Evidence(
        kept,
        events,
        len(data),
        order,
        proven,
        dated,
        made_on_effective_date,
        effective_date_field,
        dropped,
    )


def _effective_beside_a_stated_date(mentions: list[Mention]) -> list[Mention]:
    """A head's effective date is the agreement's date only when the document states no
    other: beside "entered into on March 3, 2010" an "effective as of April 1, 2010" is
    the effective date alone."""
    if not any(m.role is Role.AGREEMENT and not m.assigned.also_effective for m in mentions):
        return mentions
    return [
        m._replace(assigned=m.assigned._replace(role=Role.EFFECTIVE, also_effective=False))
        if m.assigned.also_effective
        else m
        for m in mentions
    ]


def _unit_phrase(candidates: list[tuple[int, str, str, list[Found]]]) -> list[EventClause]:
    """The spec's relative phrase, read as spec-v1 reads it (an effectiveness marker
    shortly before "the next quarter"), when no clause ties the agreement to an event:
    the first in reading order."""
    from richdoc.detection.spec_v1 import relative_in

    for span_ref, text, _, _ in candidates:
        phrase = relative_in(span_ref, text)
        if phrase is not None:
            return [EventClause(span_ref, 0, 0, phrase.text, EventKind.NEXT_UNIT, phrase.unit)]
    return []


def _written_effective(mention: Mention) -> bool:
    """An effective date the document writes (a slash date only once it is read)."""
    return mention.value is not _UNREAD and (
        mention.role is Role.EFFECTIVE or mention.assigned.also_effective
    )


def _may_hold_event(lowered: str) -> bool:
    """Whether a block has a keyword of an effectiveness clause (``events``)."""
    return (
        "effect" in lowered
        or "commenc" in lowered
        or "begin" in lowered
        or "start" in lowered
        or "force" in lowered
        or "as of the" in lowered
        or "on the" in lowered
        or "next" in lowered
        or "following" in lowered
    )


# The value a slash or dash date has until the document's convention reads it.
_UNREAD = date.min


def fired_rules(evidence: Evidence) -> list[Ambiguity]:
    """Every rule that fires, in priority order (conflicting > relative > undated)."""
    own = own_dates(evidence)
    findings = (
        conflicts.conflicting_dates(own),
        relative.relative_date(own),
        undated.undated(evidence),
    )
    return [finding for finding in findings if finding is not None]
