"""Which rule set detection runs (docs/detection.md, "Rule sets").

``spec-v1`` is the projection spec's rules to the letter; ``contracts-v2`` reads dates as
contracts write them and gives each one the role its place in the contract gives it. The
deployment chooses one (the template's ``DetectionRules``, the detect function's
``RICHDOC_DETECTION_RULES``); detection.json names the one that ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

DETECTION_RULES_ENV = "RICHDOC_DETECTION_RULES"


class DetectionRules(StrEnum):
    SPEC_V1 = "spec-v1"
    CONTRACTS_V2 = "contracts-v2"


DEFAULT_RULES = DetectionRules.CONTRACTS_V2


def detection_rules_setting(environ: Mapping[str, str] | None = None) -> DetectionRules:
    """``RICHDOC_DETECTION_RULES``: contracts-v2 (the default) or spec-v1."""
    env = os.environ if environ is None else environ
    raw = env.get(DETECTION_RULES_ENV, "").strip() or DEFAULT_RULES.value
    try:
        return DetectionRules(raw)
    except ValueError:
        choices = " or ".join(rules.value for rules in DetectionRules)
        raise ValueError(f"{DETECTION_RULES_ENV} must be {choices}, not {raw!r}") from None
