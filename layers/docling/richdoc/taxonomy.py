"""The typed failure taxonomy shared by every step, the state machine and the CLI.

A failure has a kind (what the orchestration should do about it), a reason (what a human
reads), and for unsupported features a feature tag. The Lambda error name is the
exception class name, because the Python Lambda runtime reports ``type(exc).__name__`` as
``errorType`` and Step Functions matches Retry/Catch on it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from enum import StrEnum


class FailureKind(StrEnum):
    CORRUPT_INPUT = "corrupt_input"
    UNSUPPORTED_FEATURE = "unsupported_feature"
    RESOURCE_LIMIT = "resource_limit"
    TRANSIENT = "transient"
    # Anything the taxonomy does not name: recorded and dead-lettered, never retried.
    INTERNAL = "internal"


class PipelineError(Exception):
    """Base of the typed failures. Subclasses fix ``kind`` and the parse exit code."""

    kind: FailureKind = FailureKind.INTERNAL
    exit_code: int = 1

    def __init__(self, reason: str, *, feature: str | None = None) -> None:
        self.reason = reason
        self.feature = feature
        super().__init__(reason)

    def failure(self) -> Failure:
        return Failure(kind=self.kind, reason=self.reason, feature=self.feature)


class CorruptInput(PipelineError):
    kind = FailureKind.CORRUPT_INPUT
    exit_code = 10


class UnsupportedFeature(PipelineError):
    kind = FailureKind.UNSUPPORTED_FEATURE
    exit_code = 20

    def __init__(self, reason: str, *, feature: str) -> None:
        super().__init__(reason, feature=feature)

    def __str__(self) -> str:
        # The tag travels inside the Lambda errorMessage: "[encrypted] PDF is encrypted".
        return f"[{self.feature}] {self.reason}"


class ResourceLimit(PipelineError):
    kind = FailureKind.RESOURCE_LIMIT
    exit_code = 30


class Transient(PipelineError):
    kind = FailureKind.TRANSIENT
    # Any exit code the taxonomy does not reserve means transient; 75 is EX_TEMPFAIL.
    exit_code = 75


ERRORS_BY_KIND: dict[FailureKind, type[PipelineError]] = {
    cls.kind: cls for cls in (CorruptInput, UnsupportedFeature, ResourceLimit, Transient)
}

# Error names the Lambda platform and Step Functions raise on their own, by the kind
# they mean. The state machine's Retry/Catch lists are checked against these in tests.
PLATFORM_RESOURCE_LIMIT_ERRORS: tuple[str, ...] = (
    "Sandbox.Timedout",
    "Runtime.OutOfMemory",
    "Runtime.ExitError",
    "States.Timeout",
    "Lambda.Unknown",
)
PLATFORM_TRANSIENT_ERRORS: tuple[str, ...] = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "Lambda.ClientExecutionTimeoutException",
)

ERROR_NAMES_BY_KIND: dict[FailureKind, tuple[str, ...]] = {
    FailureKind.CORRUPT_INPUT: ("CorruptInput",),
    FailureKind.UNSUPPORTED_FEATURE: ("UnsupportedFeature",),
    FailureKind.RESOURCE_LIMIT: ("ResourceLimit", *PLATFORM_RESOURCE_LIMIT_ERRORS),
    FailureKind.TRANSIENT: ("Transient", *PLATFORM_TRANSIENT_ERRORS),
}


def kind_of_error_name(error_name: str) -> FailureKind:
    for kind, names in ERROR_NAMES_BY_KIND.items():
        if error_name in names:
            return kind
    return FailureKind.INTERNAL


def kind_of_exit_code(code: int) -> FailureKind:
    """Parse worker exit codes: 0 ok, 10 corrupt, 20 unsupported, 30 resource, else transient.

    Negative codes (killed by a signal) are resource limits: the usual killer is the
    memory ceiling or the kernel's OOM killer.
    """
    if code < 0:
        return FailureKind.RESOURCE_LIMIT
    for kind, cls in ERRORS_BY_KIND.items():
        if kind is not FailureKind.TRANSIENT and cls.exit_code == code:
            return kind
    return FailureKind.TRANSIENT


_FEATURE_PREFIX = re.compile(r"^\[(?P<feature>[^\]\s]+)\] (?P<reason>.*)$", re.DOTALL)


@dataclass(frozen=True)
class Failure:
    """A classified failure, as recorded on the job and attached to dead-letter messages."""

    kind: FailureKind
    reason: str
    feature: str | None = None
    error: str | None = None  # the Lambda / Step Functions error name that carried it

    def to_json_line(self) -> str:
        data = asdict(self)
        data["kind"] = str(self.kind)
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_error(cls, error_name: str, cause: str | None) -> Failure:
        """Classify what a Step Functions Catch hands over (``Error`` and ``Cause``).

        For a Lambda function error the cause is the runtime's JSON envelope
        (``errorMessage``, ``errorType``, ``stackTrace``); for platform and States.* errors
        it is free text or absent.
        """
        message = cause or ""
        if cause:
            try:
                envelope = json.loads(cause)
            except ValueError:
                envelope = None
            if isinstance(envelope, dict) and "errorMessage" in envelope:
                message = str(envelope["errorMessage"])
        kind = kind_of_error_name(error_name)
        feature = None
        if kind is FailureKind.UNSUPPORTED_FEATURE:
            match = _FEATURE_PREFIX.match(message)
            if match:
                feature, message = match["feature"], match["reason"]
        return cls(kind=kind, reason=message or error_name, feature=feature, error=error_name)


def error_for(failure: Failure) -> PipelineError:
    """The exception that re-raises a classified failure (used by the parse parent)."""
    if failure.kind is FailureKind.UNSUPPORTED_FEATURE:
        return UnsupportedFeature(failure.reason, feature=failure.feature or "unknown")
    cls = ERRORS_BY_KIND.get(failure.kind)
    if cls is None:
        return PipelineError(failure.reason)
    return cls(failure.reason)
