"""What the records function is asked: a state machine action (answered by ``actions``),
or an event EventBridge delivers, an execution's status change or the sweep's schedule
(answered by ``backstops``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from richdoc.records.backstops import STATUS_CHANGE, ExecutionStatusChangeEvent
from richdoc.records.calls import RECORDS_ACTION, RecordsActions, ScheduledSweep

SCHEDULED = "Scheduled Event"

RecordsRequest = RecordsActions | ExecutionStatusChangeEvent | ScheduledSweep


def parse_request(event: Mapping[str, Any]) -> RecordsRequest:
    """A state machine action, or an event EventBridge delivers (an execution's status
    change, the sweep's schedule)."""
    if event.get("detail-type") == STATUS_CHANGE:
        return ExecutionStatusChangeEvent.model_validate(event)
    if event.get("detail-type") == SCHEDULED:
        return ScheduledSweep.model_validate(event)
    return RECORDS_ACTION.validate_python(event)
