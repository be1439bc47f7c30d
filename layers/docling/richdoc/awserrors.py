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
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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
TRANSIENT_CODES = THROTTLING_CODES | SERVICE_FAULT_CODES
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


def is_transient(exc: BaseException) -> bool:
    """Would the same request, sent again later, probably succeed?"""
    if isinstance(exc, boto.ClientError):
        code = error_code(exc)
        if code in TRANSIENT_CODES:
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
