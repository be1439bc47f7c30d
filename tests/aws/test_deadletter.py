"""Dead-letter messages carry the failure, and a redrive moves them back intact."""

from __future__ import annotations

import boto3
from richdoc_tools.ops.dead_letter_queue.acting import redrive_chosen
from richdoc_tools.ops.dead_letter_queue.reading import peek

from richdoc.deadletter import (
    ATTR_FEATURE,
    ATTR_KIND,
    RedriveMarker,
    failure_attributes,
)
from richdoc.taxonomy import Failure, FailureKind


def test_attributes_name_job_run_kind_reason_feature_and_error() -> None:
    failure = Failure(FailureKind.UNSUPPORTED_FEATURE, "needs OCR", "ocr", "UnsupportedFeature")
    attributes = failure_attributes("job-1", 2, failure)
    assert {k: v["StringValue"] for k, v in attributes.items()} == {
        "richdoc.job_id": "job-1",
        "richdoc.run": "2",
        "richdoc.kind": "unsupported_feature",
        "richdoc.reason": "needs OCR",
        "richdoc.feature": "ocr",
        "richdoc.error": "UnsupportedFeature",
    }
    assert attributes["richdoc.run"]["DataType"] == "Number"


def test_empty_values_are_left_out_because_sqs_rejects_them() -> None:
    attributes = failure_attributes("job-1", 1, Failure(FailureKind.TRANSIENT, "throttled"))
    assert ATTR_FEATURE not in attributes and "richdoc.error" not in attributes


def test_long_reasons_are_truncated() -> None:
    attributes = failure_attributes("j", 1, Failure(FailureKind.INTERNAL, "x" * 5000))
    assert len(attributes["richdoc.reason"]["StringValue"]) == 1000


def test_redrive_marker_reads_both_sqs_api_and_lambda_event_shapes() -> None:
    api = failure_attributes("job-1", 3, Failure(FailureKind.TRANSIENT, "t"))
    event = {
        k: {"stringValue": v["StringValue"], "dataType": v["DataType"]} for k, v in api.items()
    }
    assert RedriveMarker.from_attributes(api) == RedriveMarker("job-1", 3)
    assert RedriveMarker.from_attributes(event) == RedriveMarker("job-1", 3)
    assert RedriveMarker.from_attributes({}) is None


def test_peek_does_not_consume_and_a_redrive_keeps_body_and_attributes(aws: None) -> None:
    sqs = boto3.client("sqs")
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    ingest = sqs.create_queue(QueueName="ingest")["QueueUrl"]
    failure = Failure(FailureKind.CORRUPT_INPUT, "not a PDF", error="CorruptInput")
    sqs.send_message(
        QueueUrl=dlq,
        MessageBody='{"Records": []}',
        MessageAttributes=failure_attributes("job-1", 1, failure),
    )

    [letter] = peek(sqs, dlq)
    assert (letter.job_id, letter.run, letter.kind, letter.reason) == (
        "job-1",
        1,
        "corrupt_input",
        "not a PDF",
    )
    assert len(peek(sqs, dlq)) == 1  # still there

    assert redrive_chosen(sqs, dlq, ingest, [letter.message_id]).done == [letter.message_id]
    assert peek(sqs, dlq) == []
    [moved] = sqs.receive_message(QueueUrl=ingest, MessageAttributeNames=["All"])["Messages"]
    assert moved["Body"] == '{"Records": []}'
    assert moved["MessageAttributes"][ATTR_KIND]["StringValue"] == "corrupt_input"
