"""One classification of AWS SDK failures (richdoc.awserrors), used by every module:
throttling, 5xx and connection failures are Transient for every service; everything else
is left to the caller (and is internal unless the caller expects it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import exceptions as boto
from botocore.retries.standard import ThrottledRetryableChecker, TransientRetryableChecker
from botocore.stub import Stubber

import richdoc.awserrors
from richdoc.admission.backlog import Backlog
from richdoc.artifacts import ArtifactStore
from richdoc.awserrors import (
    TRANSIENT_CODES,
    TRANSIENT_EXCEPTIONS,
    ConflictRetry,
    aws_errors,
    is_transaction_conflict,
    is_transient,
)
from richdoc.contracts import JobOptions, PageSpan, SourceObject
from richdoc.ingest import Starter
from richdoc.jobs import JobStore, StaleRun
from richdoc.jobs.keys import is_attempt_key
from richdoc.taxonomy import CorruptInput, Failure, FailureKind, SourceAccessDenied, Transient
from tests.support.s3_events import s3_notification
from tests.support.sdk_faults import client_error, connection_error, failing

REGION = "us-east-1"


def _client(service: str) -> Any:
    # Clients of several services, named by the test: untyped.
    return boto3.client(  # type: ignore[call-overload]
        service,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


# (service, operation, call parameters, error code, HTTP status, transient?)
SERVICE_ERRORS = [
    ("s3", "get_object", {"Bucket": "b", "Key": "k"}, "SlowDown", 503, True),
    ("s3", "get_object", {"Bucket": "b", "Key": "k"}, "InternalError", 500, True),
    ("s3", "get_object", {"Bucket": "b", "Key": "k"}, "RequestTimeout", 400, True),
    ("s3", "head_object", {"Bucket": "b", "Key": "k"}, "503", 503, True),
    ("s3", "get_object", {"Bucket": "b", "Key": "k"}, "AccessDenied", 403, False),
    ("s3", "get_object", {"Bucket": "b", "Key": "k"}, "NoSuchKey", 404, False),
    ("s3", "head_object", {"Bucket": "b", "Key": "k"}, "404", 404, False),
    (
        "dynamodb",
        "get_item",
        {"TableName": "t", "Key": {"pk": {"S": "a"}}},
        "ProvisionedThroughputExceededException",
        400,
        True,
    ),
    (
        "dynamodb",
        "get_item",
        {"TableName": "t", "Key": {"pk": {"S": "a"}}},
        "ThrottlingException",
        400,
        True,
    ),
    (
        "dynamodb",
        "get_item",
        {"TableName": "t", "Key": {"pk": {"S": "a"}}},
        "InternalServerError",
        500,
        True,
    ),
    (
        "dynamodb",
        "update_item",
        {"TableName": "t", "Key": {"pk": {"S": "a"}}},
        "ConditionalCheckFailedException",
        400,
        False,
    ),
    (
        "dynamodb",
        "get_item",
        {"TableName": "t", "Key": {"pk": {"S": "a"}}},
        "ResourceNotFoundException",
        400,
        False,
    ),
    ("sqs", "send_message", {"QueueUrl": "q", "MessageBody": "m"}, "RequestThrottled", 403, True),
    ("sqs", "send_message", {"QueueUrl": "q", "MessageBody": "m"}, "KmsThrottled", 400, True),
    (
        "sqs",
        "send_message",
        {"QueueUrl": "q", "MessageBody": "m"},
        "ServiceUnavailable",
        503,
        True,
    ),
    (
        "sqs",
        "send_message",
        {"QueueUrl": "q", "MessageBody": "m"},
        "AWS.SimpleQueueService.NonExistentQueue",
        400,
        False,
    ),
    (
        "stepfunctions",
        "start_execution",
        {"stateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:p", "name": "n"},
        "ThrottlingException",
        400,
        True,
    ),
    (
        "stepfunctions",
        "start_execution",
        {"stateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:p", "name": "n"},
        "ExecutionLimitExceeded",
        400,
        True,
    ),
    (
        "stepfunctions",
        "start_execution",
        {"stateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:p", "name": "n"},
        "UnmodelledServiceFault",
        502,
        True,
    ),
    (
        "stepfunctions",
        "start_execution",
        {"stateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:p", "name": "n"},
        "ExecutionAlreadyExists",
        400,
        False,
    ),
    (
        "stepfunctions",
        "start_execution",
        {"stateMachineArn": "arn:aws:states:us-east-1:1:stateMachine:p", "name": "n"},
        "StateMachineDoesNotExist",
        400,
        False,
    ),
]


@pytest.mark.parametrize(
    ("service", "operation", "params", "code", "status", "transient"),
    SERVICE_ERRORS,
    ids=[f"{s}-{c}" for s, _, _, c, _, _ in SERVICE_ERRORS],
)
def test_service_errors_are_transient_only_when_a_retry_can_help(
    service, operation, params, code, status, transient
):
    client = _client(service)
    with Stubber(client) as stub:
        stub.add_client_error(operation, service_error_code=code, http_status_code=status)
        with pytest.raises(boto.ClientError) as raised:
            getattr(client, operation)(**params)
    assert is_transient(raised.value) is transient
    if transient:
        with pytest.raises(Transient, match=f"doing it: .*{code}"), aws_errors("doing it"):
            raise raised.value
    else:
        with pytest.raises(boto.ClientError), aws_errors("doing it"):
            raise raised.value


TRANSPORT_ERRORS = [
    (boto.EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com"), True),
    (boto.ConnectTimeoutError(endpoint_url="https://s3.amazonaws.com"), True),
    (boto.ReadTimeoutError(endpoint_url="https://states.us-east-1.amazonaws.com"), True),
    (boto.ConnectionClosedError(endpoint_url="https://sqs.us-east-1.amazonaws.com"), True),
    (boto.ResponseStreamingError(error="Connection broken: IncompleteRead"), True),
    (boto.IncompleteReadError(actual_bytes=10, expected_bytes=20), True),
    (boto.SSLError(endpoint_url="https://s3.amazonaws.com", error=OSError("EOF")), True),
    (boto.ProxyConnectionError(proxy_url="http://proxy:3128", error="refused"), True),
    (boto.NoCredentialsError(), False),
    (boto.ParamValidationError(report="Missing required parameter Key"), False),
    (boto.NoRegionError(), False),
]


@pytest.mark.parametrize(
    ("error", "transient"), TRANSPORT_ERRORS, ids=[type(e).__name__ for e, _ in TRANSPORT_ERRORS]
)
def test_connection_failures_are_transient_and_configuration_errors_are_not(error, transient):
    assert is_transient(error) is transient
    with pytest.raises(Transient if transient else type(error)), aws_errors("calling AWS"):
        raise error


def test_everything_botocore_s_standard_retry_mode_retries_is_transient_here():
    # A canary for botocore upgrades that learn new throttling codes (private tables,
    # which botocore's stubs leave out).
    throttled: Any = ThrottledRetryableChecker
    transient: Any = TransientRetryableChecker
    assert set(throttled._THROTTLED_ERROR_CODES) <= TRANSIENT_CODES
    assert set(transient._TRANSIENT_ERROR_CODES) <= TRANSIENT_CODES
    for cls in transient._TRANSIENT_EXCEPTION_CLS:
        assert issubclass(cls, TRANSIENT_EXCEPTIONS)


def test_errors_outside_the_sdk_pass_through_untouched():
    with pytest.raises(KeyError), aws_errors("doing it"):
        raise KeyError("x")


# ---- every module classifies the same way ---------------------------------------------------


def test_a_dynamodb_connection_error_in_the_job_store_is_transient(job_store: JobStore) -> None:
    client = job_store.table.meta.client
    job_store.create("job-1", SourceObject(bucket="b", key="k"), JobOptions())
    with failing(client, "GetItem", connection_error("dynamodb")), pytest.raises(Transient):
        job_store.get("job-1")
    with failing(client, "Query", connection_error("dynamodb")), pytest.raises(Transient):
        job_store.attempts.of_job("job-1")


def test_dynamodb_throttling_of_a_fenced_write_is_transient_not_a_stale_run(
    job_store: JobStore,
) -> None:
    job_store.create("job-1", SourceObject(bucket="b", key="k"), JobOptions())
    throttled = client_error("ProvisionedThroughputExceededException", "UpdateItem")
    with failing(job_store.table.meta.client, "UpdateItem", throttled):
        with pytest.raises(Transient, match="updating job"):
            job_store.mark_running("job-1", 1, "arn:execution")
        job_store.mark_running("job-1", 1, "arn:execution")  # the retry goes through
    # A failed condition is still the run fence, not an AWS failure.
    with pytest.raises(StaleRun):
        job_store.mark_running("job-1", 2, "arn:execution")


def test_s3_connection_and_read_failures_in_the_artifact_store_are_transient() -> None:
    s3 = _client("s3")
    store = ArtifactStore(s3, "artifacts")
    with failing(s3, "GetObject", connection_error("s3")), pytest.raises(Transient):
        store.get_bytes("docling/x.json")
    with (
        failing(s3, "PutObject", client_error("SlowDown", "PutObject", 503)),
        pytest.raises(Transient, match="SlowDown"),
    ):
        store.put_bytes("jobs/x/projection.json", b"{}")
    with (
        failing(s3, "GetObject", boto.ReadTimeoutError(endpoint_url="https://s3")),
        pytest.raises(Transient, match="ReadTimeoutError"),
    ):
        store.download_source(
            SourceObject(bucket="ingest", key="a.pdf"), Path("/nonexistent/never")
        )
    with (
        failing(s3, "GetObject", client_error("AccessDenied", "GetObject", 403)),
        pytest.raises(boto.ClientError),
    ):
        store.get_bytes("docling/x.json")  # permanent errors are left to the caller


def test_a_refused_source_read_is_an_internal_access_fault_not_corrupt_input() -> None:
    s3 = _client("s3")
    store = ArtifactStore(s3, "artifacts")
    source = SourceObject(bucket="ingest", key="a.pdf", version_id="v1")
    with (
        failing(s3, "GetObject", client_error("AccessDenied", "GetObject", 403)),
        pytest.raises(SourceAccessDenied) as raised,
    ):
        store.download_source(source, Path("/nonexistent/never"))
    denied = raised.value
    assert denied.kind is FailureKind.INTERNAL and type(denied).__name__ == "SourceAccessDenied"
    assert "s3://ingest/a.pdf version v1" in denied.reason and "s3:ListBucket" in denied.reason
    # The state machine's catch path classifies it by its error name the same way.
    assert Failure.from_error("SourceAccessDenied", None).kind is FailureKind.INTERNAL
    # With s3:ListBucket a deleted version is a 404: the source is gone, not refused.
    with (
        failing(s3, "GetObject", client_error("NoSuchVersion", "GetObject", 404)),
        pytest.raises(CorruptInput, match="no longer exists"),
    ):
        store.download_source(source, Path("/nonexistent/never"))


def test_the_parse_cache_lookup_classifies_the_same_way() -> None:
    s3 = _client("s3")
    store = ArtifactStore(s3, "artifacts")
    with (
        failing(s3, "HeadObject", client_error("503", "HeadObject", 503)),
        pytest.raises(Transient),
    ):
        store.docling_page_count("docling/x/y.json")


def test_the_starter_reports_throttled_writes_and_unreachable_s3_as_transient(
    job_store: JobStore,
) -> None:
    s3 = _client("s3")
    starter = Starter(
        s3=s3,
        jobs=job_store,
        backlog=Backlog(job_store.table, job_store.clock),
        state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:p",
        clarify_default=False,
    )
    with failing(s3, "HeadObject", connection_error("s3")), pytest.raises(Transient):
        starter.handle_message(s3_notification("a.docx", "v1"))
    throttled = client_error("ProvisionedThroughputExceededException", "PutItem")
    with (
        failing(s3, "HeadObject", client_error("403", "HeadObject", 403)),
        failing(job_store.table.meta.client, "PutItem", throttled),
        pytest.raises(Transient, match="creating job"),
    ):
        starter.handle_message(s3_notification("a.docx", "v1"))


def test_a_failure_to_close_an_attempt_never_replaces_the_handler_s_error(
    job_store: JobStore,
) -> None:
    job_store.create("job-1", SourceObject(bucket="b", key="k"), JobOptions())
    job_store.mark_running("job-1", 1, "arn:execution")
    client = job_store.table.meta.client

    def closing(params) -> bool:  # the close is the only update of an attempt item
        return is_attempt_key(params["Key"]["sk"])

    with (
        failing(client, "UpdateItem", connection_error("dynamodb"), when=closing),
        pytest.raises(KeyError) as raised,
        job_store.attempts.record("job-1", 1, "project"),
    ):
        raise KeyError("self_ref")
    assert any("closing the attempt record failed too" in note for note in raised.value.__notes__)
    assert any("EndpointConnectionError" in note for note in raised.value.__notes__)
    [attempt] = job_store.attempts.of_job("job-1", 1)
    assert attempt.outcome == "running"  # left for the state machine's catch path
    # ... which closes it with the handler's error name.
    failure = Failure(kind=FailureKind.INTERNAL, reason="self_ref", error="KeyError")
    job_store.attempts.record_platform_failure("job-1", 1, "project", None, failure)
    [attempt] = job_store.attempts.of_job("job-1", 1)
    assert attempt.outcome == "KeyError"


# ---- DynamoDB transaction conflicts: retried here, then transient ------------------------------


def _cancelled(*reasons: str) -> boto.ClientError:
    """A TransactWriteItems cancelled with these per-item reasons, as DynamoDB answers."""
    response: Any = {
        "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
        "CancellationReasons": [{"Code": reason} for reason in reasons],
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }
    return boto.ClientError(response, "TransactWriteItems")


@pytest.mark.parametrize(
    ("error", "conflict", "transient"),
    [
        (client_error("TransactionConflictException", "UpdateItem"), True, True),
        (_cancelled("None", "TransactionConflict"), True, True),
        (_cancelled("TransactionConflict", "ThrottlingError"), True, True),
        (_cancelled("None", "ThrottlingError"), False, True),
        (_cancelled("ConditionalCheckFailed", "TransactionConflict"), False, False),
        (_cancelled("None", "ValidationError"), False, False),
        (client_error("ConditionalCheckFailedException", "UpdateItem"), False, False),
    ],
    ids=["write", "cancelled", "throttled", "throttle-only", "condition", "invalid", "ccf"],
)
def test_transaction_conflicts_are_transient_and_a_failed_condition_is_not(
    error: boto.ClientError, conflict: bool, transient: bool
) -> None:
    assert is_transaction_conflict(error) is conflict
    assert is_transient(error) is transient


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The in-process retry's sleeps, recorded instead of slept (the draw is fixed at its
    maximum, so each is its bound)."""
    slept: list[float] = []
    policy = ConflictRetry(sleep=slept.append, draw=lambda: 1.0)
    monkeypatch.setattr(richdoc.awserrors, "CONFLICT_RETRY", policy)
    return slept


