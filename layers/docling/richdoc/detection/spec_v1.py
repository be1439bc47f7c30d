"""The ``spec-v1`` rule set: the projection spec's section 15, to the letter.

Three document-level rules, all targeting the DOCUMENT node (nodeRef 0):

1. ``conflicting_dates``: role-dated mentions carry two or more distinct dates;
2. ``relative_date``: an effectiveness marker shortly before "(the) next/following
   month/quarter/year", resolved against the document's anchor date when it has one;
3. ``undated``: no absolute date anywhere in a document of at least 200 UTF-8 bytes.

At most one ambiguity is emitted (priority in that order) and only when the job asked for
clarification; every rule that fired but was not emitted is counted in
``stats.ambiguities_suppressed``. The evidence is read from the projection's blocks only
(each span's slice of the canonical text), so every candidate's ``spanRef`` names the
block its evidence came from and nothing depends on how the projection separates blocks.
Every choice where a rule could be read two ways is recorded in docs/detection.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from richdoc.detection.blocks import blocks, text_bytes
from richdoc.detection.findings import UNDATED_MIN_BYTES, next_unit_start, undated
from richdoc.graph import Projection
from richdoc.temporal import (
    MAX_SPACE_RUN,
    SPACE,
    CalendarUnit,
    epoch_micros,
    find_dates,
    literal_pattern,
)
from richdoc_client.detection import Ambiguity, AmbiguityKind, Candidate

#: A role keyword counts for a date when at most this many characters of the block lie
#: between the keyword's last character and the date's first.
ROLE_WINDOW = 48
#: Likewise between an effectiveness marker and a relative unit phrase.
MARKER_WINDOW = 32
MAX_CONFLICT_CANDIDATES = 4


# --- lexicons -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Role:
    keyword: str
    precedence: int


ROLES: tuple[Role, ...] = (
    Role("effective", 5),
    Role("with effect from", 5),
    Role("takes effect", 5),
    Role("commencing", 5),
    Role("valid from", 5),
    Role("as of", 4),
    Role("executed", 3),
    Role("signed", 3),
    Role("signature date", 3),
    Role("dated", 2),
    Role("countersigned", 1),
)
EFFECTIVENESS_MARKERS: tuple[str, ...] = (
    "effective",
    "with effect",
    "takes effect",
    "starting",
    "commencing",
    "begins",
)


def _keyword_pattern(keywords: Sequence[str]) -> re.Pattern[str]:
    """Whole-word alternation; group ``k<i>`` names which keyword matched.

    Word boundaries on both sides settle every overlap in the lexicon: "signed" is not
    found inside "countersigned", nor "dated" inside "updated", nor "effective" inside
    "effectively".
    """
    options = (f"(?P<k{i}>{literal_pattern(k)})" for i, k in enumerate(keywords))
    return re.compile(r"(?<!\w)(?:" + "|".join(options) + r")(?!\w)")


def _longest_match(keywords: Sequence[str]) -> int:
    """Most characters a match of any of ``keywords`` can span (spaces may widen)."""
    return max(len(k) + (MAX_SPACE_RUN - 1) * k.count(" ") for k in keywords)


_ROLE_PATTERN = _keyword_pattern([role.keyword for role in ROLES])
_MARKER_PATTERN = _keyword_pattern(EFFECTIVENESS_MARKERS)
# A keyword that ends inside a window starts at most this far before the window: the
# lookbacks scan a bounded stretch of text per date or phrase, never the whole block.
_ROLE_REACH = ROLE_WINDOW + _longest_match([role.keyword for role in ROLES])
_MARKER_REACH = MARKER_WINDOW + _longest_match(EFFECTIVENESS_MARKERS)
_RELATIVE_PATTERN = re.compile(
    rf"(?<!\w)(?:{literal_pattern('the ')})?"
    rf"(?:{literal_pattern('next')}|{literal_pattern('following')}){SPACE}"
    rf"(?P<unit>{'|'.join(literal_pattern(unit) for unit in CalendarUnit)})(?!\w)"
)


# --- evidence -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DateMention:
    """One recognised date in a block; ``role`` is its best role keyword, if any."""

    span_ref: int
    value: date
    role: Role | None


@dataclass(frozen=True, slots=True)
class RelativePhrase:
    """The first effectiveness marker + relative unit phrase pair in reading order."""

    span_ref: int
    text: str  # from the marker through the unit phrase, whitespace runs collapsed
    unit: CalendarUnit


@dataclass(frozen=True, slots=True)
class Evidence:
    mentions: list[DateMention]  # reading order: span order, then position in the block
    relative: RelativePhrase | None
    text_bytes: int  # UTF-8 size of the canonical text


def _keywords_before(
    pattern: re.Pattern[str], text: str, start: int, window: int, reach: int
) -> Iterator[re.Match[str]]:
    """Keyword matches whose last character lies at most ``window`` characters before
    ``start``, in text order. Scanning starts ``reach`` characters back, where the earliest
    such keyword can begin; the lookbehind still sees the character before the scan."""
    for match in pattern.finditer(text, max(0, start - reach), start):
        if start - match.end() <= window:
            yield match


def best_role(text: str, date_start: int) -> Role | None:
    """Highest-precedence role keyword in the window before the date.

    Ties between keywords of equal precedence go to the one nearest the date.
    """
    best: Role | None = None
    for match in _keywords_before(_ROLE_PATTERN, text, date_start, ROLE_WINDOW, _ROLE_REACH):
        role = ROLES[int(str(match.lastgroup)[1:])]
        if best is None or role.precedence >= best.precedence:
            best = role
    return best


def relative_in(span_ref: int, text: str) -> RelativePhrase | None:
    """The block's first unit phrase with an effectiveness marker in its window, if any."""
    lowered = text.lower()
    # Every unit phrase contains one of these words in ASCII, so blocks without them skip
    # the regex pass (a substring search is several times cheaper).
    if "next" not in lowered and "following" not in lowered:
        return None
    for phrase in _RELATIVE_PATTERN.finditer(text):
        markers = list(
            _keywords_before(_MARKER_PATTERN, text, phrase.start(), MARKER_WINDOW, _MARKER_REACH)
        )
        if markers:  # the nearest marker starts the matched phrase
            words = text[markers[-1].start() : phrase.end()].split()
            return RelativePhrase(span_ref, " ".join(words), CalendarUnit(phrase["unit"].lower()))
    return None


