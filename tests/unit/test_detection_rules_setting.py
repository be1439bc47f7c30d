"""The deployment's rule set (the template's DetectionRules, RICHDOC_DETECTION_RULES)."""

from __future__ import annotations

import pytest

from richdoc.detection.ruleset import DEFAULT_RULES, DetectionRules, detection_rules_setting


def test_contracts_v2_is_the_default() -> None:
    assert DEFAULT_RULES is DetectionRules.CONTRACTS_V2
    assert detection_rules_setting({}) is DetectionRules.CONTRACTS_V2
    assert detection_rules_setting({"RICHDOC_DETECTION_RULES": " "}) is DetectionRules.CONTRACTS_V2


@pytest.mark.parametrize("rules", list(DetectionRules))
def test_each_rule_set_is_chosen_by_its_name(rules: DetectionRules) -> None:
    assert detection_rules_setting({"RICHDOC_DETECTION_RULES": rules.value}) is rules


@pytest.mark.parametrize("raw", ["v2", "Contracts-V2", "spec"])
def test_another_value_is_a_configuration_error_naming_the_choices(raw: str) -> None:
    with pytest.raises(ValueError, match="spec-v1 or contracts-v2"):
        detection_rules_setting({"RICHDOC_DETECTION_RULES": raw})


def test_the_template_offers_exactly_the_rule_sets_and_defaults_to_the_code_default() -> None:
    from richdoc_tools.local.cloudformation.template import load_template

    parameter = load_template().cfn["Parameters"]["DetectionRules"]
    assert set(parameter["AllowedValues"]) == {rules.value for rules in DetectionRules}
    assert parameter["Default"] == DEFAULT_RULES.value
    detect = load_template().cfn["Resources"]["DetectFunction"]["Properties"]
    assert detect["Environment"]["Variables"]["RICHDOC_DETECTION_RULES"] == {
        "Ref": "DetectionRules"
    }
