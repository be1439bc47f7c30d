"""The most events one execution of the definition can write to its history.

A Standard execution keeps at most 25,000 history events (Step Functions' service
quotas); one more and the execution fails, whatever its states would have caught. A
sharded document's Map state writes every iteration's events into that one history, so
the number of shards a plan may ask for is bounded by the definition's worst case: every
retrier of every task exhausted, on the longest route, in every iteration.

Events per state, as Step Functions writes them (``HistoryEvent`` types):

* a Task: entered and exited (2), and per attempt scheduled, started and succeeded or
  failed (3; a Lambda throttle or an SDK integration's start failure writes fewer).
  Attempts: the first, plus each retrier's ``MaxAttempts`` (default 3); retriers count
  on their own, so the worst case is all of them;
* a Pass, Choice, Wait or Succeed: entered and exited (2); a Fail: entered (1);
* a Map: entered, started, succeeded or failed, exited (4), and per iteration started
  and succeeded, failed or aborted (2) around the iterator's own worst route;
* the execution: started, and succeeded, failed or timed out (2).

``worst_case_events`` adds these up along the longest route (routes are acyclic here:
a definition with a loop has no worst case, and is refused). ``max_map_items`` is how
many iterations fit the quota. ``tests/unit/test_history_budget.py`` holds
``richdoc.parse.shard_plan.MAX_SHARDS`` to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from richdoc_tools.ops.statemachine import Machine, State

# Step Functions Standard: history events per execution.
HISTORY_QUOTA = 25_000
EXECUTION_EVENTS = 2  # ExecutionStarted, and how it ended
TASK_EVENTS = 2  # TaskStateEntered, TaskStateExited
ATTEMPT_EVENTS = 3  # e.g. LambdaFunctionScheduled, ...Started, ...Succeeded or ...Failed
STATE_EVENTS = 2  # entered, exited: Pass, Choice, Wait, Succeed
FAIL_EVENTS = 1  # FailStateEntered (the execution's end is counted once, above)
MAP_EVENTS = 4  # MapStateEntered, MapStateStarted, MapStateSucceeded/Failed, ...Exited
ITERATION_EVENTS = 2  # MapIterationStarted, MapIterationSucceeded/Failed/Aborted
DEFAULT_MAX_ATTEMPTS = 3  # a retrier's MaxAttempts when it gives none (ASL)


class CyclicDefinition(ValueError):
    """A route of the definition comes back to a state: no worst case exists."""


def task_attempts(state: State) -> int:
    """The most times a task runs: once, and every retry each of its retriers allows."""
    return 1 + sum(
        int(rule.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS))
        for rule in state.definition.get("Retry", ())
    )


def state_events(state: State, map_items: int) -> int:
    """The most events one state writes itself (a Map: with ``map_items`` iterations)."""
    if state.type == "Task":
        return TASK_EVENTS + ATTEMPT_EVENTS * task_attempts(state)
    if state.type == "Fail":
        return FAIL_EVENTS
    if state.type == "Map":
        assert state.iterator is not None
        return MAP_EVENTS + map_items * iteration_events(state.iterator)
    return STATE_EVENTS


def iteration_events(iterator: Machine) -> int:
    """The most events one iteration of a Map writes (inner Maps with no items)."""
    return ITERATION_EVENTS + longest_route(iterator, 0)


def longest_route(machine: Machine, map_items: int) -> int:
    """The most events a run of ``machine`` writes from its start to any end."""

    @cache
    def from_state(name: str, visiting: frozenset[str]) -> int:
        if name in visiting:
            raise CyclicDefinition(f"the route through {name} comes back to it")
        state = machine[name]
        onward = [from_state(t.target, visiting | {name}) for t in state.transitions]
        return state_events(state, map_items) + max(onward, default=0)

    return from_state(machine.start_at, frozenset())


def worst_case_events(definition: Mapping[str, Any], map_items: int) -> int:
    """The most history events one execution writes when its Map states have
    ``map_items`` items: every retry on the longest route, in every iteration."""
    return EXECUTION_EVENTS + longest_route(Machine.from_definition(definition), map_items)


def max_map_items(definition: Mapping[str, Any], quota: int = HISTORY_QUOTA) -> int:
    """The most Map items whose worst case still fits ``quota`` events (0 when not even
    an empty Map does)."""
    low, high = 0, quota  # more items than events cannot fit
    if worst_case_events(definition, 0) > quota:
        return 0
    while low < high:  # the worst case only grows with the items
        middle = (low + high + 1) // 2
        if worst_case_events(definition, middle) <= quota:
            low = middle
        else:
            high = middle - 1
    return low
