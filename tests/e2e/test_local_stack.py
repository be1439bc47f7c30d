"""The embedded stack deploys template.yaml faithfully and behaves like the AWS pieces it
stands in for (Lambda error envelopes and timeouts, the SQS poller, status events)."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from botocore.exceptions import ClientError
from richdoc_tools.local.faults.scripted import PlatformError, ServiceError
from richdoc_tools.local.moto_fixes.speed.definition_parse import DefinitionParses
from richdoc_tools.local.runtime.loops import wait_until
from richdoc_tools.local.runtime.scheduled_events import schedule_period_s
from richdoc_tools.local.runtime.status_events import TERMINAL_STATUSES, ExecutionStatusEvents
from richdoc_tools.local.stack import EventLoopFailed

from richdoc.jobs import JobStatus

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stack")]


# ---- event delivery, unit by unit ----------------------------------------------------------


def test_schedule_expressions_the_emulation_fires() -> None:
    assert schedule_period_s("rate(15 minutes)") == 900
    assert schedule_period_s("rate(1 hour)") == 3600
    assert schedule_period_s("rate(2 days)") == 172800
    with pytest.raises(ValueError, match="only rate"):
        schedule_period_s("cron(0 12 * * ? *)")


def test_status_events_list_only_the_statuses_a_rule_can_match() -> None:
    loop = ExecutionStatusEvents(
        sfn=cast(Any, None),
        events=cast(Any, None),
        invoker=cast(Any, None),
        state_machine_arn="arn",
        region="r",
        account="a",
    )

    def rule(pattern: dict[str, Any]) -> tuple[dict[str, Any], None]:
        return {"EventPattern": json.dumps(pattern)}, None

    failures = rule({"detail": {"status": ["FAILED", "TIMED_OUT", "ABORTED"]}})
    assert loop._statuses_to_list([failures]) == ["FAILED", "TIMED_OUT", "ABORTED"]
    assert loop._statuses_to_list([]) == []
    # A rule without a plain status list may match anything: list every terminal status.
    assert loop._statuses_to_list([failures, rule({"source": ["aws.states"]})]) == list(
        TERMINAL_STATUSES
    )
    loop.on_event = lambda event: None
    assert loop._statuses_to_list([failures]) == list(TERMINAL_STATUSES)


# ---- deployment fidelity -------------------------------------------------------------------


def test_ingest_bucket_is_versioned_and_notifies_the_ingest_queue(stack: Any) -> None:
    s3 = stack.client("s3")
    bucket = stack.outputs["IngestBucketName"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    configs = s3.get_bucket_notification_configuration(Bucket=bucket)["QueueConfigurations"]
    # Created objects start jobs; removed or expired ones delete them.
    assert sorted(event for config in configs for event in config["Events"]) == [
        "s3:LifecycleExpiration:*",
        "s3:ObjectCreated:*",
        "s3:ObjectRemoved:*",
    ]
    assert {config["QueueArn"] for config in configs} == {stack.outputs["IngestQueueArn"]}
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


def test_executions_share_one_parse_of_the_definition(stack: Any, tmp_path: Any) -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    uploads = [stack.upload(tmp_path / f"shared-{i}.md", body=f"# {i}\n".encode()) for i in (1, 2)]
    jobs = stack.wait_for_jobs([u.job_id for u in uploads], timeout_s=120)
    assert all(job is not None and job.status is JobStatus.SUCCEEDED for job in jobs.values())
    parse = inspect.getattr_static(AmazonStateLanguageParser, "parse").__func__
    assert isinstance(parse, DefinitionParses)
    machine = stack.client("stepfunctions").describe_state_machine(
        stateMachineArn=stack.outputs["StateMachineArn"]
    )
    assert machine["definition"] in parse.trees  # parsed once, kept for every execution


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


def test_functions_share_this_machines_cores_whatever_they_reserve(stack: Any) -> None:
    cores = os.cpu_count() or 2
    for logical_id in stack.runtime.functions.values():
        local = cores if stack.runtime.handlers[logical_id].image else 4 * cores
        assert stack.runtime.runners[logical_id] == local, logical_id


def test_an_invocation_beyond_the_reserved_concurrency_is_throttled_at_once(stack: Any) -> None:
    client = stack.client("lambda")
    name = _function_name(stack, "ParseTier3Function")
    reserved = client.get_function_concurrency(FunctionName=name)["ReservedConcurrentExecutions"]
    assert stack.runtime.reserved.reserved["ParseTier3Function"] == reserved
    throttled = stack.runtime.reserved.throttled["ParseTier3Function"]
    with contextlib.ExitStack() as busy:  # the function runs as many as it reserves
        for _ in range(reserved):
            busy.enter_context(stack.runtime.reserved.invocation("ParseTier3Function"))
        with pytest.raises(ClientError) as refused:
            client.invoke(FunctionName=name, Payload=b"{}")
    answer = cast(dict[str, Any], refused.value.response)
    assert answer["Error"]["Code"] == "TooManyRequestsException"
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert answer["Reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded"
    # Refused before it ran: no invocation, only throttles (boto3 retried the 429 itself).
    assert stack.runtime.reserved.throttled["ParseTier3Function"] > throttled
    assert stack.runtime.reserved.in_flight("ParseTier3Function") == 0


def test_the_starter_mapping_keeps_its_maximum_concurrency(stack: Any) -> None:
    mappings = stack.client("lambda").list_event_source_mappings()["EventSourceMappings"]
    [mapping] = [m for m in mappings if ":sqs:" in m["EventSourceArn"]]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 5}


def test_the_records_function_has_its_async_failure_destination(stack: Any) -> None:
    config = stack.client("lambda").get_function_event_invoke_config(
        FunctionName=_function_name(stack, "RecordsFunction")
    )
    assert config["MaximumRetryAttempts"] == 2
    queue_name = stack.outputs["ReconcileFailureQueueUrl"].rsplit("/", 1)[1]
    assert config["DestinationConfig"]["OnFailure"]["Destination"].endswith(f":{queue_name}")


def test_the_alarm_topic_key_rotates_and_no_email_subscribes_by_default(stack: Any) -> None:
    sns, kms = stack.client("sns"), stack.client("kms")
    attributes = sns.get_topic_attributes(TopicArn=stack.outputs["AlarmTopicArn"])["Attributes"]
    key = attributes["KmsMasterKeyId"]
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is True
    # AlarmEmail is empty by default: the condition leaves the subscription out.
    topic = stack.outputs["AlarmTopicArn"]
    assert sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"] == []


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
    stack.script.add("RecordsFunction", PlatformError("Lambda.ServiceException", "boom"))
    response = stack.client("lambda").invoke(
        FunctionName=_function_name(stack, "RecordsFunction"), Payload=b"{}"
    )
    assert json.loads(response["Payload"].read())["errorType"] == "Lambda.ServiceException"


def test_a_fault_for_some_events_waits_for_an_invocation_with_such_an_event(stack: Any) -> None:
    stack.script.add(
        "RecordsFunction",
        PlatformError("Lambda.ServiceException", "boom"),
        when=lambda event: event.get("action") == "nonsense",
    )
    name = _function_name(stack, "RecordsFunction")
    other = stack.client("lambda").invoke(FunctionName=name, Payload=b'{"action": "other"}')
    assert json.loads(other["Payload"].read())["errorType"] == "ValidationError"  # the handler
    chosen = stack.client("lambda").invoke(FunctionName=name, Payload=b'{"action": "nonsense"}')
    assert json.loads(chosen["Payload"].read())["errorType"] == "Lambda.ServiceException"


def test_scripted_send_failures_fail_one_request_each_for_that_queue_only(stack: Any) -> None:
    sqs = stack.client("sqs")
    scratch = sqs.create_queue(QueueName="scripted-sends")["QueueUrl"]
    stack.script.fail_sends("DeadLetterQueue", ServiceError(), ServiceError("KmsThrottled", "x"))
    sqs.send_message(QueueUrl=scratch, MessageBody="another queue is not affected")
    codes = []
    for _ in range(2):
        with pytest.raises(ClientError) as failed:
            sqs.send_message(QueueUrl=stack.outputs["DeadLetterQueueUrl"], MessageBody="m")
        codes.append(failed.value.response["Error"]["Code"])
    assert codes == ["InternalError", "KmsThrottled"]  # boto3 did not retry them itself
    assert stack.script.pending_sends("DeadLetterQueue") == 0
    sent = sqs.send_message(QueueUrl=stack.outputs["DeadLetterQueueUrl"], MessageBody="m")
    assert sent["MessageId"]
    _drain_dead_letters(stack)


def test_a_fired_schedule_runs_the_sweep_to_its_end(stack: Any) -> None:
    before = len(stack.runtime.invocations)
    # A time before any job was written: nothing is stuck, the sweep succeeds at once.
    # The sweep, and the dispatcher's minutely backstop.
    assert stack.fire_schedules(at=datetime(2000, 1, 1, tzinfo=UTC)) == 2
    # Delivered before fire_schedules returned (the stream's functions may be finishing an
    # earlier test's jobs meanwhile, and the starter's invocation on the bucket's test event
    # may end in between: only the scheduled invocations count).
    fired = [
        (i.logical_id, i.error_type)
        for i in stack.runtime.invocations[before:]
        if i.logical_id in ("RecordsFunction", "DispatcherFunction")
    ]
    assert {logical_id for logical_id, _ in fired} == {"RecordsFunction", "DispatcherFunction"}
    assert all(error is None for _, error in fired)


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
    """Move the dead-letter queue's messages away (to a queue of their own), and wait until
    the move task has moved them."""
    sqs = stack.client("sqs")
    scratch = sqs.create_queue(QueueName="drained-dead-letters")["QueueUrl"]
    scratch_arn = sqs.get_queue_attributes(QueueUrl=scratch, AttributeNames=["QueueArn"])
    source = stack.outputs["DeadLetterQueueArn"]
    sqs.start_message_move_task(
        SourceArn=source, DestinationArn=scratch_arn["Attributes"]["QueueArn"]
    )

    def moved() -> bool:
        [task] = sqs.list_message_move_tasks(SourceArn=source)["Results"]
        return task["Status"] == "COMPLETED"

    assert wait_until(moved, 60)


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
    invoked_before = len(stack.runtime.invocations)
    stack.script.add(
        "RecordsFunction",
        PlatformError("Lambda.Unknown", "sandbox lost"),
        PlatformError("Lambda.Unknown", "sandbox lost"),
    )
    upload = stack.upload(tmp_path / "orphan.md", body=b"# orphan\n")
    jobs = stack.wait_for_jobs([upload.job_id], timeout_s=60)
    job = jobs[upload.job_id]
    assert job is not None and job.status is JobStatus.DEAD_LETTERED
    assert job.failure.kind == "internal"
    assert job.failure.error == "Execution.FAILED"

    # The reconciler records the job first and sends the message after: wait for it.
    def reconciled() -> bool:
        return any(
            i.logical_id == "RecordsFunction" and i.error_type is None
            for i in stack.runtime.invocations[invoked_before:]
        )

    assert wait_until(reconciled, timeout_s=60)
    [letter] = _dead_letters(stack)
    assert letter["MessageAttributes"]["richdoc.job_id"]["StringValue"] == upload.job_id
    _drain_dead_letters(stack)


def test_quick_overwrites_of_one_key_are_one_job_per_version(stack: Any, tmp_path: Any) -> None:
    path = tmp_path / "overwritten.md"
    first = stack.upload(path, key="inbox/overwritten.md", body=b"# First\n\nAlpha text.\n")
    second = stack.upload(path, key="inbox/overwritten.md", body=b"# Second\n\nBeta text.\n")
    assert first.version_id and second.version_id and first.job_id != second.job_id
    jobs = stack.wait_for_jobs([first.job_id, second.job_id], timeout_s=120)
    for upload, text in ((first, "Alpha"), (second, "Beta")):
        job = jobs[upload.job_id]
        assert job is not None and job.status is JobStatus.SUCCEEDED
        assert job.source.version_id == upload.version_id
        projection = json.loads(stack.artifact(job.outputs.projection_key))
        assert text in projection["canonical_text"]


def test_waiting_stops_as_soon_as_an_event_loop_fails(stack: Any) -> None:
    [poller] = [loop for loop in stack.delivery.loops if loop.name.startswith("sqs-poller")]
    poller.errors.append(RuntimeError("receive failed"))
    try:
        with pytest.raises(EventLoopFailed, match="RuntimeError: receive failed"):
            stack.wait_for_jobs(["a-job-that-will-never-exist"], timeout_s=600)
    finally:
        poller.errors.clear()


# ---- function logs ---------------------------------------------------------------------------


def test_concurrent_jobs_log_with_their_own_job_as_correlation_id(
    stack: Any, tmp_path: Any
) -> None:
    uploads = [
        stack.upload(tmp_path / f"concurrent-{n}.md", body=f"# Memo {n}\n\nLine {n}.\n".encode())
        for n in range(16)
    ]
    job_ids = {u.job_id for u in uploads}
    jobs = stack.wait_for_jobs(job_ids, timeout_s=300)
    assert {job.status for job in jobs.values() if job} == {JobStatus.SUCCEEDED}
    # Each handler invocation recorded its request id in its attempt item.
    job_of_request = {
        a.request_id: a.job_id for job_id in job_ids for a in stack.jobs.attempts.of_job(job_id)
    }
    lines = [json.loads(line) for line in stack.settings.log_path.read_text().splitlines()]
    ours = [line for line in lines if line.get("function_request_id") in job_of_request]
    for line in ours:
        assert line["correlation_id"] == job_of_request[line["function_request_id"]], line
    finished = {
        (line["correlation_id"], line["service"])
        for line in ours
        if line["message"] == "stage finished"
    }
    assert finished == {(j, s) for j in job_ids for s in ("plan", "parse", "project", "detect")}
    # The outputs a line reports name its own job, whatever the keys say.
    for line in ours:
        for key in ("projection_key", "detection_key"):
            if key in line.get("result", {}):
                assert line["result"][key].startswith(f"jobs/{line['correlation_id']}/")


LATE_HANDLER = """
import threading
from aws_lambda_powertools import Metrics
from richdoc_tools.local.settings import StackSettings
from richdoc_tools.local.stack import EmbeddedStack

stopped = threading.Event()


def handler_still_running():  # as the stack stops, a handler whose thread outlives it
    stopped.wait()
    Metrics(namespace="richdoc").flush_metrics()  # it added no metric: Powertools warns


with EmbeddedStack(StackSettings(schedules=False)):
    late = threading.Thread(target=handler_still_running, name="lambda-Late")
    late.start()
stopped.set()
late.join()
print("stopped")
"""


def test_a_handler_that_outlives_the_stack_adds_no_metrics_warning_to_the_terminal() -> None:
    """The end of every `richdoc run` and every Ctrl-C of `local serve` printed
    Powertools' 'No application metrics to publish' from a handler still running."""
    import subprocess
    import sys

    from tests.support.cli_process import ROOT, environment

    done = subprocess.run(
        [sys.executable, "-c", LATE_HANDLER],
        cwd=ROOT,
        env=environment(
            {"PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/docling", "tools", "."))}
        ),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == "stopped\n", done.stderr[-3000:]
    assert "No application metrics" not in done.stderr
