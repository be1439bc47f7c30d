"""Temporal-ambiguity detection over a projection (``richdoc.detection/v1``).

Three document-level kinds of finding, all about the DOCUMENT node (nodeRef 0):
``conflicting_dates``, ``relative_date`` and ``undated``. Two rule sets decide when each
fires (``ruleset``): ``spec-v1`` (``spec_v1``, the projection spec's rules to the letter)
and ``contracts-v2`` (``contracts``, the default: dates as contracts write them, each
with the role its place gives it). Both read only the projection's blocks (``blocks``)
and share the wire shape and the gates: at most one ambiguity, emitted only when the job
asked for clarification, priority conflicting_dates > relative_date > undated, every
rule that fired but was not emitted counted in ``stats.ambiguities_suppressed``.
docs/detection.md is the contract.

The rule sets' modules are imported when first used, so a handler compiles the patterns
of the rule set it runs and no other.

The ``contracts-v2`` rule set, one module per concept: ``dates`` (every date form
contracts write), ``roles`` (whose date each mention is), ``phrases`` (the words that
govern a date), ``events`` (effectiveness that hangs on an event), ``own`` (the
document's own dates), ``conflicts`` (its ``conflicting_dates``), ``relative`` (its
``relative_date``); ``findings`` holds what both rule sets' findings share, ``trie``
word lists as one regular expression, and ``explain`` why detection found what it found
(``richdoc detect --explain``, the console).
"""

from __future__ import annotations

from richdoc.detection.ruleset import DEFAULT_RULES, DetectionRules
from richdoc.graph import Projection

# The published models of detection.json, named here for the pipeline.
from richdoc_client.detection import Ambiguity as Ambiguity
from richdoc_client.detection import AmbiguityKind as AmbiguityKind
from richdoc_client.detection import Candidate as Candidate
from richdoc_client.detection import Detection as Detection
from richdoc_client.detection import DetectionStats as DetectionStats


def fired_rules(projection: Projection, rules: DetectionRules = DEFAULT_RULES) -> list[Ambiguity]:
    """Every finding of ``rules`` on the projection, in priority order."""
    if rules is DetectionRules.SPEC_V1:
        from richdoc.detection import spec_v1

        return spec_v1.fired_rules(spec_v1.gather(projection))
    from richdoc.detection import contracts

    return contracts.fired_rules(contracts.gather(projection))


def detect(
    projection: Projection, *, clarify: bool, rules: DetectionRules = DEFAULT_RULES
) -> Detection:
    """The rules of docs/detection.md over one projection.

    With ``clarify`` the highest-priority finding is emitted and the others are counted as
    suppressed; without it nothing is emitted and every finding counts as suppressed, so
    ``ambiguities + ambiguities_suppressed`` is the number of rules that fired either way.
    """
    fired = fired_rules(projection, rules)
    emitted = fired[:1] if clarify else []
    stats = DetectionStats(
        ambiguities=len(emitted), ambiguities_suppressed=len(fired) - len(emitted)
    )
    return Detection(rules=rules.value, ambiguities=emitted, stats=stats)