def _running_with_a_conflict(job_store: JobStore) -> boto.ClientError:
    """Job 1 RUNNING; the error DynamoDB answers a write to it while a transaction holds it."""
    job_store.create("job-1", SourceObject(bucket="b", key="k"), JobOptions())
    job_store.mark_running("job-1", 1, "arn:execution")
    return client_error("TransactionConflictException", "UpdateItem")


def test_a_job_write_that_meets_a_transaction_is_retried_with_jittered_backoff(
    job_store: JobStore, sleeps: list[float]
) -> None:
    conflict = _running_with_a_conflict(job_store)
    with failing(job_store.table.meta.client, "UpdateItem", conflict, times=3) as failed:
        job_store.shard_done("job-1", 1, PageSpan.parse("1-50"))
    assert len(failed) == 3
    assert sleeps == [0.025, 0.05, 0.1]  # base * 2**n, each the top of its jitter range
    job = job_store.get("job-1")
    assert job is not None and job.shards_done == frozenset({PageSpan.parse("1-50")})


def test_a_conflict_that_outlasts_the_retries_is_transient_for_the_state_machine(
    job_store: JobStore, sleeps: list[float]
) -> None:
    conflict = _running_with_a_conflict(job_store)
    with (
        failing(job_store.table.meta.client, "UpdateItem", conflict, times=100) as failed,
        pytest.raises(Transient, match="TransactionConflictException"),
    ):
        job_store.shard_done("job-1", 1, PageSpan.parse("1-50"))
    assert len(failed) == ConflictRetry().attempts  # bounded: 5 tries, 4 sleeps
    assert len(sleeps) == ConflictRetry().attempts - 1
    assert sum(sleeps) <= 1.0


def test_the_jitter_spreads_retries_below_the_capped_exponential_bound() -> None:
    draws = iter([0.5, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    policy = ConflictRetry(draw=lambda: next(draws))
    assert [policy.delay(n) for n in range(7)] == [0.0125, 0.0, 0.1, 0.2, 0.4, 0.4, 0.4]
