"""What the two rule sets' findings share, so that they say it alike: the undated
finding, and the candidate for the start of the next month, quarter or year
(docs/detection.md, "Rule 2" and "Rule 3")."""

from __future__ import annotations

from datetime import date

from richdoc.temporal import CalendarUnit, epoch_micros, start_of_next
from richdoc_client.detection import Ambiguity, AmbiguityKind, Candidate

UNDATED_MIN_BYTES = 200  # a shorter text is no document whose date is missed


def undated() -> Ambiguity:
    return Ambiguity(
        kind=AmbiguityKind.UNDATED,
        detectorConfidence=0.9,
        appliedCandidateConfidence=0.0,
        candidates=[Candidate(label="No date found in document")],
    )


def next_unit_start(unit: CalendarUnit, anchor: date, span_ref: int) -> Candidate | None:
    """The start of the next ``unit`` after ``anchor``, found in block ``span_ref``; None
    only when it would start after year 9999."""
    derived = start_of_next(unit, anchor)
    if derived is None:
        return None
    return Candidate(
        label=f"{derived.isoformat()} (start of next {unit} after {anchor.isoformat()})",
        validFrom=epoch_micros(derived),
        spanRef=span_ref,
    )
