"""Reading state machine executions (shared by the end-to-end tests and the benchmarks)."""

from __future__ import annotations

from typing import Any


def largest_payload(events: list[dict[str, Any]]) -> int:
    """The largest state input or output in an execution's history, in bytes: what
    Step Functions holds against its 262,144-byte limit."""
    return max(
        len(details[field].encode())
        for event in events
        for details in event.values()
        if isinstance(details, dict)
        for field in ("input", "output", "parameters")
        if isinstance(details.get(field), str)
    )