def gather(projection: Projection) -> Evidence:
    """Every date mention and the first relative phrase: one date pass over every block,
    and a phrase pass over blocks until the first relative phrase is found."""
    data = text_bytes(projection)
    mentions: list[DateMention] = []
    relative: RelativePhrase | None = None
    for span_ref, text in blocks(projection, data):
        for found in find_dates(text):
            mentions.append(DateMention(span_ref, found.value, best_role(text, found.start)))
        if relative is None:
            relative = relative_in(span_ref, text)
    return Evidence(mentions, relative, len(data))


# --- rules --------------------------------------------------------------------------------


def _role_dated(mentions: list[DateMention]) -> Iterator[tuple[DateMention, Role]]:
    for mention in mentions:
        if mention.role is not None:
            yield mention, mention.role


def _conflicting_dates(evidence: Evidence) -> Ambiguity | None:
    # Per distinct date: its highest-precedence role, from the first mention carrying it.
    best: dict[date, tuple[DateMention, Role]] = {}
    for mention, role in _role_dated(evidence.mentions):
        held = best.get(mention.value)
        if held is None or role.precedence > held[1].precedence:
            best[mention.value] = (mention, role)
    if len(best) < 2:
        return None
    ranked = sorted(best.values(), key=lambda pair: (-pair[1].precedence, pair[0].value))
    return Ambiguity(
        kind=AmbiguityKind.CONFLICTING_DATES,
        detectorConfidence=0.7,
        appliedCandidateConfidence=0.55,
        candidates=[
            Candidate(
                label=f"{mention.value.isoformat()} ({role.keyword})",
                validFrom=epoch_micros(mention.value),
                spanRef=mention.span_ref,
            )
            for mention, role in ranked[:MAX_CONFLICT_CANDIDATES]
        ],
    )


def _anchor(mentions: list[DateMention]) -> DateMention | None:
    """Highest-precedence role-dated mention (the first in reading order on ties), else the
    first date mention in reading order."""
    anchor: tuple[DateMention, Role] | None = None
    for mention, role in _role_dated(mentions):
        if anchor is None or role.precedence > anchor[1].precedence:
            anchor = (mention, role)
    if anchor is not None:
        return anchor[0]
    return mentions[0] if mentions else None


def _relative_date(evidence: Evidence) -> Ambiguity | None:
    relative = evidence.relative
    if relative is None:
        return None
    anchor = _anchor(evidence.mentions)
    if anchor is None:
        return Ambiguity(
            kind=AmbiguityKind.RELATIVE_DATE,
            detectorConfidence=0.85,
            appliedCandidateConfidence=0.0,
            candidates=[
                Candidate(
                    label=f"{relative.text} (no anchor date in document)",
                    spanRef=relative.span_ref,
                )
            ],
        )
    candidates = []
    derived = next_unit_start(relative.unit, anchor.value, relative.span_ref)
    if derived is not None:
        candidates.append(derived)
    candidates.append(
        Candidate(
            label=f"{anchor.value.isoformat()} (document date)",
            validFrom=epoch_micros(anchor.value),
            spanRef=anchor.span_ref,
        )
    )
    return Ambiguity(
        kind=AmbiguityKind.RELATIVE_DATE,
        detectorConfidence=0.85,
        appliedCandidateConfidence=0.5,
        candidates=candidates,
    )


def _undated(evidence: Evidence) -> Ambiguity | None:
    if evidence.mentions or evidence.text_bytes < UNDATED_MIN_BYTES:
        return None
    return undated()


def fired_rules(evidence: Evidence) -> list[Ambiguity]:
    """Every rule that fires, in priority order (conflicting > relative > undated)."""
    findings = (_conflicting_dates(evidence), _relative_date(evidence), _undated(evidence))
    return [finding for finding in findings if finding is not None]
