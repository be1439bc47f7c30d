"""The embedded stack's IAM evaluator (richdoc_tools.local.strict.policies): IAM's rules for one
role's identity-based policies, and conditions it cannot evaluate never allowing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from richdoc_tools.local.strict.policies import (
    AuthorizationRequest,
    ConditionValues,
    Decision,
    PolicyDocument,
    evaluate,
    wildcard_match,
)

TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/jobs"
BUCKET = "arn:aws:s3:::ingest"
CONTEXT: dict[str, ConditionValues] = {
    "aws:SecureTransport": ("true",),
    "aws:SourceArn": (),
    "aws:PrincipalAccount": ("123456789012",),
}


def policy(*statements: dict[str, Any]) -> PolicyDocument:
    return PolicyDocument.parse("test", {"Version": "2012-10-17", "Statement": list(statements)})


def decide(
    document: PolicyDocument,
    action: str,
    resource: str,
    context: dict[str, ConditionValues] | None = None,
) -> Decision:
    request = AuthorizationRequest(action=action, resource=resource)
    return evaluate([document], request, CONTEXT if context is None else context).decision


def test_an_action_allowed_on_its_resource_is_allowed_and_elsewhere_implicitly_denied() -> None:
    document = policy({"Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": TABLE})
    assert decide(document, "dynamodb:UpdateItem", TABLE) is Decision.ALLOWED
    assert decide(document, "dynamodb:UpdateItem", f"{TABLE}/index/by-status") is (
        Decision.IMPLICIT_DENY
    )
    assert decide(document, "dynamodb:DeleteItem", TABLE) is Decision.IMPLICIT_DENY


def test_actions_match_case_insensitively_and_resources_case_sensitively() -> None:
    document = policy({"Effect": "Allow", "Action": "S3:getobject", "Resource": f"{BUCKET}/docs/*"})
    assert decide(document, "s3:GetObject", f"{BUCKET}/docs/a.pdf") is Decision.ALLOWED
    assert decide(document, "s3:GetObject", f"{BUCKET}/Docs/a.pdf") is Decision.IMPLICIT_DENY


def test_wildcards_are_star_and_question_mark_only() -> None:
    assert wildcard_match("arn:aws:lambda:*:function:fn*", "arn:aws:lambda:x:function:fn-1")
    assert wildcard_match("s3:Get?bject", "s3:GetObject")
    assert not wildcard_match("a[bc]", "ab")  # brackets are literal in IAM
    assert wildcard_match("a[bc]", "a[bc]")


def test_an_explicit_deny_wins_over_any_allow() -> None:
    document = policy(
        {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3:DeleteObject", "Resource": f"{BUCKET}/*"},
    )
    assert decide(document, "s3:DeleteObject", f"{BUCKET}/k") is Decision.EXPLICIT_DENY
    assert decide(document, "s3:GetObject", f"{BUCKET}/k") is Decision.ALLOWED


def test_not_action_and_not_resource_allow_everything_else() -> None:
    document = policy(
        {"Effect": "Allow", "NotAction": "s3:DeleteObject", "NotResource": f"{BUCKET}/private/*"}
    )
    assert decide(document, "s3:GetObject", f"{BUCKET}/a") is Decision.ALLOWED
    assert decide(document, "s3:DeleteObject", f"{BUCKET}/a") is Decision.IMPLICIT_DENY
    assert decide(document, "s3:GetObject", f"{BUCKET}/private/a") is Decision.IMPLICIT_DENY


def test_conditions_on_known_keys_are_evaluated() -> None:
    document = policy(
        {
            "Effect": "Allow",
            "Action": "sqs:SendMessage",
            "Resource": "*",
            "Condition": {"Bool": {"aws:SecureTransport": "true"}},
        }
    )
    assert decide(document, "sqs:SendMessage", "arn:aws:sqs:us-east-1:1:q") is Decision.ALLOWED
    insecure = {**CONTEXT, "aws:SecureTransport": ("false",)}
    assert decide(document, "sqs:SendMessage", "arn:aws:sqs:us-east-1:1:q", insecure) is (
        Decision.IMPLICIT_DENY
    )


def test_an_absent_key_fails_a_positive_operator_and_satisfies_a_negated_or_if_exists_one() -> None:
    def allow(condition: dict[str, Any]) -> PolicyDocument:
        return policy({"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": condition})

    arn = {"aws:SourceArn": "arn:aws:events:us-east-1:1:rule/r"}
    assert decide(allow({"ArnEquals": arn}), "x:Y", "*") is Decision.IMPLICIT_DENY
    assert decide(allow({"ArnNotEquals": arn}), "x:Y", "*") is Decision.ALLOWED
    assert decide(allow({"ArnEqualsIfExists": arn}), "x:Y", "*") is Decision.ALLOWED
    assert decide(allow({"Null": {"aws:SourceArn": "true"}}), "x:Y", "*") is Decision.ALLOWED


def test_a_condition_it_cannot_evaluate_never_allows_and_is_named() -> None:
    document = policy(
        {
            "Effect": "Allow",
            "Action": "dynamodb:GetItem",
            "Resource": TABLE,
            "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["JOB#1"]}},
        }
    )
    evaluation = evaluate(
        [document], AuthorizationRequest(action="dynamodb:GetItem", resource=TABLE), CONTEXT
    )
    assert evaluation.decision is Decision.IMPLICIT_DENY
    assert evaluation.unevaluated == ("ForAllValues:StringEquals dynamodb:LeadingKeys",)


def test_a_deny_with_a_condition_it_cannot_evaluate_denies() -> None:
    document = policy(
        {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
        {
            "Effect": "Deny",
            "Action": "s3:*",
            "Resource": "*",
            "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}},
        },
    )
    assert decide(document, "s3:GetObject", f"{BUCKET}/k") is Decision.EXPLICIT_DENY


@pytest.mark.parametrize(
    ("operator", "value", "allowed"),
    [
        ("StringLike", "jobs/*", True),
        ("StringNotLike", "jobs/*", False),
        ("StringEquals", "docling/", False),
        ("StringEqualsIgnoreCase", "JOBS/RUN-1", True),
    ],
)
def test_string_operators(operator: str, value: str, allowed: bool) -> None:
    document = policy(
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": BUCKET,
            "Condition": {operator: {"s3:prefix": value}},
        }
    )
    context = {**CONTEXT, "s3:prefix": ("jobs/run-1",)}
    expected = Decision.ALLOWED if allowed else Decision.IMPLICIT_DENY
    assert decide(document, "s3:ListBucket", BUCKET, context) is expected


@given(st.text(alphabet="abc*?", max_size=6), st.text(alphabet="abc", max_size=6))
def test_a_policy_allowing_a_pattern_allows_exactly_what_the_pattern_matches(
    pattern: str, name: str
) -> None:
    document = policy(
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/{pattern}"}
    )
    decision = decide(document, "s3:GetObject", f"{BUCKET}/{name}")
    assert (decision is Decision.ALLOWED) == wildcard_match(pattern, name)
