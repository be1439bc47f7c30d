"""Parameter values, checked as CloudFormation checks them before it creates or updates
anything: a name the template does not declare, a value outside ``AllowedValues``, a
``Number`` that is no number or outside ``MinValue``..``MaxValue``, a ``String`` that does
not match the whole ``AllowedPattern`` or is shorter than ``MinLength`` or longer than
``MaxLength`` is refused, with the parameter's ``ConstraintDescription`` when it has one
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/parameters-section-structure.html).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class ParameterError(ValueError):
    """Parameter values the template refuses (unknown name, out of range, not allowed)."""


def check_values(specs: Mapping[str, Any], values: Mapping[str, str]) -> None:
    """Refuse what CloudFormation would refuse of ``values`` under the template's
    ``Parameters`` section (``specs``)."""
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None:
            raise ParameterError(f"{name} is not a parameter of template.yaml")
        problem = _problem(spec, str(value))
        if problem is not None:
            shown = "(hidden)" if str(spec.get("NoEcho", "")).lower() == "true" else value
            why = spec.get("ConstraintDescription") or problem
            raise ParameterError(f"{name}={shown}: {why}")


def _problem(spec: Mapping[str, Any], value: str) -> str | None:
    allowed = [str(a) for a in spec.get("AllowedValues", [])]
    if allowed and value not in allowed:
        return f"must be one of {', '.join(allowed)}"
    if spec.get("Type") == "Number":
        try:
            number = float(value)
        except ValueError:
            return "not a number"
        if "MinValue" in spec and number < float(spec["MinValue"]):
            return f"at least {spec['MinValue']}"
        if "MaxValue" in spec and number > float(spec["MaxValue"]):
            return f"at most {spec['MaxValue']}"
        return None
    if "AllowedPattern" in spec and re.fullmatch(str(spec["AllowedPattern"]), value) is None:
        return f"must match pattern {spec['AllowedPattern']}"
    if "MinLength" in spec and len(value) < int(spec["MinLength"]):
        return f"at least {spec['MinLength']} characters"
    if "MaxLength" in spec and len(value) > int(spec["MaxLength"]):
        return f"at most {spec['MaxLength']} characters"
    return None
