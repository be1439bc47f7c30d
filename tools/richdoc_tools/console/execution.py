"""What an execution's history says about each state of its definition.

The Step Functions console colours a state by the events of the execution: entered and
still running, succeeded, failed, or failed with its error caught by a ``Catch``; a
state whose task was retried shows how often. ``state_runs`` reads the same from
``GetExecutionHistory``: every ``*StateEntered`` event starts an entry of its state, the
task events (``LambdaFunction*``, ``Task*``) belong to the entry their
``previousEventId`` chain leads back to, and ``*StateExited`` closes it. States inside a
Map's iterator are entered once per iteration (``MapIterationStarted`` names the index);
their entries add up. Pure: events in, one ``StateRun`` per state out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from richdoc_tools.ops.statemachine import Machine


class StateStatus(StrEnum):
    NOT_RUN = "not-run"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    CAUGHT = "caught"  # its error was caught: the execution went on by a Catch
    FAILED = "failed"
    ABORTED = "aborted"  # the execution was stopped while the state ran


# How states combine over several entries (a Map's iterations): the most telling wins.
_PRECEDENCE = [
    StateStatus.NOT_RUN,
    StateStatus.SUCCEEDED,
    StateStatus.CAUGHT,
    StateStatus.ABORTED,
    StateStatus.FAILED,
    StateStatus.RUNNING,
]
# Task events that end an attempt with an error.
_FAILED_SUFFIXES = ("Failed", "TimedOut", "StartFailed", "ScheduleFailed", "SubmitFailed")
# How an execution's end leaves the states still open.
_OPEN_AT_END = {
    "ExecutionFailed": StateStatus.FAILED,
    "ExecutionTimedOut": StateStatus.FAILED,
    "ExecutionAborted": StateStatus.ABORTED,
}


class HistoryEvent(BaseModel):
    """One event of ``GetExecutionHistory``, its ``*EventDetails`` as ``details``."""

    model_config = ConfigDict(frozen=True)

    id: int
    previous_event_id: int = 0
    type: str
    timestamp: datetime | None = None
    details: dict[str, Any] = {}

    @classmethod
    def from_api(cls, event: Mapping[str, Any]) -> HistoryEvent:
        details: Mapping[str, Any] = next(
            (v for k, v in event.items() if k.endswith("EventDetails")), {}
        )
        return cls(
            id=event["id"],
            previous_event_id=event.get("previousEventId", 0),
            type=event["type"],
            timestamp=event.get("timestamp"),
            details=dict(details),
        )

    @property
    def name(self) -> str | None:
        name = self.details.get("name")
        return str(name) if name is not None else None

    @property
    def is_task_event(self) -> bool:
        return self.type.startswith(("LambdaFunction", "Task", "Activity")) and not (
            self.type.startswith("TaskState")
        )


class StateRun(BaseModel):
    """What the history says about one state (qualified name: ``Map/State``)."""

    name: str
    status: StateStatus = StateStatus.NOT_RUN
    entered: int = 0
    retries: int = 0  # task attempts after the first, over every entry
    iterations: list[int] = []  # the Map iterations it ran in (inside an iterator)
    error: str | None = None  # the last error an attempt ended with
    cause: str | None = None
    input: str | None = None  # of its last entry, as the history holds it (JSON text)
    output: str | None = None


@dataclass
class _Entry:
    state: str  # qualified
    event: HistoryEvent
    iteration: int | None
    scheduled: int = 0
    last_failed: bool = False
    errors: list[tuple[str | None, str | None]] = field(default_factory=list)
    exited: HistoryEvent | None = None
    ended: StateStatus | None = None  # how the execution's end left it open


@dataclass(frozen=True)
class ExecutionRuns:
    states: dict[str, StateRun]
    taken: set[tuple[str, str]]  # (source, target) transitions the execution went along


def state_runs(machine: Machine, raw_events: Sequence[Mapping[str, Any]]) -> ExecutionRuns:
    """Each state of ``machine`` as the history tells it (states never entered too)."""
    events = [HistoryEvent.from_api(e) for e in raw_events]
    by_id = {e.id: e for e in events}
    located = machine.locate()
    entries: dict[int, _Entry] = {}  # by the id of their *StateEntered event
    exits: dict[int, _Entry] = {}  # by the id of their *StateExited event
    taken: set[tuple[str, str]] = set()

    def entry_before(event: HistoryEvent, wanted: Callable[[_Entry], bool]) -> _Entry | None:
        """The nearest entry the event's chain of previous events leads back to that is
        ``wanted`` (a Map's own events come after its iterations' entries)."""
        seen = by_id.get(event.previous_event_id)
        while seen is not None:
            entry = entries.get(seen.id)
            if entry is not None and wanted(entry):
                return entry
            seen = by_id.get(seen.previous_event_id)
        return None

    def any_entry(entry: _Entry) -> bool:
        return True

    def map_entry(entry: _Entry) -> bool:
        return machine.find(entry.state).type == "Map"

    for event in events:
        if event.type.endswith("StateEntered") and event.name in located:
            before = by_id.get(event.previous_event_id)
            iteration = None
            if before is not None and before.type == "MapIterationStarted":
                iteration = int(before.details.get("index", 0))
            elif before is not None and before.id in exits:
                came_from = exits[before.id]
                iteration = came_from.iteration
                taken.add((came_from.state, located[event.name]))
            entry = _Entry(located[event.name], event, iteration)
            entries[event.id] = entry
        elif event.type.endswith("StateExited"):
            exited = entry_before(event, _named(event.name))
            if exited is not None:
                exited.exited = event
                exits[event.id] = exited
        elif event.is_task_event or event.type == "MapStateFailed":
            owner = entry_before(event, map_entry if event.type == "MapStateFailed" else any_entry)
            if owner is None:
                continue
            if event.type.endswith("Scheduled"):
                owner.scheduled += 1
                owner.last_failed = False
            elif event.type.endswith(_FAILED_SUFFIXES):
                owner.errors.append((event.details.get("error"), event.details.get("cause")))
                owner.last_failed = True
        elif event.type in _OPEN_AT_END:
            for entry in entries.values():
                if entry.exited is None:
                    entry.ended = _OPEN_AT_END[event.type]

    runs = {name: StateRun(name=name) for name in machine.qualified_names()}
    for entry in entries.values():
        _add(runs[entry.state], entry, machine)
    return ExecutionRuns(states=runs, taken=taken)


def _named(name: str | None) -> Callable[[_Entry], bool]:
    return lambda entry: entry.event.name == name


def _add(run: StateRun, entry: _Entry, machine: Machine) -> None:
    run.entered += 1
    run.retries += max(0, entry.scheduled - 1)
    if entry.iteration is not None and entry.iteration not in run.iterations:
        run.iterations = sorted([*run.iterations, entry.iteration])
    if entry.errors:
        run.error, run.cause = entry.errors[-1]
    run.input = _text(entry.event.details.get("input"))
    if entry.exited is not None:
        run.output = _text(entry.exited.details.get("output"))
    status = _status(entry, machine.find(entry.state).type)
    if _PRECEDENCE.index(status) > _PRECEDENCE.index(run.status):
        run.status = status


def _status(entry: _Entry, state_type: str) -> StateStatus:
    if state_type == "Fail":
        return StateStatus.FAILED
    if entry.exited is None:
        return entry.ended or StateStatus.RUNNING
    return StateStatus.CAUGHT if entry.last_failed else StateStatus.SUCCEEDED


def _text(value: object) -> str | None:
    """A state's input or output for reading: its JSON indented (as the history has it
    when it is not JSON)."""
    if value is None:
        return None
    try:
        return json.dumps(json.loads(str(value)), indent=2, ensure_ascii=False)
    except ValueError:
        return str(value)
