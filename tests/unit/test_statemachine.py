"""The definition as a graph (``richdoc_tools.ops.statemachine``): every transition of
statemachine/pipeline.asl.json, with its kind, and the Map's iterator."""

from __future__ import annotations

from typing import Any

from richdoc_tools.ops.statemachine import Machine, TransitionKind, describe_rule

from tests.support.paths import DEFINITION_PATH


def test_the_checkout_definition_loads_as_the_fixture_reads_it(definition: dict[str, Any]) -> None:
    assert Machine.load(DEFINITION_PATH) == Machine.from_definition(definition)


def test_every_transition_targets_a_state_of_its_own_machine() -> None:
    machine = Machine.load(DEFINITION_PATH)
    machines = [machine] + [s.iterator for _, s in machine.walk() if s.iterator is not None]
    for each in machines:
        assert each.start_at in each.states
        for transition in each.transitions():
            assert transition.target in each.states, transition


def test_transitions_carry_their_kind_errors_and_rule() -> None:
    machine = Machine.load(DEFINITION_PATH)
    parse = {(t.target, t.kind): t for t in machine["ParseTier1"].transitions}
    assert ("Project", TransitionKind.NEXT) in parse
    escalate = parse[("EscalateToTier2", TransitionKind.CATCH)]
    assert "ResourceLimit" in escalate.errors and escalate.result_path == "$.error"
    assert "ResourceLimit" in escalate.label
    sharded = {t.kind: t for t in machine["Sharded"].transitions}
    assert sharded[TransitionKind.CHOICE].target == "ClaimShardSlots"
    assert sharded[TransitionKind.CHOICE].label == "$.results.plan.sharded == true"
    assert sharded[TransitionKind.DEFAULT].target == "ParseTier1"
    assert sharded[TransitionKind.DEFAULT].label == "otherwise"
    assert "Lambda.TooManyRequestsException" in machine["Plan"].retried_errors


def test_the_map_state_has_its_iterator_and_qualified_names() -> None:
    machine = Machine.load(DEFINITION_PATH)
    shards = machine["ParseShards"]
    assert shards.type == "Map" and shards.iterator is not None
    assert shards.iterator.start_at == "ParseShardTier1"
    names = machine.qualified_names()
    assert "ParseShards/ParseShardTier1" in names and "Project" in names
    assert machine.find("ParseShards/ShardFailed").type == "Fail"
    assert machine.locate()["ParseShardTier2"] == "ParseShards/ParseShardTier2"
    # Only the iterator's ends end an iteration; the machine ends in Succeed and Fail states.
    assert shards.iterator["ParseShardTier1"].ends and not machine["Plan"].ends
    assert machine["Succeeded"].ends and machine["InternalError"].ends


def test_rules_read_as_expressions() -> None:
    assert describe_rule({"Variable": "$.n", "NumericLessThanEquals": 3}) == "$.n <= 3"
    assert describe_rule({"Variable": "$.k", "StringEquals": "a"}) == '$.k == "a"'
    assert (
        describe_rule(
            {
                "Or": [
                    {"Variable": "$.a", "IsPresent": True},
                    {"Not": {"Variable": "$.b", "BooleanEquals": False}},
                ]
            }
        )
        == "($.a IsPresent true) or (not ($.b == false))"
    )
