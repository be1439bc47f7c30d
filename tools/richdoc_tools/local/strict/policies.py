"""IAM policy evaluation, as the embedded stack enforces it: identity-based policies of one
role, against one request (an action on a resource, with the request's condition keys).

The rules are IAM's (the IAM User Guide's "Policy evaluation logic" and "IAM JSON policy
elements reference"): a request is allowed when some statement allows it and none denies
it; an explicit Deny wins; anything else is an implicit deny. ``Action``/``NotAction``
match case-insensitively with ``*`` and ``?``; ``Resource``/``NotResource`` match
case-sensitively with the same wildcards. ``Condition`` blocks are evaluated for the
operators below (with ``...IfExists`` and the ``ForAnyValue:``/``ForAllValues:`` set
operators) over the keys the request states. What cannot be evaluated (an operator not
listed, a condition key the emulation does not know for the request) never allows: an
Allow statement carrying it does not apply, and a Deny statement carrying it does; the
evaluation says which condition it could not evaluate, and the denial's message carries it.

Pure and deterministic: no AWS calls here (``richdoc_tools.local.strict.access`` loads the
policies and resolves each request's action and resource).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

ConditionValues = tuple[str, ...]


class Effect(StrEnum):
    ALLOW = "Allow"
    DENY = "Deny"


class Statement(BaseModel):
    """One statement of a policy document, its lists normalised."""

    model_config = ConfigDict(frozen=True)

    effect: Effect
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] | None = None
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] | None = None
    # operator -> condition key -> values
    conditions: Mapping[str, Mapping[str, ConditionValues]] = Field(default_factory=dict)


class PolicyDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str  # where it came from: "<role>/<inline name>" or a managed policy's ARN
    statements: tuple[Statement, ...]

    @classmethod
    def parse(cls, name: str, document: Mapping[str, Any]) -> PolicyDocument:
        raw = document.get("Statement", [])
        return cls(name=name, statements=tuple(_statement(s) for s in _listed(raw)))


class AuthorizationRequest(BaseModel):
    """One permission a request needs: an IAM action on a resource ARN."""

    model_config = ConfigDict(frozen=True)

    action: str  # e.g. "s3:GetObjectVersion"
    resource: str  # e.g. "arn:aws:s3:::bucket/key"


class Decision(StrEnum):
    ALLOWED = "allowed"
    IMPLICIT_DENY = "implicit deny"  # no statement allows it
    EXPLICIT_DENY = "explicit deny"


class Evaluation(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Decision
    request: AuthorizationRequest
    # Conditions this evaluation could not decide (operator and key), which is why an
    # Allow did not apply or a Deny did.
    unevaluated: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOWED


def evaluate(
    policies: Sequence[PolicyDocument],
    request: AuthorizationRequest,
    context: Mapping[str, ConditionValues],
) -> Evaluation:
    """IAM's decision for ``request`` under ``policies`` (one principal's identity-based
    policies), with the request's condition keys in ``context``: the keys the emulation
    knows for it, each with its values (a key it knows but the request lacks is absent)."""
    allowed, unevaluated = False, []
    for policy in policies:
        for statement in policy.statements:
            if not _matches(statement, request):
                continue
            outcome, unknown = _conditions_hold(statement.conditions, context)
            unevaluated.extend(unknown)
            if statement.effect is Effect.DENY and (outcome or unknown):
                return Evaluation(
                    decision=Decision.EXPLICIT_DENY,
                    request=request,
                    unevaluated=tuple(unknown),
                )
            if statement.effect is Effect.ALLOW and outcome and not unknown:
                allowed = True
    decision = Decision.ALLOWED if allowed else Decision.IMPLICIT_DENY
    return Evaluation(
        decision=decision,
        request=request,
        unevaluated=() if allowed else tuple(dict.fromkeys(unevaluated)),
    )


# ---- matching ---------------------------------------------------------------------------


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _listed(value))


def _statement(raw: Mapping[str, Any]) -> Statement:
    conditions = {
        operator: {key: _strings(values) for key, values in keys.items()}
        for operator, keys in raw.get("Condition", {}).items()
    }
    return Statement(
        effect=Effect(raw["Effect"]),
        actions=_strings(raw.get("Action", [])),
        not_actions=_strings(raw["NotAction"]) if "NotAction" in raw else None,
        resources=_strings(raw.get("Resource", [])),
        not_resources=_strings(raw["NotResource"]) if "NotResource" in raw else None,
        conditions=conditions,
    )


@functools.lru_cache(maxsize=4096)
def _pattern(glob: str, ignore_case: bool) -> re.Pattern[str]:
    # IAM's wildcards are * and ? only ([...] has no meaning), so escape the rest.
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(regex, re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def wildcard_match(glob: str, value: str, *, ignore_case: bool = False) -> bool:
    return _pattern(glob, ignore_case).fullmatch(value) is not None


def _any(globs: Iterable[str], value: str, *, ignore_case: bool) -> bool:
    return any(wildcard_match(g, value, ignore_case=ignore_case) for g in globs)


def _matches(statement: Statement, request: AuthorizationRequest) -> bool:
    if statement.not_actions is not None:
        action_ok = not _any(statement.not_actions, request.action, ignore_case=True)
    else:
        action_ok = _any(statement.actions, request.action, ignore_case=True)
    if not action_ok:
        return False
    if statement.not_resources is not None:
        return not _any(statement.not_resources, request.resource, ignore_case=False)
    return _any(statement.resources, request.resource, ignore_case=False)


# ---- conditions -------------------------------------------------------------------------

Compare = Callable[[str, str], bool]


def _arn_like(pattern: str, value: str) -> bool:
    # ARNs match part by part (six colon-separated parts); wildcards within a part.
    pattern_parts, value_parts = pattern.split(":", 5), value.split(":", 5)
    if len(pattern_parts) != len(value_parts):
        return False
    return all(wildcard_match(p, v) for p, v in zip(pattern_parts, value_parts, strict=True))


def _bool(policy: str, value: str) -> bool:
    return policy.lower() == value.lower()


def _numeric(compare: Callable[[float, float], bool]) -> Compare:
    def check(policy: str, value: str) -> bool:
        try:
            return compare(float(value), float(policy))
        except ValueError:
            return False

    return check


# operator -> (compare(policy value, request value), negated)
OPERATORS: dict[str, tuple[Compare, bool]] = {
    "StringEquals": (lambda p, v: p == v, False),
    "StringNotEquals": (lambda p, v: p == v, True),
    "StringEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), False),
    "StringNotEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), True),
    "StringLike": (lambda p, v: wildcard_match(p, v), False),
    "StringNotLike": (lambda p, v: wildcard_match(p, v), True),
    "ArnEquals": (_arn_like, False),
    "ArnLike": (_arn_like, False),
    "ArnNotEquals": (_arn_like, True),
    "ArnNotLike": (_arn_like, True),
    "Bool": (_bool, False),
    "NumericEquals": (_numeric(lambda v, p: v == p), False),
    "NumericNotEquals": (_numeric(lambda v, p: v == p), True),
    "NumericLessThan": (_numeric(lambda v, p: v < p), False),
    "NumericLessThanEquals": (_numeric(lambda v, p: v <= p), False),
    "NumericGreaterThan": (_numeric(lambda v, p: v > p), False),
    "NumericGreaterThanEquals": (_numeric(lambda v, p: v >= p), False),
}


def _conditions_hold(
    conditions: Mapping[str, Mapping[str, ConditionValues]],
    context: Mapping[str, ConditionValues],
) -> tuple[bool, list[str]]:
    """(every condition holds, the conditions that could not be evaluated)."""
    holds, unknown = True, []
    known = {key.lower(): values for key, values in context.items()}
    for operator, keys in conditions.items():
        for key, policy_values in keys.items():
            result = _condition(operator, key.lower(), policy_values, known)
            if result is None:
                unknown.append(f"{operator} {key}")
            elif not result:
                holds = False
    return holds, unknown


def _condition(
    operator: str,
    key: str,
    policy_values: ConditionValues,
    context: Mapping[str, ConditionValues],
) -> bool | None:
    """One condition: True, False, or None when it cannot be evaluated here."""
    set_operator, _, operator = operator.rpartition(":")
    if_exists = operator.endswith("IfExists")
    operator = operator.removesuffix("IfExists")
    if key not in context:
        return None  # a key the emulation does not know for this request
    values = context[key]
    if operator == "Null":
        # "true": the key must be absent; "false": present.
        return _bool(policy_values[0], "true") == (not values)
    entry = OPERATORS.get(operator)
    if entry is None or set_operator not in ("", "ForAnyValue", "ForAllValues"):
        return None
    compare, negated = entry
    if not values:
        # A key the request lacks: a positive operator does not hold, a negated one
        # (StringNotEquals, ...) does, and so do ...IfExists and ForAllValues.
        return if_exists or negated or set_operator == "ForAllValues"

    def matched(value: str) -> bool:
        hit = any(compare(policy, value) for policy in policy_values)
        return not hit if negated else hit

    if set_operator == "ForAllValues":
        return all(matched(v) for v in values)
    return any(matched(v) for v in values)
