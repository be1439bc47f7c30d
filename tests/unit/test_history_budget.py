"""The execution history's budget: the most events one execution of the definition can
write (richdoc_tools.ops.history), and the shard count it allows, derived from the ASL."""

from __future__ import annotations

from typing import Any

import pytest
from richdoc_tools.ops.history import (
    HISTORY_QUOTA,
    CyclicDefinition,
    iteration_events,
    max_map_items,
    worst_case_events,
)
from richdoc_tools.ops.statemachine import Machine

from richdoc.formats import DocFormat
from richdoc.parse.shard_plan import MAX_SHARDS, plan_shards


def test_the_most_shards_a_plan_asks_for_fit_the_history_at_the_worst(
    definition: dict[str, Any],
) -> None:
    # Every retrier of every task exhausted, on the longest route, in every iteration.
    assert worst_case_events(definition, MAX_SHARDS) <= HISTORY_QUOTA
    assert max_map_items(definition) >= MAX_SHARDS
    # The figures docs/shards.md gives ("Budgets").
    shards = Machine.from_definition(definition)["ParseShards"].iterator
    assert shards is not None
    iteration = iteration_events(shards)
    assert (iteration, worst_case_events(definition, 0)) == (305, 629)  # 0: a whole document
    # 485: the claim of the shards' slots (a records task, 50 events at its worst) and
    # its fallback (a Pass, 2) on top of the 433 before them.
    assert worst_case_events(definition, MAX_SHARDS) == 485 + MAX_SHARDS * iteration == 24_885


def test_the_longest_pdf_on_the_small_profile_keeps_its_25_page_shards() -> None:
    plan = plan_shards(DocFormat.PDF, 2000, 25)  # MaxPages at the small profile's size
    assert plan.shard_count == MAX_SHARDS and max(r.page_count for r in plan.ranges) == 25


def _task(**retry: int) -> dict[str, Any]:
    rules = [{"ErrorEquals": [f"E{i}"], "MaxAttempts": n} for i, n in enumerate(retry.values())]
    return {"Type": "Task", "Resource": "arn:task", "Retry": rules, "End": True}


def test_a_task_writes_three_events_an_attempt_and_every_retrier_counts() -> None:
    definition = {"StartAt": "T", "States": {"T": _task(a=2, b=3)}}
    # started + (entered + 6 attempts x 3 + exited) + ended
    assert worst_case_events(definition, 0) == 2 + 2 + 3 * 6
    bare = {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "r", "End": True}}}
    assert worst_case_events(bare, 0) == 2 + 5
    default = {"Type": "Task", "Resource": "r", "Retry": [{"ErrorEquals": ["x"]}], "End": True}
    assert worst_case_events({"StartAt": "T", "States": {"T": default}}, 0) == 2 + 2 + 3 * 4


def test_a_map_iteration_of_one_task_is_seven_events_as_measured() -> None:
    # docs/shards.md measured 7 events for an iteration whose task succeeds at once.
    iterator = {"StartAt": "P", "States": {"P": {"Type": "Task", "Resource": "r", "End": True}}}
    definition = {
        "StartAt": "M",
        "States": {
            "M": {"Type": "Map", "ItemProcessor": iterator, "Next": "Done"},
            "Done": {"Type": "Succeed"},
        },
    }
    assert iteration_events(Machine.from_definition(iterator)) == 7
    assert worst_case_events(definition, 10) == 2 + 4 + 10 * 7 + 2
    assert max_map_items(definition, quota=100) == (100 - 8) // 7


def test_the_longest_route_counts_catches_and_choices() -> None:
    definition = {
        "StartAt": "T",
        "States": {
            "T": {
                **_task(a=1),
                "End": False,
                "Next": "Ok",
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}],
            },
            "Ok": {"Type": "Succeed"},
            "Failed": {"Type": "Pass", "Next": "Record"},
            "Record": _task(a=4),
        },
    }
    task, record = 2 + 3 * 2, 2 + 3 * 5
    assert worst_case_events(definition, 0) == 2 + task + 2 + record


def test_a_definition_with_a_loop_has_no_worst_case() -> None:
    definition = {
        "StartAt": "A",
        "States": {
            "A": {"Type": "Pass", "Next": "B"},
            "B": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.x", "IsPresent": True, "Next": "A"}],
                "Default": "C",
            },
            "C": {"Type": "Succeed"},
        },
    }
    with pytest.raises(CyclicDefinition):
        worst_case_events(definition, 0)
