"""The document's own dates (``contracts-v2``): its agreement date, its effective date and
its signatures, with an event-based effectiveness dated where the signatures date it.

* The agreement's date is what it states of itself (the title block, a letter's date
  line, the preamble); when it states none, its last signature dates it.
* Its effective date is written (an "Effective Date" definition or label, an
  effectiveness or commencement clause of this agreement or its term, a preamble that
  says "effective as of"), or it hangs on an event (``events``). A signing event is dated
  by the signature dates: the last signature by the latest of them, one party's by them
  when they agree. Written effective dates come first: an event clause beside one is read
  as the condition of that date, not as another effective date.
* Differing signature dates of the parties do not contest a date the agreement states:
  "made as of" dating fixes the agreement's date whenever each party signs (signing
  before or after it is ordinary), so the signatures count only where the agreement
  states no date of its own, or where its effectiveness hangs on signing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from richdoc.detection.events import EventClause, EventKind
from richdoc.detection.roles import Role

if TYPE_CHECKING:
    from richdoc.detection.contracts import Evidence, Mention


class Dated(NamedTuple):
    """One of the document's own dates, as a candidate would show it."""

    mention: Mention
    label: str  # the role as a candidate's label says it: "effective date", "signed", ...


@dataclass
class OwnDates:
    agreement: list[Dated] = field(default_factory=list)
    effective: list[Dated] = field(default_factory=list)
    signatures: list[Dated] = field(default_factory=list)
    # The agreement's effectiveness hangs on this event; None when it does not, or when
    # a written effective date stands beside it.
    event: EventClause | None = None
    # The event is dated by the signatures (its date is then among ``effective``).
    event_dated: bool = False
    # A party's signature whose date the signatures leave open: the dates it may be.
    event_anchors: list[Dated] = field(default_factory=list)


def own_dates(evidence: Evidence) -> OwnDates:
    own = OwnDates()
    for mention in evidence.mentions:
        if mention.role is Role.AGREEMENT:
            own.agreement.append(Dated(mention, "agreement date"))
            if mention.assigned.also_effective:
                own.effective.append(Dated(mention, "agreement date, effective"))
        elif mention.role is Role.EFFECTIVE:
            own.effective.append(Dated(mention, "effective date"))
        elif mention.role is Role.SIGNATURE:
            own.signatures.append(Dated(mention, "signed"))
    if own.effective or not evidence.events:
        return own
    own.event = evidence.events[0]
    if own.event.kind in (EventKind.LAST_SIGNATURE, EventKind.PARTY_SIGNATURE) and own.signatures:
        values = {dated.mention.value for dated in own.signatures}
        if own.event.kind is EventKind.LAST_SIGNATURE or len(values) == 1:
            last = max(own.signatures, key=lambda dated: dated.mention.value)
            own.effective.append(Dated(last.mention, f"effective date: {own.event.kind}"))
            own.event_dated = True
        else:
            own.event_anchors = _first_of_each_value(own.signatures)
    return own


def _first_of_each_value(dates: list[Dated]) -> list[Dated]:
    seen: dict[object, Dated] = {}
    for dated in dates:
        seen.setdefault(dated.mention.value, dated)
    return sorted(seen.values(), key=lambda dated: dated.mention.value)


def agreement_side(own: OwnDates) -> list[Dated]:
    """The dates that say when the agreement was made: what it states, else its last
    signature (in each table row apart: a row's signatures are that row's)."""
    if own.agreement:
        return own.agreement
    last: dict[int | None, Dated] = {}
    for dated in own.signatures:
        held = last.get(dated.mention.row)
        if held is None or dated.mention.value > held.mention.value:
            last[dated.mention.row] = dated
    return list(last.values())
