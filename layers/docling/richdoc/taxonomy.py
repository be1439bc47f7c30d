"""The typed failure taxonomy shared by every step, the state machine and the CLI.

A failure has a kind (what the orchestration should do about it), a reason (what a human
reads), and for unsupported features a feature tag. The Lambda error name is the
exception class name, because the Python Lambda runtime reports ``type(exc).__name__`` as
``errorType`` and Step Functions matches Retry/Catch on it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

# The published vocabulary (events carry it), named here for the pipeline.
from richdoc_client.failures import FailureKind as FailureKind

if TYPE_CHECKING:
    from pydantic import ValidationError


@dataclass(frozen=True)
class MemoryUse:
    """A parse child's memory: the ceiling it ran under and its peak resident set."""

    ceiling_mb: int
    peak_rss_mb: float | None


class PipelineError(Exception):
    """Base of the typed failures. Subclasses fix ``kind`` and the parse exit code."""

    kind: FailureKind = FailureKind.INTERNAL
    exit_code: int = 1
    # Set on a failure of the parse child: what its attempt record shows.
    memory: MemoryUse | None = None

    def __init__(self, reason: str, *, feature: str | None = None) -> None:
        self.reason = reason
        self.feature = feature
        super().__init__(reason)

    def failure(self) -> Failure:
        return Failure(kind=self.kind, reason=self.reason, feature=self.feature)


class CorruptInput(PipelineError):
    kind = FailureKind.CORRUPT_INPUT
    exit_code = 10

    @classmethod
    def not_valid(cls, schema: str, exc: ValidationError) -> CorruptInput:
        """JSON that is not a valid ``schema``: how many errors, and where the first is."""
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        return cls(
            f"not a valid {schema} JSON ({exc.error_count()} errors; "
            f"first at {where}: {first['msg']})"
        )


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


class InternalError(PipelineError):
    """A fault of the code or of its environment, not of the input: a bug in the parse
    child, a misconfigured worker (missing model weights, a broken install). Recorded
    and dead-lettered at once; retrying would only repeat it."""

    kind = FailureKind.INTERNAL
    # Reserved, so that a bug is not read as "any other code: transient". 70 is
    # EX_SOFTWARE, "internal software error", in sysexits.h.
    exit_code = 70


class SourceAccessDenied(InternalError):
    """S3 refused the pipeline its source object (403 AccessDenied). A fault of the
    deployment, not of the document: the function's role, the bucket policy or the
    object's KMS key does not let it read (or, without s3:ListBucket on the bucket, the
    object is gone: S3 then answers 403, not 404). Not corrupt input, since the bytes
    were never seen; not transient, since the same request is refused until someone
    changes a policy. So internal, as a misconfiguration is: dead-lettered at once and
    alarmed on (the internal-failures alarm); once the permission is fixed, ``richdoc
    jobs redrive`` runs it again. Its own error name tells it from a bug."""


ERRORS_BY_KIND: dict[FailureKind, type[PipelineError]] = {
    cls.kind: cls
    for cls in (CorruptInput, UnsupportedFeature, ResourceLimit, Transient, InternalError)
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
# A function idle long enough becomes Inactive: the next invoke fails with the first two
# while Lambda restores it (an image function's code, its VPC connection), then works
# again. A function being updated (a deploy: its code or configuration) refuses invokes
# with ResourceConflictException until the update is done ("The operation cannot be
# performed at this time. An update is in progress for resource"). Transient, with a
# Retry of their own that waits longer than the SDK's FunctionActive and
# FunctionUpdated waiters do (5 minutes): docs/operations.md.
PLATFORM_INACTIVE_FUNCTION_ERRORS: tuple[str, ...] = (
    "Lambda.ResourceNotReadyException",
    "Lambda.CodeArtifactUserPendingException",
    "Lambda.ResourceConflictException",
)

ERROR_NAMES_BY_KIND: dict[FailureKind, tuple[str, ...]] = {
    FailureKind.CORRUPT_INPUT: ("CorruptInput",),
    FailureKind.UNSUPPORTED_FEATURE: ("UnsupportedFeature",),
    FailureKind.RESOURCE_LIMIT: ("ResourceLimit", *PLATFORM_RESOURCE_LIMIT_ERRORS),
    FailureKind.TRANSIENT: (
        "Transient",
        *PLATFORM_TRANSIENT_ERRORS,
        *PLATFORM_INACTIVE_FUNCTION_ERRORS,
    ),
}


def kind_of_error_name(error_name: str) -> FailureKind:
    for kind, names in ERROR_NAMES_BY_KIND.items():
        if error_name in names:
            return kind
    return FailureKind.INTERNAL


def kind_of_exit_code(code: int) -> FailureKind:
    """Parse worker exit codes: 0 ok, 10 corrupt, 20 unsupported, 30 resource, 70 internal,
    anything else transient.

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
    return ERRORS_BY_KIND[failure.kind](failure.reason)


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and everything in its ``__cause__``/``__context__`` chain, once each."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    return any(isinstance(e, kind) for e in exception_chain(exc))


_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def out_of_space(exc: BaseException) -> OSError | None:
    """The "no space left on device" (or quota) error in an exception's chain, if any."""
    for error in exception_chain(exc):
        if isinstance(error, OSError) and error.errno in _NO_SPACE:
            return error
    return None


def no_space_error(what: str, error: OSError) -> ResourceLimit:
    # Bigger parse tiers have more ephemeral storage (template.yaml).
    return ResourceLimit(f"{what}: no space left on the local disk ({error.strerror})")


@contextlib.contextmanager
def local_disk_errors(what: str) -> Iterator[None]:
    """A full local disk (Lambda's ephemeral storage) is a resource limit, not a bug."""
    try:
        yield
    except OSError as exc:
        error = out_of_space(exc)
        if error is None:
            raise
        raise no_space_error(what, error) from exc


def as_pipeline_error(exc: BaseException) -> PipelineError:
    """What an exception raised in the parse worker (by a task or a warm-up) means: its
    exit code and recorded failure are the result's ``exit_code`` and ``failure()``.

    Taxonomy errors keep their kind; running out of memory or of local disk is a
    resource limit (a bigger tier has more of both); anything else is a bug in the code
    that ran, ``internal``, with its own exit code (never "any other code: transient").
    """
    if isinstance(exc, PipelineError):
        return exc
    if caused_by(exc, MemoryError):
        return ResourceLimit(f"out of memory ({type(exc).__name__}: {exc})")
    full = out_of_space(exc)
    if full is not None:
        return no_space_error("the parse worker", full)
    return InternalError(f"unexpected error in the parse worker: {type(exc).__name__}: {exc}")
