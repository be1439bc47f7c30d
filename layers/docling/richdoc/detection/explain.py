"""Why detection found what it found (``richdoc detect --explain``, the console's
document page): every date mention with its form, its role, what gave the role, and
whether it is among the candidates of the finding detection emits; and, under
``contracts-v2``, the clauses that tie the agreement's effectiveness to an event.

The explanation is computed from the projection by the rule set that ran, never read
back from detection.json: the same projection and rule set always explain alike.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from richdoc.detection import fired_rules
from richdoc.detection.blocks import blocks, text_bytes
from richdoc.detection.ruleset import DetectionRules
from richdoc.graph import Projection
from richdoc.temporal import DATE_PATTERN, epoch_micros, find_dates
from richdoc_client.detection import Ambiguity


class MentionExplained(BaseModel):
    """One date mention."""

    model_config = ConfigDict(frozen=True)

    span_ref: int  # the block it stands in
    written: str  # as the block writes it
    value: str | None  # YYYY-MM-DD; None: not a date after all (no real reading, a stamp)
    form: str
    role: str
    why: str  # the phrase or the place that gave the role
    kept: bool  # among the candidates of the finding detection emits
    note: str | None = None  # how a slash date was read, when it could be read otherwise


class EventExplained(BaseModel):
    """A clause that ties the agreement's effectiveness to an event (contracts-v2)."""

    model_config = ConfigDict(frozen=True)

    span_ref: int
    clause: str
    event: str  # the last signature, one party's signature, an event, ...


class Explanation(BaseModel):
    model_config = ConfigDict(frozen=True)

    rules: str
    fired: list[str]  # the kinds that fired, in priority order (the first is emitted)
    mentions: list[MentionExplained]
    events: list[EventExplained]
    slash_dates: str | None = None  # the document's slash-date convention (contracts-v2)


def explain(projection: Projection, rules: DetectionRules) -> Explanation:
    fired = fired_rules(projection, rules)
    kept = _candidates(fired[0]) if fired else set()
    if rules is DetectionRules.SPEC_V1:
        return Explanation(
            rules=rules.value,
            fired=[a.kind.value for a in fired],
            mentions=_spec_v1_mentions(projection, kept),
            events=[],
        )
    return _contracts_v2(projection, fired, kept)


def _candidates(ambiguity: Ambiguity) -> set[tuple[int | None, int | None]]:
    """The (spanRef, validFrom) of each candidate: how a mention is known to be kept."""
    return {(c.spanRef, c.validFrom) for c in ambiguity.candidates}


def _spec_v1_mentions(
    projection: Projection, kept: set[tuple[int | None, int | None]]
) -> list[MentionExplained]:
    from richdoc.detection.spec_v1 import ROLE_WINDOW, best_role

    explained = []
    for span_ref, text in blocks(projection, text_bytes(projection)):
        found = {match.start: match for match in find_dates(text)}
        for match in DATE_PATTERN.finditer(text):
            date_match = found.get(match.start())
            form = _SPEC_V1_FORMS[str(next(g for g in _SPEC_V1_GROUPS if match[g] is not None))]
            if date_match is None:
                explained.append(
                    MentionExplained(
                        span_ref=span_ref,
                        written=match.group(),
                        value=None,
                        form=form,
                        role="none",
                        why="not a real calendar date",
                        kept=False,
                    )
                )
                continue
            role = best_role(text, match.start())
            why = (
                f'keyword "{role.keyword}" (precedence {role.precedence}) within '
                f"{ROLE_WINDOW} characters before"
                if role is not None
                else f"no role keyword within {ROLE_WINDOW} characters before"
            )
            explained.append(
                MentionExplained(
                    span_ref=span_ref,
                    written=match.group(),
                    value=date_match.value.isoformat(),
                    form=form,
                    role=role.keyword if role is not None else "none",
                    why=why,
                    kept=(span_ref, epoch_micros(date_match.value)) in kept,
                )
            )
    return explained


_SPEC_V1_GROUPS = ("iso_y", "dmy_y", "mdy_y")
_SPEC_V1_FORMS = {"iso_y": "iso", "dmy_y": "day month year", "mdy_y": "month day, year"}


def _contracts_v2(
    projection: Projection, fired: list[Ambiguity], kept: set[tuple[int | None, int | None]]
) -> Explanation:
    from richdoc.detection.contracts import gather

    evidence = gather(projection, every_mention=True)
    placed: list[tuple[int, int, MentionExplained]] = [
        (
            m.span_ref,
            m.start,
            MentionExplained(
                span_ref=m.span_ref,
                written=m.written,
                value=m.value.isoformat(),
                form=m.form.value,
                role=m.role.value,
                why=m.assigned.why,
                kept=(m.span_ref, epoch_micros(m.value)) in kept,
                note=(
                    f"read {evidence.slash_order.value}; could be {m.other_reading.isoformat()}"
                    if m.other_reading is not None
                    else None
                ),
            ),
        )
        for m in evidence.mentions
    ]
    placed += [
        (
            span_ref,
            found.start,
            MentionExplained(
                span_ref=span_ref,
                written=found.numeric.text if found.numeric is not None else "",
                value=None,
                form=found.form.value,
                role="none",
                why="a stamp, or no real date in either reading",
                kept=False,
            ),
        )
        for span_ref, found in evidence.dropped
    ]
    placed.sort(key=lambda item: (item[0], item[1]))
    mentions = [explained for _, _, explained in placed]
    return Explanation(
        rules=DetectionRules.CONTRACTS_V2.value,
        fired=[a.kind.value for a in fired],
        mentions=mentions,
        events=[
            EventExplained(span_ref=e.span_ref, clause=e.text, event=e.kind.value)
            for e in evidence.events
        ],
        slash_dates=evidence.slash_order.value
        + (" (proven by the document)" if evidence.slash_order_proven else " (not proven)"),
    )
