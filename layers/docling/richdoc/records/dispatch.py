"""What the records function is asked, and who answers it: a state machine action
(``actions``), or an event EventBridge delivers (an execution's status change for the
reconciler, the sweep's schedule: ``backstops``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from richdoc.contracts import (
    RECORDS_ACTION,
    EscalationRecorded,
    FailureRecorded,
    Reconciled,
    RecordDeadLettered,
    Recorded,
    RecordEscalation,
    RecordFailure,
    RecordsActions,
    RecordShardFailure,
    RecordStart,
    RecordSuccess,
    ScheduledSweep,
    Swept,
)
from richdoc.records.actions import Actions
from richdoc.records.backstops import STATUS_CHANGE, Backstops, ExecutionStatusChangeEvent

SCHEDULED = "Scheduled Event"

RecordsRequest = RecordsActions | ExecutionStatusChangeEvent | ScheduledSweep
RecordsResult = Recorded | EscalationRecorded | FailureRecorded | Reconciled | Swept


def parse_request(event: Mapping[str, Any]) -> RecordsRequest:
    """A state machine action, or an event EventBridge delivers (an execution's status
    change, the sweep's schedule)."""
    if event.get("detail-type") == STATUS_CHANGE:
        return ExecutionStatusChangeEvent.model_validate(event)
    if event.get("detail-type") == SCHEDULED:
        return ScheduledSweep.model_validate(event)
    return RECORDS_ACTION.validate_python(event)


def answer(request: RecordsRequest, *, actions: Actions, backstops: Backstops) -> RecordsResult:
    match request:
        case RecordStart():
            return actions.start(request)
        case RecordEscalation():
            return actions.escalate(request)
        case RecordShardFailure():
            return actions.shard_failed(request)
        case RecordSuccess():
            return actions.succeed(request)
        case RecordFailure():
            return actions.fail(request)
        case RecordDeadLettered():
            return actions.mark_dead_lettered(request)
        case ExecutionStatusChangeEvent():
            return backstops.reconcile(request)
        case ScheduledSweep():
            return backstops.sweep(request)
