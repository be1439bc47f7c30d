"""End to end through the real state machine on the embedded stack: an object put into the
ingest bucket, to the terminal state, asserting the execution, its history, the job item,
the attempt items and the dead-letter queue — one test per route of the failure taxonomy."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.runtime.lambdas import FUNCTION_THREAD_PREFIX
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ParseInput
from richdoc.jobs import DeadLetterMark, JobStatus
from richdoc.taxonomy import ResourceLimit, Transient
from tests.support.parse_inputs import docx_bytes
from tests.support.paths import SAMPLES
from tests.support.published_schemas import schema_errors
from tests.support.sdk_faults import connection_error, failing
from tests.support.stack_runs import (
    dead_letters_for,
    execution,
    history,
    outcomes,
    run_one,
    states_entered,
)

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

# Every run plans first; a document the plan does not shard takes the whole-document tiers.
WHOLE_DOCUMENT_START = ["RecordStart", "Plan", "Sharded"]


# ---- helpers ------------------------------------------------------------------------------


# ---- success ------------------------------------------------------------------------------


def test_a_docx_succeeds_with_records_outputs_and_no_dead_letter(stack: Any) -> None:
    body = (SAMPLES / "contract.docx").read_bytes()
    job = run_one(stack, "e2e/contract.docx", body, clarify=True)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    described = execution(stack, job)
    assert described["status"] == "SUCCEEDED"
    assert states_entered(history(stack, described["executionArn"])) == [
        "RecordStart",
        "Plan",
        "Sharded",
        "ParseTier1",
        "Project",
        "Detect",
        "RecordSuccess",
        "Succeeded",
    ]
    assert outcomes(stack, job) == [
        ("plan", None, "ok"),
        ("parse", 1, "ok"),
        ("project", None, "ok"),
        ("detect", None, "ok"),
    ]
    assert job.pipeline == "simple"
    assert job.shards == 1
    assert job.counts is not None and job.outputs is not None
    assert job.counts.nodes > 5 and job.counts.spans > 5
    assert job.counts.ambiguities == 1  # effective 1 March vs signed 15 February
    projection = json.loads(stack.artifact(job.outputs.projection_key))
    assert projection["schema"] == "richdoc.projection/v1"
    assert projection["source"]["sha256"] == job.source.sha256
    detection = json.loads(stack.artifact(job.outputs.detection_key))
    assert detection["ambiguities"][0]["kind"] == "conflicting_dates"
    assert schema_errors("projection", projection) == []
    assert schema_errors("detection", detection) == []
    assert dead_letters_for(stack, job.job_id) == []


# ---- permanent failures: dead-lettered at once ------------------------------------------------


def test_corrupt_input_is_dead_lettered_at_once_without_retry(stack: Any) -> None:
    job = run_one(stack, "e2e/broken.docx", b"this is not a zip archive at all")
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert job.failure.kind == "corrupt_input"
    described = execution(stack, job)
    assert (described["status"], described["error"]) == ("FAILED", "corrupt_input")
    entered = states_entered(history(stack, described["executionArn"]))
    assert entered[:4] == [*WHOLE_DOCUMENT_START, "ParseTier1"]
    assert entered.count("ParseTier1") == 1 and "ParseTier2" not in entered
    assert entered[-5:] == [
        "RecordFailure",
        "SendToDeadLetterQueue",
        "MarkDeadLettered",
        "FailureKind",
        "CorruptInput",
    ]
    assert outcomes(stack, job) == [("plan", None, "ok"), ("parse", 1, "CorruptInput")]
    [letter] = dead_letters_for(stack, job.job_id)
    # Terminal only with its message on the queue: the job names the message it sent.
    assert job.dead_letter == DeadLetterMark(
        message_id=letter["MessageId"], sent_by="state-machine"
    )
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == "corrupt_input"
    # The original notification, key still URL-encoded as S3 sent it.
    assert json.loads(letter["Body"])["Records"][0]["s3"]["object"]["key"] == "e2e%2Fbroken.docx"


def test_unsupported_feature_keeps_its_tag(stack: Any) -> None:
    job = run_one(stack, "e2e/plan.dwg", b"AC1032" + bytes(200))
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert (job.failure.kind, job.failure.feature) == ("unsupported_feature", "format:dwg")
    assert execution(stack, job)["error"] == "unsupported_feature"
    [letter] = dead_letters_for(stack, job.job_id)
    assert letter["MessageAttributes"]["richdoc.feature"]["StringValue"] == "format:dwg"


def test_a_key_with_control_characters_is_dead_lettered_with_attributes_sqs_accepts(
    stack: Any,
) -> None:
    # S3 keys may hold 0x01-0x1F; SQS refuses them in a message attribute (the reason and
    # the feature tag carry the key's extension), which would refuse the dead letter on
    # every retry and leave the job FAILED for ever.
    job = run_one(stack, "e2e/ctrl\x01name.d\x1bg", b"AC1032" + bytes(200))
    assert job.status is JobStatus.DEAD_LETTERED, job.failure
    assert job.failure is not None and job.failure.feature == "format:d\x1bg"
    [letter] = dead_letters_for(stack, job.job_id)
    attributes = letter["MessageAttributes"]
    assert attributes["richdoc.feature"]["StringValue"] == "format:d\\x1bg"  # spelled out
    for attribute in attributes.values():
        assert not any(ord(c) < 0x20 and c not in "\t\n\r" for c in attribute["StringValue"])
    # The body is the notification exactly as S3 sent it (the key URL-encoded).
    record = json.loads(letter["Body"])["Records"][0]
    assert record["s3"]["object"]["key"] == "e2e%2Fctrl%01name.d%1Bg"


# ---- resource limits: escalation through the tiers --------------------------------------------


def test_a_resource_limit_at_tier_1_succeeds_at_tier_2(
    stack: Any, patch_parse: Callable[..., None]
) -> None:
    def tier_one_too_small(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.tier == 1:
            raise ResourceLimit("worker exceeded the 2,500 MB ceiling of tier 1")
        return real(event, **kw)

    patch_parse(tier_one_too_small)
    job = run_one(stack, "e2e/escalate.docx", docx_bytes(["escalation test"]))
    assert job.status is JobStatus.SUCCEEDED, job.failure
    entered = states_entered(history(stack, execution(stack, job)["executionArn"]))
    assert entered[:6] == [*WHOLE_DOCUMENT_START, "ParseTier1", "EscalateToTier2", "ParseTier2"]
    assert outcomes(stack, job)[:3] == [
        ("plan", None, "ok"),
        ("parse", 1, "ResourceLimit"),
        ("parse", 2, "ok"),
    ]
    memories = [a.memory_mb for a in stack.jobs.attempts.of_job(job.job_id) if a.stage == "parse"]
    assert memories[0] < memories[1]


def test_a_real_memory_ceiling_fails_every_tier_and_dead_letters(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A ceiling no docling conversion fits in: the isolated worker is killed at every tier
    # and the harness (this process) survives to record it.
    monkeypatch.setenv("RICHDOC_MEM_CEILING_MB", "64")
    job = run_one(stack, "e2e/too-big.docx", docx_bytes(["x" * 200] * 50), timeout_s=240)
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert job.failure.kind == "resource_limit"
    assert [(s, t) for s, t, _ in outcomes(stack, job)] == [
        ("plan", None),
        ("parse", 1),
        ("parse", 2),
        ("parse", 3),
    ]
    assert {o for _, _, o in outcomes(stack, job)[1:]} == {"ResourceLimit"}
    described = execution(stack, job)
    assert described["error"] == "resource_limit"
    assert dead_letters_for(stack, job.job_id)


def test_a_platform_timeout_at_tier_1_escalates_and_is_recorded(
    stack: Any, patch_parse: Callable[..., None]
) -> None:
    released = threading.Event()

    def slow_at_tier_one(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.tier == 1:
            released.wait()  # until the job is done: outlives the 1 s function timeout
        return real(event, **kw)

    patch_parse(slow_at_tier_one)
    stack.runtime.timeout_override_s["ParseTier1Function"] = 1.0
    try:
        job = run_one(stack, "e2e/slow.docx", docx_bytes(["timeout test"]))
    finally:
        released.set()
    assert job.status is JobStatus.SUCCEEDED, job.failure
    entered = states_entered(history(stack, execution(stack, job)["executionArn"]))
    assert entered[:6] == [*WHOLE_DOCUMENT_START, "ParseTier1", "EscalateToTier2", "ParseTier2"]

    # The zombie tier-1 handler, released, finishes (and tries to close its attempt): it
    # must not rewrite the record.
    def zombie_finished() -> bool:
        return not any(
            t.name == f"{FUNCTION_THREAD_PREFIX}ParseTier1Function" for t in threading.enumerate()
        )

    assert wait_until(zombie_finished, 120)
    assert outcomes(stack, job)[1:3] == [("parse", 1, "Sandbox.Timedout"), ("parse", 2, "ok")]


def test_a_platform_out_of_memory_kill_escalates(stack: Any) -> None:
    stack.script.add(
        "ParseTier1Function",
        PlatformError("Runtime.OutOfMemory", "Runtime exited with error: signal: killed"),
    )
    job = run_one(stack, "e2e/oom.docx", docx_bytes(["oom test"]))
    assert job.status is JobStatus.SUCCEEDED, job.failure
    parse_attempts = [a for a in stack.jobs.attempts.of_job(job.job_id) if a.stage == "parse"]
    assert [(a.tier, a.outcome, a.recorded_by) for a in parse_attempts] == [
        (1, "Runtime.OutOfMemory", "state-machine"),
        (2, "ok", "handler"),
    ]


# ---- transient failures: retried with backoff --------------------------------------------------


def test_transient_errors_are_retried_then_succeed(
    stack: Any, patch_parse: Callable[..., None]
) -> None:
    failures = iter([Transient("S3 SlowDown"), Transient("S3 SlowDown")])

    def flaky(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        error = next(failures, None)
        if error:
            raise error
        return real(event, **kw)

    patch_parse(flaky)
    job = run_one(stack, "e2e/flaky.docx", docx_bytes(["retry test"]))
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert outcomes(stack, job)[:4] == [
        ("plan", None, "ok"),
        ("parse", 1, "Transient"),
        ("parse", 1, "Transient"),
        ("parse", 1, "ok"),
    ]
    entered = states_entered(history(stack, execution(stack, job)["executionArn"]))
    assert "EscalateToTier2" not in entered


def test_a_dynamodb_connection_error_in_a_step_is_retried_as_transient(stack: Any) -> None:
    from richdoc.wiring import wiring

    def project_opening_its_attempt(params: Mapping[str, Any]) -> bool:
        # The only write that carries the stage's name: the job update opening its attempt.
        return "project" in params.get("ExpressionAttributeValues", {}).values()

    # The project step's first DynamoDB write finds the endpoint unreachable once.
    with failing(
        wiring.jobs.table.meta.client,
        "UpdateItem",
        connection_error("dynamodb"),
        when=project_opening_its_attempt,
    ) as failed:
        job = run_one(stack, "e2e/dynamodb-blip.docx", docx_bytes(["connection test"]))
    assert len(failed) == 1
    assert job.status is JobStatus.SUCCEEDED, job.failure
    events = history(stack, execution(stack, job)["executionArn"])
    [failure] = [
        e["lambdaFunctionFailedEventDetails"]
        for e in events
        if "lambdaFunctionFailedEventDetails" in e
    ]
    assert failure["error"] == "Transient"
    assert "EndpointConnectionError" in failure["cause"]
    assert states_entered(events).count("Project") == 1  # retried in place, not re-routed
    assert outcomes(stack, job) == [
        ("plan", None, "ok"),
        ("parse", 1, "ok"),
        ("project", None, "ok"),
        ("detect", None, "ok"),
    ]


def test_throttling_by_the_platform_is_retried(stack: Any) -> None:
    stack.script.add(
        "ProjectFunction", PlatformError("Lambda.TooManyRequestsException", "Rate Exceeded.")
    )
    job = run_one(stack, "e2e/throttled.docx", docx_bytes(["throttle test"]))
    assert job.status is JobStatus.SUCCEEDED, job.failure


def test_an_inactive_tier_is_waited_for_not_dead_lettered(stack: Any) -> None:
    # After a quiet spell tier 2's image function is Inactive: the escalation's invokes
    # fail, as Lambda answers while it restores the function, then work.
    stack.script.add(
        "ParseTier1Function",
        PlatformError("Runtime.OutOfMemory", "Runtime exited with error: signal: killed"),
    )
    stack.script.add(
        "ParseTier2Function",
        PlatformError(
            "Lambda.ResourceNotReadyException",
            "The function is inactive and its VPC connection is no longer available.",
        ),
        PlatformError(
            "Lambda.CodeArtifactUserPendingException",
            "The Lambda function couldn't be invoked because its code artifact user is "
            "still being provisioned.",
        ),
    )
    job = run_one(stack, "e2e/quiet-spell.docx", docx_bytes(["inactive test"]))
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.dead_letter is None
    events = history(stack, execution(stack, job)["executionArn"])
    failed = [
        e["lambdaFunctionFailedEventDetails"]["error"]
        for e in events
        if "lambdaFunctionFailedEventDetails" in e
    ]
    assert failed == [
        "Runtime.OutOfMemory",
        "Lambda.ResourceNotReadyException",
        "Lambda.CodeArtifactUserPendingException",
    ]
    # Retried in place at tier 2: no failure route, no third tier.
    entered = states_entered(events)
    assert entered.count("ParseTier2") == 1
    assert "ParseTier2Failed" not in entered and "ParseTier3" not in entered
    assert outcomes(stack, job)[1:3] == [("parse", 1, "Runtime.OutOfMemory"), ("parse", 2, "ok")]
    assert dead_letters_for(stack, job.job_id) == []


def test_transient_errors_that_never_clear_are_dead_lettered_and_redrive_starts_run_2(
    stack: Any, patch_parse: Callable[..., None]
) -> None:
    def down(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        raise Transient("S3 ServiceUnavailable")

    patch_parse(down)
    job = run_one(stack, "e2e/outage.docx", docx_bytes(["outage test"]))
    assert job.failure is not None
    assert (job.status, job.failure.kind) == (JobStatus.DEAD_LETTERED, "transient")
    # MaxAttempts 4 retries after the first attempt: five attempts in all.
    assert [o for _, _, o in outcomes(stack, job)] == ["ok"] + ["Transient"] * 5
    assert execution(stack, job)["error"] == "transient"
    assert dead_letters_for(stack, job.job_id)

    patch_parse(lambda event, real, **kw: real(event, **kw))  # the outage is over
    from richdoc_tools.ops.dead_letter_queue.acting import redrive_all
    from richdoc_tools.ops.operator import Operator, StackResources

    operator = Operator(stack.session, StackResources.from_outputs("richdoc", stack.outputs))
    assert redrive_all(operator)  # a move task's handle: SQS moves the messages on its own

    def rerun_finished() -> bool:
        current = stack.jobs.get(job.job_id)
        return current.run == 2 and current.status.terminal

    assert wait_until(rerun_finished, 120)
    rerun = stack.jobs.get(job.job_id)
    assert rerun.status is JobStatus.SUCCEEDED, rerun.failure
    assert execution(stack, rerun)["name"] == f"{job.job_id}-r2"
    assert [o for _, _, o in outcomes(stack, rerun)] == ["ok", "ok", "ok", "ok"]
    assert len(stack.jobs.attempts.of_job(job.job_id, 1)) == 6  # run 1 keeps its record


# ---- internal errors -----------------------------------------------------------------------


def test_an_unexpected_exception_is_an_internal_failure(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import richdoc.project_step

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("self_ref")

    monkeypatch.setattr(richdoc.project_step, "project", broken)
    job = run_one(stack, "e2e/internal.docx", docx_bytes(["internal test"]))
    assert job.failure is not None
    assert (job.status, job.failure.kind, job.failure.error) == (
        JobStatus.DEAD_LETTERED,
        "internal",
        "KeyError",
    )
    described = execution(stack, job)
    assert described["error"] == "internal"
    assert outcomes(stack, job) == [
        ("plan", None, "ok"),
        ("parse", 1, "ok"),
        ("project", None, "KeyError"),
    ]


# ---- idempotency ---------------------------------------------------------------------------------


def test_one_notification_delivered_three_times_is_one_job_and_one_execution(
    stack: Any,
) -> None:
    job = run_one(stack, "e2e/dup.docx", docx_bytes(["duplicate delivery"]))
    assert job.status is JobStatus.SUCCEEDED
    sqs = stack.client("sqs")
    notification = json.dumps(
        {
            "Records": [
                {
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "awsRegion": "us-east-1",
                    "eventName": "ObjectCreated:Put",
                    "s3": {
                        "bucket": {"name": job.source.bucket},
                        "object": {
                            "key": "e2e/dup.docx",
                            "versionId": job.source.version_id,
                            "size": job.source.size,
                            "eTag": job.source.etag,
                        },
                    },
                }
            ]
        }
    )
    for _ in range(3):
        sqs.send_message(QueueUrl=stack.outputs["IngestQueueUrl"], MessageBody=notification)

    def all_handled() -> bool:
        # Deleted, not just received: the starter has finished with every delivery.
        counts = sqs.get_queue_attributes(
            QueueUrl=stack.outputs["IngestQueueUrl"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return (
            int(counts["ApproximateNumberOfMessages"])
            == 0
            == int(counts["ApproximateNumberOfMessagesNotVisible"])
        )

    assert wait_until(all_handled, 60)
    names = [
        e["name"]
        for e in stack.client("stepfunctions").list_executions(
            stateMachineArn=stack.outputs["StateMachineArn"]
        )["executions"]
        if e["name"].startswith(job.job_id)
    ]
    assert names == [f"{job.job_id}-r1"]
    assert stack.jobs.get(job.job_id).status is JobStatus.SUCCEEDED


def test_re_uploading_new_bytes_under_the_same_key_is_a_new_job_with_its_own_output(
    stack: Any,
) -> None:
    first = run_one(stack, "e2e/same-key.docx", docx_bytes(["first version"]))
    second = run_one(stack, "e2e/same-key.docx", docx_bytes(["second version"]))
    assert first.job_id != second.job_id
    assert first.outputs is not None and second.outputs is not None
    assert first.outputs.projection_key != second.outputs.projection_key
    text = json.loads(stack.artifact(second.outputs.projection_key))["canonical_text"]
    assert "second version" in text and "first version" not in text


# ---- payload sizes -------------------------------------------------------------------------


def test_a_large_document_keeps_every_state_payload_small(stack: Any) -> None:
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 8 for i in range(2000)]
    job = run_one(stack, "e2e/large.docx", docx_bytes(paragraphs, tables=50), timeout_s=300)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.counts is not None and job.counts.nodes > 2000
    for event in history(stack, execution(stack, job)["executionArn"]):
        for details in event.values():
            if isinstance(details, dict):
                for field in ("input", "output"):
                    if field in details:
                        assert len(details[field].encode()) < 16 * 1024, event["type"]
