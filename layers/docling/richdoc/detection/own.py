"""The document's own dates (``contracts-v2``): when it was made, when it takes effect,
and its signatures, with an event-based effectiveness dated where the document dates the
event.

* **When it was made**: the date its head or body states of its making ("made and entered
  into as of", "dated", "made this", the title block, a letter's date line), or, where it
  says it is made "as of the Effective Date", its defined Effective Date. When it states
  none, its last signature dates it (the day the last party signed is the day it was
  made); without signatures, the effective date its preamble states ("is made effective
  as of", "Effective Date:") is the only date it gives, and stands for both.
* **When it takes effect**: its written effective dates (an "Effective Date" definition
  or label, an effectiveness or commencement clause of this agreement or its term, a
  preamble's "effective as of"), or the date of the event its effectiveness hangs on
  (``events``). A signing event is dated by the signature dates: the last signature by
  the latest of them, one party's by them when they agree. Where no signature is dated,
  the date the agreement states of its making dates the signing too (an agreement is
  made when it is executed), unless the clause asks for the actual execution ("the date
  of actual execution"). Written effective dates come first: an event clause beside one
  is read as the condition of that date, not as another effective date; so is one beside
  an Effective Date the document defines as a field of its own ("the Effective Date that
  we have indicated on the signature page"), filled or, in a form, blank.
* Differing signature dates do not contest a date the agreement states of its making:
  "made as of" dating fixes the agreement's date whenever each party signs (signing
  before or after it is ordinary). They do date the making of an agreement whose head
  says only when it takes effect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from richdoc.detection.events import EventClause, EventKind
from richdoc.detection.roles import Reason, Role

if TYPE_CHECKING:
    from richdoc.detection.contracts import Evidence, Mention


class Dated(NamedTuple):
    """One of the document's own dates, as a candidate would show it."""

    mention: Mention
    label: str  # the role as a candidate's label says it: "effective date", "signed", ...


# How a document defines its Effective Date: a definition after the date, "Effective
# Date" means ..., an "Effective Date:" label.
_DEFINING = frozenset({Reason.DEFINED, Reason.DEFINITION, Reason.LABEL})
_SIGNING_EVENTS = (EventKind.LAST_SIGNATURE, EventKind.PARTY_SIGNATURE)


@dataclass
class OwnDates:
    agreement: list[Dated] = field(default_factory=list)  # what it states of its making
    effective: list[Dated] = field(default_factory=list)
    signatures: list[Dated] = field(default_factory=list)
    # The dates that say when the agreement was made (``agreement_side``).
    made: list[Dated] = field(default_factory=list)
    # The agreement's effectiveness hangs on this event; None when it does not, or when
    # a written effective date stands beside it.
    event: EventClause | None = None
    # The event is dated by the document (its date is then among ``effective``).
    event_dated: bool = False
    # A party's signature whose date the signatures leave open: the dates it may be.
    event_anchors: list[Dated] = field(default_factory=list)


def own_dates(evidence: Evidence) -> OwnDates:
    own = OwnDates()
    head_effective: list[Mention] = []
    for mention in evidence.mentions:
        if mention.role is Role.AGREEMENT:
            own.agreement.append(Dated(mention, "agreement date"))
            if mention.assigned.also_effective:
                own.effective.append(Dated(mention, "agreement date, effective"))
        elif mention.role is Role.EFFECTIVE:
            if mention.assigned.head_effective:
                head_effective.append(mention)
            else:
                own.effective.append(Dated(mention, "effective date"))
        elif mention.role is Role.SIGNATURE:
            own.signatures.append(Dated(mention, "signed"))
    own.made = _made(own, head_effective, evidence.made_on_effective_date)
    if own.effective or not evidence.events:
        return own
    own.event = evidence.events[0]
    if own.event.kind in _SIGNING_EVENTS:
        _date_the_signing(own, own.event)
    if evidence.effective_date_field and not own.event_dated:
        # Its Effective Date is the date its field holds: the event clause is the condition
        # under which that date is written, as beside a written date. A form's blank field
        # leaves the document undated, not dated by an event.
        own.event, own.event_anchors = None, []
    return own


def _made(own: OwnDates, head_effective: list[Mention], on_effective: bool) -> list[Dated]:
    """The dates that say when the agreement was made; a head's effective dates join
    ``own.effective``, labelled as the agreement's date where they are that too."""
    made = own.agreement
    if not made and on_effective:
        made = [d for d in own.effective if d.mention.assigned.reason in _DEFINING]
    if not made:
        made = _last_signatures(own.signatures)
    stands_for_both = not made
    label = "agreement date, effective" if stands_for_both else "effective date"
    heads = [Dated(mention, label) for mention in head_effective]
    own.effective = sorted(
        [*own.effective, *heads], key=lambda d: (d.mention.span_ref, d.mention.start)
    )
    return heads if stands_for_both else made


def _last_signatures(signatures: list[Dated]) -> list[Dated]:
    """The last signature (in each table row apart: a row's signatures are that row's)."""
    last: dict[int | None, Dated] = {}
    for dated in signatures:
        held = last.get(dated.mention.row)
        if held is None or dated.mention.value > held.mention.value:
            last[dated.mention.row] = dated
    return list(last.values())


def _date_the_signing(own: OwnDates, event: EventClause) -> None:
    if own.signatures:
        values = {dated.mention.value for dated in own.signatures}
        if event.kind is EventKind.LAST_SIGNATURE or len(values) == 1:
            last = max(own.signatures, key=lambda dated: dated.mention.value)
            own.effective.append(Dated(last.mention, f"effective date: {event.kind}"))
            own.event_dated = True
        else:
            own.event_anchors = _first_of_each_value(own.signatures)
    elif own.agreement and not event.actual:
        stated = own.agreement[0]
        own.effective.append(Dated(stated.mention, f"effective date: {event.kind}"))
        own.event_dated = True


def _first_of_each_value(dates: list[Dated]) -> list[Dated]:
    seen: dict[object, Dated] = {}
    for dated in dates:
        seen.setdefault(dated.mention.value, dated)
    return sorted(seen.values(), key=lambda dated: dated.mention.value)


def agreement_side(own: OwnDates) -> list[Dated]:
    """The dates that say when the agreement was made."""
    return own.made
