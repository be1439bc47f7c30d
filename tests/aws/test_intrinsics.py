"""Template conditions and intrinsic functions resolve as CloudFormation resolves them."""

from __future__ import annotations

import pytest
from richdoc_tools.local.cloudformation.intrinsics import Deployed, Resolver
from richdoc_tools.local.cloudformation.template import TemplateError


def _resolver(**parameters: str) -> Resolver:
    return Resolver(
        stack_name="s",
        stack_id="arn:aws:cloudformation:us-east-1:123456789012:stack/s/id",
        region="us-east-1",
        account="123456789012",
        parameters=parameters,
        deployed=Deployed(),
        conditions={
            "HasEmail": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Email"}, ""]}]},
            "Both": {"Fn::And": [{"Condition": "HasEmail"}, {"Fn::Equals": ["a", "a"]}]},
            "Either": {"Fn::Or": [{"Condition": "HasEmail"}, {"Fn::Equals": ["a", "b"]}]},
        },
    )


@pytest.mark.parametrize(("email", "expected"), [("", False), ("ops@example.com", True)])
def test_conditions_and_fn_if_resolve_as_cloudformation_does(email: str, expected: bool) -> None:
    resolver = _resolver(Email=email)
    assert [resolver.condition(c) for c in ("HasEmail", "Both", "Either")] == [expected] * 3
    value = {"Fn::If": ["HasEmail", {"Ref": "Email"}, {"Ref": "AWS::NoValue"}]}
    assert resolver.resolve({"Endpoint": value}) == ({"Endpoint": email} if expected else {})


def test_a_condition_the_template_does_not_define_is_refused() -> None:
    with pytest.raises(TemplateError, match="Nope"):
        _resolver(Email="").condition("Nope")
