"""``conflicting_dates`` under ``contracts-v2``: the document's own dates of different
meaning disagree (docs/detection.md, "contracts-v2: conflicting_dates").

It fires when a date that says when the agreement was made (``own.agreement_side``)
differs from a date that says when it takes effect, never between two dates of the same
meaning, never with a date that is not the document's own (a cited instrument's, a term's
end, a deadline, a stamp), and never between dates of two table rows (each row is a
record of its own: two suppliers' signing dates are not one agreement's). The candidates
are the dates taking part, effective dates first, then agreement dates, then signatures,
each by date; a slash date read by an unproven convention says so in its label.
"""

from __future__ import annotations

from datetime import date

from richdoc.detection.own import Dated, OwnDates, agreement_side
from richdoc.temporal import epoch_micros
from richdoc_client.detection import Ambiguity, AmbiguityKind, Candidate

MAX_CANDIDATES = 4


# Dates by the table row they stand in (None: not in a row), each value's first mention.
_ByRow = dict[int | None, dict[date, Dated]]


def _by_row(dates: list[Dated]) -> _ByRow:
    rows: _ByRow = {}
    for dated in dates:
        rows.setdefault(dated.mention.row, {}).setdefault(dated.mention.value, dated)
    return rows


def label(dated: Dated) -> str:
    """``YYYY-MM-DD (role)``, and the other reading of a slash date read by an unproven
    convention."""
    mention = dated.mention
    note = ""
    if mention.other_reading is not None:
        note = f"; {mention.written} could be {mention.other_reading.isoformat()}"
    return f"{mention.value.isoformat()} ({dated.label}{note})"


def candidate(dated: Dated) -> Candidate:
    value = dated.mention.value
    return Candidate(
        label=label(dated), validFrom=epoch_micros(value), spanRef=dated.mention.span_ref
    )


def conflicting_dates(own: OwnDates) -> Ambiguity | None:
    made = _by_row(agreement_side(own))
    effective = _by_row(own.effective)
    taking_part: dict[date, Dated] = {}
    # Dates of the same row, or of a row and of no row, pair; two rows' dates never do.
    for effective_row, effective_dates in effective.items():
        for made_row, made_dates in made.items():
            if effective_row is not None and made_row is not None and effective_row != made_row:
                continue
            if len(effective_dates.keys() | made_dates.keys()) < 2:
                continue  # one date, said of both: no conflict
            for dated in (*effective_dates.values(), *made_dates.values()):
                taking_part.setdefault(dated.mention.value, dated)
    if not taking_part:
        return None
    effective_values = {dated.mention.value for dated in own.effective}
    ranked = sorted(
        taking_part.values(),
        key=lambda dated: (dated.mention.value not in effective_values, dated.mention.value),
    )
    return Ambiguity(
        kind=AmbiguityKind.CONFLICTING_DATES,
        detectorConfidence=0.7,
        appliedCandidateConfidence=0.55,
        candidates=[candidate(dated) for dated in ranked[:MAX_CANDIDATES]],
    )
