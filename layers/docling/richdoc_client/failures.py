"""The failure kinds: the closed vocabulary a failed job's record, dead letter and
completion event carry (the taxonomy's routes are in docs/architecture.md)."""

from __future__ import annotations

from enum import StrEnum


class FailureKind(StrEnum):
    CORRUPT_INPUT = "corrupt_input"
    UNSUPPORTED_FEATURE = "unsupported_feature"
    RESOURCE_LIMIT = "resource_limit"
    TRANSIENT = "transient"
    # Anything the taxonomy does not name: recorded and dead-lettered, never retried.
    INTERNAL = "internal"
