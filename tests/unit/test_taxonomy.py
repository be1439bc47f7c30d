"""The failure taxonomy: kinds, Lambda error names and exit codes agree everywhere."""

import errno
import json

import pytest

from richdoc.taxonomy import (
    CorruptInput,
    Failure,
    FailureKind,
    InternalError,
    ResourceLimit,
    Transient,
    UnsupportedFeature,
    as_pipeline_error,
    caused_by,
    error_for,
    kind_of_error_name,
    kind_of_exit_code,
    local_disk_errors,
    out_of_space,
)


@pytest.mark.parametrize(
    ("exc", "kind", "code"),
    [
        (CorruptInput("bad zip"), FailureKind.CORRUPT_INPUT, 10),
        (
            UnsupportedFeature("PDF is encrypted", feature="encrypted"),
            FailureKind.UNSUPPORTED_FEATURE,
            20,
        ),
        (ResourceLimit("over the ceiling"), FailureKind.RESOURCE_LIMIT, 30),
        (Transient("S3 throttled"), FailureKind.TRANSIENT, 75),
        (InternalError("bug in the parse child"), FailureKind.INTERNAL, 70),
    ],
)
def test_each_error_class_carries_its_kind_and_exit_code(exc, kind, code):
    assert exc.kind is kind
    assert exc.exit_code == code
    assert kind_of_exit_code(code) is kind
    assert kind_of_error_name(type(exc).__name__) is kind


def test_signals_and_unknown_exit_codes_map_to_resource_limit_and_transient():
    assert kind_of_exit_code(-9) is FailureKind.RESOURCE_LIMIT
    assert kind_of_exit_code(-11) is FailureKind.RESOURCE_LIMIT
    assert kind_of_exit_code(1) is FailureKind.TRANSIENT
    assert kind_of_exit_code(75) is FailureKind.TRANSIENT


def test_only_the_reserved_failure_codes_are_not_transient():
    # The design page's "anything else transient" holds for every code but these.
    reserved = {
        code for code in range(1, 256) if kind_of_exit_code(code) is not FailureKind.TRANSIENT
    }
    assert reserved == {10, 20, 30, 70}


def test_an_internal_failure_re_raises_as_internal_error():
    failure = Failure(kind=FailureKind.INTERNAL, reason="warm-up left 4 threads")
    error = error_for(failure)
    assert type(error) is InternalError and error.exit_code == 70
    # The Lambda error name falls into the state machine's catch-all: dead-lettered.
    assert kind_of_error_name(type(error).__name__) is FailureKind.INTERNAL


def test_a_full_disk_anywhere_in_the_chain_is_found():
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("Pipeline SimplePipeline failed") from exc
    except RuntimeError as exc:
        assert out_of_space(exc) is exc.__cause__
    assert out_of_space(OSError(errno.EACCES, "Permission denied")) is None


def test_local_disk_errors_turn_a_full_disk_into_a_resource_limit():
    with (
        pytest.raises(ResourceLimit, match="downloading: no space left"),
        local_disk_errors("downloading"),
    ):
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(PermissionError), local_disk_errors("downloading"):
        raise PermissionError(errno.EACCES, "Permission denied")


def _raised_from(cause: BaseException) -> RuntimeError:
    try:
        try:
            raise cause
        except BaseException as exc:
            raise RuntimeError("Pipeline SimplePipeline failed") from exc
    except RuntimeError as exc:
        return exc


def test_what_an_exception_in_the_worker_means():
    corrupt = CorruptInput("not a document")
    assert as_pipeline_error(corrupt) is corrupt
    oom = as_pipeline_error(_raised_from(MemoryError()))
    assert type(oom) is ResourceLimit and oom.exit_code == 30
    assert oom.reason.startswith("out of memory (RuntimeError: Pipeline SimplePipeline failed")
    full = as_pipeline_error(_raised_from(OSError(errno.ENOSPC, "No space left on device")))
    assert type(full) is ResourceLimit and "no space left" in full.reason
    bug = as_pipeline_error(KeyError("surprise"))
    assert type(bug) is InternalError and bug.exit_code == 70
    assert bug.reason == "unexpected error in the parse worker: KeyError: 'surprise'"
    assert caused_by(_raised_from(MemoryError()), MemoryError)
    assert not caused_by(KeyError("surprise"), MemoryError)


@pytest.mark.parametrize(
    "name",
    [
        "Sandbox.Timedout",
        "Runtime.OutOfMemory",
        "Runtime.ExitError",
        "States.Timeout",
        "Lambda.Unknown",
    ],
)
def test_platform_kills_are_resource_limits(name):
    assert kind_of_error_name(name) is FailureKind.RESOURCE_LIMIT


@pytest.mark.parametrize(
    "name",
    [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
        # An Inactive function while Lambda restores it: retried, never internal.
        "Lambda.ResourceNotReadyException",
        "Lambda.CodeArtifactUserPendingException",
    ],
)
def test_lambda_service_errors_are_transient(name):
    assert kind_of_error_name(name) is FailureKind.TRANSIENT


def test_unknown_error_names_are_internal():
    assert kind_of_error_name("KeyError") is FailureKind.INTERNAL
    assert kind_of_error_name("States.DataLimitExceeded") is FailureKind.INTERNAL


def test_feature_tag_round_trips_through_the_lambda_error_envelope():
    exc = UnsupportedFeature("document has 2,500 pages, limit 2,000", feature="max_pages")
    cause = json.dumps(
        {"errorType": type(exc).__name__, "errorMessage": str(exc), "stackTrace": []}
    )
    failure = Failure.from_error("UnsupportedFeature", cause)
    assert failure == Failure(
        kind=FailureKind.UNSUPPORTED_FEATURE,
        reason="document has 2,500 pages, limit 2,000",
        feature="max_pages",
        error="UnsupportedFeature",
    )
    assert str(error_for(failure)) == str(exc)


def test_platform_cause_text_is_kept_as_the_reason():
    failure = Failure.from_error("Sandbox.Timedout", "Task timed out after 900.00 seconds")
    assert failure.kind is FailureKind.RESOURCE_LIMIT
    assert failure.reason == "Task timed out after 900.00 seconds"
    assert failure.feature is None


def test_failure_json_line_has_kind_reason_feature():
    line = UnsupportedFeature("needs OCR", feature="ocr").failure().to_json_line()
    assert json.loads(line) == {
        "kind": "unsupported_feature",
        "reason": "needs OCR",
        "feature": "ocr",
        "error": None,
    }
