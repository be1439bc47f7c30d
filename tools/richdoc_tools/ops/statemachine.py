"""The state machine definition as a graph: states, the transitions between them, a Map's
iterator.

``statemachine/pipeline.asl.json`` is the whole story of a job. Tools that need its shape
read it through this model instead of walking the JSON themselves: the console draws it
(and colours it from an execution's history), and the contract test walks every route
with it. A transition has a kind: ``next`` (a state's ``Next``), ``catch`` (a ``Catch``
with its error names and ``ResultPath``), ``choice`` (one rule of a Choice state) or
``default`` (a Choice state's ``Default``). A Map state's iterator is a machine of its
own, whose states are named ``Map/State`` when qualified.

The model keeps each state's definition as written (``State.definition``): what a state
does with its data (Parameters, paths) is for its readers to interpret.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

# How a qualified name joins a Map state and a state of its iterator.
SEPARATOR = "/"


class TransitionKind(StrEnum):
    NEXT = "next"
    CATCH = "catch"
    CHOICE = "choice"
    DEFAULT = "default"


@dataclass(frozen=True)
class Transition:
    """One way out of a state, to ``target`` (a state of the same machine)."""

    source: str
    target: str
    kind: TransitionKind
    errors: tuple[str, ...] = ()  # a catch's ErrorEquals
    result_path: str | None = "$"  # a catch's ResultPath (null keeps the input)
    rule: Mapping[str, Any] | None = None  # a choice's rule, as written

    @property
    def label(self) -> str:
        """A short description: the errors a catch takes, the test a choice makes."""
        if self.kind is TransitionKind.CATCH:
            return ", ".join(self.errors)
        if self.kind is TransitionKind.CHOICE and self.rule is not None:
            return describe_rule(self.rule)
        if self.kind is TransitionKind.DEFAULT:
            return "otherwise"
        return ""


@dataclass(frozen=True)
class State:
    name: str
    type: str  # Task, Pass, Choice, Map, Fail, Succeed, ...
    definition: Mapping[str, Any]
    transitions: tuple[Transition, ...]
    iterator: Machine | None = None  # a Map state's ItemProcessor

    @property
    def ends(self) -> bool:
        """The state can end its machine (or its iteration): ``End``, Succeed or Fail."""
        return bool(self.definition.get("End")) or self.type in ("Succeed", "Fail")

    @property
    def next(self) -> str | None:
        """The state's ``Next`` (None when it ends or is a Choice)."""
        target = self.definition.get("Next")
        return str(target) if target is not None else None

    @property
    def catches(self) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.kind is TransitionKind.CATCH)

    @property
    def retried_errors(self) -> tuple[str, ...]:
        """Every error name a Retry rule of the state takes."""
        return tuple(
            error for rule in self.definition.get("Retry", ()) for error in rule["ErrorEquals"]
        )


@dataclass(frozen=True)
class Machine:
    start_at: str
    states: Mapping[str, State]  # in the order the definition lists them

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> Machine:
        states = {name: _state(name, raw) for name, raw in definition["States"].items()}
        return cls(start_at=str(definition["StartAt"]), states=states)

    @classmethod
    def load(cls, path: Path) -> Machine:
        """The definition in the file ``path`` (the console reads the deployed one)."""
        return cls.from_definition(json.loads(path.read_text()))

    def __getitem__(self, name: str) -> State:
        return self.states[name]

    def transitions(self) -> Iterator[Transition]:
        for state in self.states.values():
            yield from state.transitions

    def walk(self, prefix: str = "") -> Iterator[tuple[str, State]]:
        """Every state with its qualified name, a Map's iterator right after the Map."""
        for name, state in self.states.items():
            yield prefix + name, state
            if state.iterator is not None:
                yield from state.iterator.walk(prefix + name + SEPARATOR)

    def qualified_names(self) -> set[str]:
        return {name for name, _ in self.walk()}

    def locate(self) -> dict[str, str]:
        """Each state's qualified name by its own name. A history names states without
        their Map; a name that several machines use maps to its first occurrence."""
        located: dict[str, str] = {}
        for qualified, _ in self.walk():
            located.setdefault(qualified.rsplit(SEPARATOR, 1)[-1], qualified)
        return located

    def find(self, qualified: str) -> State:
        """The state of a qualified name (``Map/State`` inside a Map's iterator)."""
        machine, *inner = qualified.split(SEPARATOR)
        state = self.states[machine]
        for name in inner:
            assert state.iterator is not None, f"{state.name} is not a Map state"
            state = state.iterator.states[name]
        return state


def _state(name: str, raw: Mapping[str, Any]) -> State:
    kind = str(raw["Type"])
    transitions: list[Transition] = []
    if "Next" in raw:
        transitions.append(Transition(name, str(raw["Next"]), TransitionKind.NEXT))
    for rule in raw.get("Choices", ()):
        transitions.append(Transition(name, str(rule["Next"]), TransitionKind.CHOICE, rule=rule))
    if "Default" in raw:
        transitions.append(Transition(name, str(raw["Default"]), TransitionKind.DEFAULT))
    for catcher in raw.get("Catch", ()):
        transitions.append(
            Transition(
                name,
                str(catcher["Next"]),
                TransitionKind.CATCH,
                errors=tuple(catcher["ErrorEquals"]),
                result_path=catcher.get("ResultPath", "$"),
            )
        )
    processor = raw.get("ItemProcessor") or raw.get("Iterator")
    iterator = Machine.from_definition(processor) if kind == "Map" and processor else None
    return State(name, kind, raw, tuple(transitions), iterator)


# Choice comparison operators (by the end of their name), as a reader writes them; the
# longer names first, so that LessThanEquals is not read as Equals.
_OPERATORS = (
    ("LessThanEquals", "<="),
    ("GreaterThanEquals", ">="),
    ("LessThan", "<"),
    ("GreaterThan", ">"),
    ("Equals", "=="),
    ("Matches", "matches"),
)


def describe_rule(rule: Mapping[str, Any]) -> str:
    """A Choice rule as a short expression: ``$.failure.kind == "corrupt_input"``."""
    if "And" in rule or "Or" in rule:
        joiner = " and " if "And" in rule else " or "
        return joiner.join(f"({describe_rule(r)})" for r in rule.get("And", rule.get("Or", ())))
    if "Not" in rule:
        return f"not ({describe_rule(rule['Not'])})"
    variable = rule.get("Variable", "?")
    for key, value in rule.items():
        if key in ("Variable", "Next"):
            continue
        for suffix, operator in _OPERATORS:
            if key.endswith(suffix) or key.endswith(suffix + "Path"):
                return f"{variable} {operator} {json.dumps(value)}"
        return f"{variable} {key} {json.dumps(value)}"
    return str(variable)
