"""One classification of AWS SDK failures for every module: what is worth retrying.

S3, DynamoDB, SQS and Step Functions fail the same ways: the service throttles, has a
5xx moment, or the connection drops or times out on the way. Those are ``Transient``
wherever they happen (the state machine retries them with backoff; the starter's SQS
message is redelivered). Everything else (access denied, a missing table, a failed
condition, a malformed request) is left alone: callers handle the codes they expect
(``ConditionalCheckFailedException``, ``NoSuchKey``) and anything left is internal.

The codes and exception classes are a superset of what botocore's own "standard" retry
mode retries (``botocore.retries.standard``; a test keeps them in step), plus the few
per-service codes it leaves to each service's retry model.

DynamoDB transaction conflicts are transient too, and retried here first: a write to an
item that an ongoing ``TransactWriteItems`` holds fails with
``TransactionConflictException``, and a transaction that meets another on one of its
items is cancelled with a ``TransactionConflict`` reason (the developer guide's
"Transaction conflict handling"). botocore retries neither (no retry mode lists them, and
DynamoDB's model does not mark them retryable). Nothing in richdoc writes in a transaction
any more (``richdoc.jobs.references`` says why), but another writer of the table may;
``retry_conflicts`` wraps every DynamoDB write: a few jittered attempts in the process,
then ``Transient`` for the state machine's Retry.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from botocore import exceptions as boto

from richdoc.taxonomy import Transient

# Throttling, by the names S3 (SlowDown), DynamoDB (ProvisionedThroughputExceeded...,
# RequestLimitExceeded), SQS (RequestThrottled, KmsThrottled) and Step Functions
# (ThrottlingException, ExecutionLimitExceeded: too many open executions) use.
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
        "KmsThrottled",
        "ExecutionLimitExceeded",
    }
)
# Server-side failures and timeouts that a later attempt does not repeat.
SERVICE_FAULT_CODES = frozenset(
    {
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        # The signature's clock was off; botocore corrects its offset on the next call.
        "RequestTimeTooSkewed",
    }
)
# A write refused because an ongoing transaction holds its item: nothing was written.
CONFLICT_CODES = frozenset({"TransactionConflictException"})
TRANSIENT_CODES = THROTTLING_CODES | SERVICE_FAULT_CODES | CONFLICT_CODES
# A cancelled transaction's per-item reasons that a later attempt does not repeat (any
# other, such as ConditionalCheckFailed, is the caller's to handle); "None" marks the
# items that were fine.
TRANSIENT_CANCELLATION_REASONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)
# 429 and every 5xx, for responses without a recognisable code (an empty 503 body).
TRANSIENT_STATUS = frozenset({429}) | frozenset(range(500, 600))
# Connection refused or reset, DNS and TLS failures, connect and read timeouts, a body
# cut short or corrupted in flight.
TRANSIENT_EXCEPTIONS: tuple[type[boto.BotoCoreError], ...] = (
    boto.ConnectionError,  # EndpointConnectionError, ConnectTimeoutError, SSLError, proxy
    boto.HTTPClientError,  # ConnectionClosedError, ReadTimeoutError, ResponseStreamingError
    boto.IncompleteReadError,
    boto.ChecksumError,
)


def error_code(exc: boto.ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _status(exc: boto.ClientError) -> int | None:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return int(status) if status is not None else None


def cancellation_reasons(exc: boto.ClientError) -> list[str]:
    """The per-item reason codes of a cancelled DynamoDB transaction, in item order
    ("None" for an item that was fine); [] for any other error."""
    if error_code(exc) != "TransactionCanceledException":
        return []
    reasons: object = exc.response.get("CancellationReasons", [])  # beside the error
    if not isinstance(reasons, list):
        return []
    return [
        str(reason.get("Code", "None")) if isinstance(reason, Mapping) else "None"
        for reason in reasons
    ]


def _failed_items(exc: boto.ClientError) -> set[str]:
    """The reasons of a cancelled transaction's items that were not fine."""
    return {reason for reason in cancellation_reasons(exc) if reason != "None"}


def is_transaction_conflict(exc: BaseException) -> bool:
    """A DynamoDB write that met a transaction on its item, and wrote nothing: a single
    write refused (``TransactionConflictException``), or a transaction cancelled for
    conflicts on its items (and nothing a retry would repeat)."""
    if not isinstance(exc, boto.ClientError):
        return False
    if error_code(exc) in CONFLICT_CODES:
        return True
    failed = _failed_items(exc)
    return "TransactionConflict" in failed and failed <= TRANSIENT_CANCELLATION_REASONS


def is_transient(exc: BaseException) -> bool:
    """Would the same request, sent again later, probably succeed?"""
    if isinstance(exc, boto.ClientError):
        code = error_code(exc)
        if code in TRANSIENT_CODES:
            return True
        failed = _failed_items(exc)  # a cancelled transaction: conflicts, throttling
        if failed and failed <= TRANSIENT_CANCELLATION_REASONS:
            return True
        # S3 reports a bare status as the code for HEAD requests ("503").
        status = _status(exc) or (int(code) if code.isdigit() else None)
        return status in TRANSIENT_STATUS
    return isinstance(exc, TRANSIENT_EXCEPTIONS)


def describe(exc: BaseException) -> str:
    if isinstance(exc, boto.ClientError):
        operation = getattr(exc, "operation_name", "") or "request"
        return f"{operation} failed with {error_code(exc) or _status(exc)}"
    return f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def aws_errors(what: str) -> Iterator[None]:
    """Re-raise transient SDK failures inside the block as ``Transient``; leave the rest.

    ``what`` says what was being done ("reading s3://bucket/key"): it becomes the reason.
    """
    try:
        yield
    except (boto.ClientError, boto.BotoCoreError) as exc:
        if is_transient(exc):
            raise Transient(f"{what}: {describe(exc)}") from exc
        raise


P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class ConflictRetry:
    """How a DynamoDB write that met a transaction is retried in the process: up to
    ``attempts`` tries, sleeping a random time below ``base_s * 2**n`` (capped at
    ``cap_s``) before try n + 1 ("full jitter": writers that collided spread out). A
    transaction holds its items for milliseconds, so the whole budget is about a second
    at most; a conflict that outlasts it is ``Transient`` for the state machine."""

    attempts: int = 5
    base_s: float = 0.025
    cap_s: float = 0.4
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    draw: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, retry: int) -> float:
        """The sleep before retry number ``retry`` (0 for the first)."""
        return self.draw() * min(self.cap_s, self.base_s * 2.0**retry)


CONFLICT_RETRY = ConflictRetry()


def retry_conflicts(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args, **kwargs)``, tried again while it meets a transaction conflict
    (``is_transaction_conflict``), at most ``CONFLICT_RETRY.attempts`` times; the last
    conflict is raised as it came (``aws_errors`` makes it ``Transient``). Safe for any
    write: a conflicting request is refused whole, so nothing of it was applied."""
    policy = CONFLICT_RETRY
    for retry in range(policy.attempts - 1):
        try:
            return call(*args, **kwargs)
        except boto.ClientError as exc:
            if not is_transaction_conflict(exc):
                raise
        policy.sleep(policy.delay(retry))
    return call(*args, **kwargs)
