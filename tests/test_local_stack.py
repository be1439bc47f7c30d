"""The embedded stack deploys template.yaml faithfully and behaves like the AWS pieces it
stands in for (Lambda error envelopes and timeouts, the SQS poller, status events)."""

from __future__ import annotations

import inspect
import json
import time
from importlib.metadata import version
from typing import Any

import pytest

from richdoc.jobs import JobStatus
from richdoc.local.events import wait_until
from richdoc.local.lambdas import PATCH_TARGET, PlatformError
from richdoc.local.stack import RETRY_SLEEP_TARGET

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stack")]


# ---- canaries: the moto internals the stack patches --------------------------------------


def test_moto_is_the_exact_pinned_version() -> None:
    assert version("moto") == "5.2.5"


def test_lambda_invoke_patch_point_exists_with_the_expected_shape() -> None:
    import moto.awslambda.models

    # Read moto's source, not the class: the stack may already have patched it.
    assert PATCH_TARGET == "moto.awslambda.models.LambdaFunction._invoke_lambda"
    source = inspect.getsource(moto.awslambda.models)
    assert "class LambdaFunction(" in source
    assert "def _invoke_lambda(self, event: str | None = None) -> tuple[str, bool, str]:" in source
    assert source.count("self._invoke_lambda(") >= 1


def test_retry_sleep_patch_point_still_sleeps_through_the_module_time() -> None:
    import importlib

    module_name, _, attribute = RETRY_SLEEP_TARGET.rpartition(".")
    module = importlib.import_module(module_name)
    assert attribute == "time"
    assert "time.sleep(interval_seconds)" in inspect.getsource(module.RetrierDecl._eval_body)


# ---- deployment fidelity -------------------------------------------------------------------


def test_ingest_bucket_is_versioned_and_notifies_the_ingest_queue(stack: Any) -> None:
    s3 = stack.client("s3")
    bucket = stack.outputs["IngestBucketName"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    [config] = s3.get_bucket_notification_configuration(Bucket=bucket)["QueueConfigurations"]
    assert config["QueueArn"] == stack.outputs["IngestQueueArn"]
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"][
        "BlockPublicAcls"
    ]


def test_ingest_queue_redrives_to_the_dead_letter_queue(stack: Any) -> None:
    attributes = stack.client("sqs").get_queue_attributes(
        QueueUrl=stack.outputs["IngestQueueUrl"], AttributeNames=["All"]
    )["Attributes"]
    policy = json.loads(attributes["RedrivePolicy"])
    assert policy == {
        "deadLetterTargetArn": stack.outputs["DeadLetterQueueArn"],
        "maxReceiveCount": 5,
    }


def test_state_machine_runs_the_definition_file_with_substitutions(stack: Any) -> None:
    described = stack.client("stepfunctions").describe_state_machine(
        stateMachineArn=stack.outputs["StateMachineArn"]
    )
    definition = json.loads(described["definition"])
    source = json.loads((stack.template.root / "statemachine/pipeline.asl.json").read_text())
    assert definition["States"].keys() == source["States"].keys()
    assert "${" not in described["definition"]
    assert definition["States"]["ParseTier1"]["Resource"].startswith("arn:aws:lambda:")


def test_functions_get_the_template_memory_sizes(stack: Any) -> None:
    client = stack.client("lambda")
    memory = {
        logical_id: client.get_function_configuration(FunctionName=name)["MemorySize"]
        for name, logical_id in stack.runtime.functions.items()
    }
    assert (
        memory["ParseTier1Function"] < memory["ParseTier2Function"] < memory["ParseTier3Function"]
    )


def test_stack_outputs_are_published_like_cloudformation(stack: Any) -> None:
    [described] = stack.client("cloudformation").describe_stacks(StackName="richdoc")["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
    assert outputs == stack.outputs


# ---- the Lambda runtime ---------------------------------------------------------------------


def _function_name(stack: Any, logical_id: str) -> str:
    return next(n for n, lid in stack.runtime.functions.items() if lid == logical_id)


def test_handler_exceptions_come_back_in_the_python_runtime_envelope(stack: Any) -> None:
    response = stack.client("lambda").invoke(
        FunctionName=_function_name(stack, "RecordsFunction"),
        Payload=json.dumps({"action": "nonsense"}).encode(),
    )
    assert response["FunctionError"] == "Handled"
    envelope = json.loads(response["Payload"].read())
    assert envelope["errorType"] == "ValidationError"
    assert set(envelope) == {"errorMessage", "errorType", "requestId", "stackTrace"}


def test_platform_faults_are_reported_without_running_the_handler(stack: Any) -> None:
    stack.faults.add("RecordsFunction", PlatformError("Lambda.ServiceException", "boom"))
    response = stack.client("lambda").invoke(
        FunctionName=_function_name(stack, "RecordsFunction"), Payload=b"{}"
    )
    assert json.loads(response["Payload"].read())["errorType"] == "Lambda.ServiceException"


# ---- event delivery -------------------------------------------------------------------------


def _dead_letters(stack: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = (
        stack.client("sqs")
        .receive_message(
            QueueUrl=stack.outputs["DeadLetterQueueUrl"],
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
            VisibilityTimeout=0,
        )
        .get("Messages", [])
    )
    return messages


def _drain_dead_letters(stack: Any) -> None:
    from richdoc.deadletter import move_messages

    sqs = stack.client("sqs")
    scratch = sqs.create_queue(QueueName="drained-dead-letters")["QueueUrl"]
    move_messages(sqs, stack.outputs["DeadLetterQueueUrl"], scratch)


def test_malformed_ingest_messages_are_retried_then_reach_the_dead_letter_queue(
    stack: Any,
) -> None:
    _drain_dead_letters(stack)
    stack.client("sqs").send_message(
        QueueUrl=stack.outputs["IngestQueueUrl"], MessageBody="this is not an S3 notification"
    )
    assert wait_until(lambda: bool(_dead_letters(stack)), timeout_s=30)
    [letter] = _dead_letters(stack)
    assert letter["Body"] == "this is not an S3 notification"
    # Moved by SQS itself after maxReceiveCount failed deliveries (no richdoc attributes).
    assert int(letter["Attributes"]["ApproximateReceiveCount"]) >= 5
    assert "MessageAttributes" not in letter
    _drain_dead_letters(stack)


def test_an_execution_ending_outside_the_definition_is_reconciled(
    stack: Any, tmp_path: Any
) -> None:
    # RecordStart and then RecordFailure die on the platform, so the execution fails
    # without any Catch recording it; the status-change rule must still close the job.
    _drain_dead_letters(stack)
    stack.faults.add(
        "RecordsFunction",
        PlatformError("Lambda.Unknown", "sandbox lost"),
        PlatformError("Lambda.Unknown", "sandbox lost"),
    )
    upload = stack.upload(tmp_path / "orphan.md", body=b"# orphan\n")
    jobs = stack.wait_for_jobs([upload.job_id], timeout_s=60)
    job = jobs[upload.job_id]
    assert job is not None and job.status is JobStatus.DEAD_LETTERED
    assert job.failure["kind"] == "internal"
    assert job.failure["error"] == "Execution.FAILED"
    [letter] = _dead_letters(stack)
    assert letter["MessageAttributes"]["richdoc.job_id"]["StringValue"] == upload.job_id
    _drain_dead_letters(stack)
    time.sleep(0.1)
