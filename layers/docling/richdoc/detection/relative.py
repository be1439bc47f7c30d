"""``relative_date`` under ``contracts-v2``: the agreement's effectiveness hangs on an
event whose date the document does not settle (docs/detection.md, "contracts-v2:
relative_date").

* A signing event whose possible dates are written (one party's signature, the parties
  having signed on different days): one candidate per signature date, then the clause.
* The start of the next month, quarter or year: as ``spec-v1`` resolves it, from the
  agreement's own date (``YYYY-MM-DD (start of next quarter after YYYY-MM-DD)``, then the
  agreement date), or the clause alone when the document states no date of its own.
* Any other event (closing, approval, receipt, delivery, a condition), or a signing event
  with no signature date written: the clause alone, ``... (no date for the event in
  document)``, with no interval.
"""

from __future__ import annotations

from richdoc.detection.conflicts import candidate
from richdoc.detection.events import EventKind
from richdoc.detection.findings import next_unit_start
from richdoc.detection.own import OwnDates, agreement_side
from richdoc_client.detection import Ambiguity, AmbiguityKind, Candidate

MAX_ANCHORS = 3


def relative_date(own: OwnDates) -> Ambiguity | None:
    event = own.event
    if event is None or own.event_dated:
        return None
    clause = Candidate(label=f"{event.text} (effective on {event.kind})", spanRef=event.span_ref)
    if event.kind is EventKind.NEXT_UNIT and event.unit is not None:
        made = agreement_side(own)
        if made:
            anchor = made[0]
            candidates = []
            derived = next_unit_start(event.unit, anchor.mention.value, event.span_ref)
            if derived is not None:
                candidates.append(derived)
            candidates.append(candidate(anchor))
            return _ambiguity(candidates, applied=0.5)
    elif own.event_anchors:
        anchors = [candidate(dated) for dated in own.event_anchors[:MAX_ANCHORS]]
        return _ambiguity([*anchors, clause], applied=0.5)
    unanchored = Candidate(
        label=f"{event.text} (no date for the event in document)", spanRef=event.span_ref
    )
    return _ambiguity([unanchored], applied=0.0)


def _ambiguity(candidates: list[Candidate], *, applied: float) -> Ambiguity:
    return Ambiguity(
        kind=AmbiguityKind.RELATIVE_DATE,
        detectorConfidence=0.85,
        appliedCandidateConfidence=applied,
        candidates=candidates,
    )
