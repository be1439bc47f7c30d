"""Operator commands against AWS-shaped resources: stack outputs, one-line errors, and the
StartMessageMoveTask redrive (stubbed SQS, since no AWS account is at hand)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from richdoc_tools.cli import main
from richdoc_tools.ops.dead_letter_queue.acting import redrive_all
from richdoc_tools.ops.operator import Operator, StackResources


def test_operator_commands_report_a_missing_stack_in_one_line(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "list", "--stack", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("richdoc jobs: stack 'nope' not found") and err.count("\n") == 1


RESOURCES = StackResources(
    stack_name="richdoc",
    ingest_bucket="ingest",
    artifact_bucket="artifacts",
    ingest_queue_url="https://sqs.eu-west-1.amazonaws.com/111122223333/richdoc-IngestQueue",
    ingest_queue_arn="arn:aws:sqs:eu-west-1:111122223333:richdoc-IngestQueue",
    dead_letter_queue_url="https://sqs.eu-west-1.amazonaws.com/111122223333/richdoc-DLQ",
    dead_letter_queue_arn="arn:aws:sqs:eu-west-1:111122223333:richdoc-DLQ",
    jobs_table="richdoc-JobsTable",
    state_machine_arn="arn:aws:states:eu-west-1:111122223333:stateMachine:richdoc",
)


@pytest.fixture
def aws_operator(monkeypatch: pytest.MonkeyPatch) -> tuple[Operator, Stubber]:
    """An operator of a deployed stack (no endpoint URL) whose SQS calls are stubbed."""
    session = boto3.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="eu-west-1"
    )
    sqs = session.client("sqs")
    operator = Operator(session, RESOURCES)
    monkeypatch.setattr(operator, "sqs", sqs)
    return operator, Stubber(sqs)


def test_redrive_on_aws_starts_a_message_move_task_to_the_ingest_queue(
    aws_operator: tuple[Operator, Stubber],
) -> None:
    operator, stubber = aws_operator
    stubber.add_response(
        "start_message_move_task",
        {"TaskHandle": "task-123"},
        # Messages the state machine sent have no SQS-recorded source: name the target.
        {
            "SourceArn": RESOURCES.dead_letter_queue_arn,
            "DestinationArn": RESOURCES.ingest_queue_arn,
        },
    )
    with stubber:
        assert redrive_all(operator) == "task-123"
    stubber.assert_no_pending_responses()


def test_redrive_against_aws_says_when_the_move_task_is_refused(
    aws_operator: tuple[Operator, Stubber],
) -> None:
    operator, stubber = aws_operator
    stubber.add_client_error(
        "start_message_move_task", service_error_code="InternalError", http_status_code=500
    )
    with stubber, pytest.raises(Exception, match="InternalError"):
        redrive_all(operator)


def test_operator_finds_resources_from_the_stack_outputs(aws: None) -> None:
    cfn = boto3.client("cloudformation")
    outputs = {
        "IngestBucketName": "ingest",
        "ArtifactBucketName": "artifacts",
        "IngestQueueUrl": RESOURCES.ingest_queue_url,
        "IngestQueueArn": RESOURCES.ingest_queue_arn,
        "DeadLetterQueueUrl": RESOURCES.dead_letter_queue_url,
        "DeadLetterQueueArn": RESOURCES.dead_letter_queue_arn,
        "JobsTableName": "richdoc-JobsTable",
        "StateMachineArn": RESOURCES.state_machine_arn,
    }
    cfn.create_stack(
        StackName="prod-docs",
        TemplateBody=json.dumps(
            {
                "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
                "Outputs": {k: {"Value": v} for k, v in outputs.items()},
            }
        ),
    )
    operator = Operator.connect("prod-docs")
    assert operator.resources == StackResources.from_outputs("prod-docs", outputs)


# ---- what waits on the dead-letter queue -------------------------------------------------------


def _notification(key: str, version: str) -> str:
    return json.dumps(
        {
            "Records": [
                {
                    "eventSource": "aws:s3",
                    "eventName": "ObjectCreated:Put",
                    "s3": {
                        "bucket": {"name": "ingest"},
                        "object": {"key": key, "versionId": version, "eTag": "e", "size": 1},
                    },
                }
            ]
        }
    )


def test_dead_letters_say_what_they_are_even_without_richdoc_attributes() -> None:
    from richdoc_tools.ops.dead_letter_queue.acting import redrive_outlook
    from richdoc_tools.ops.dead_letter_queue.reading import DeadLetter

    from richdoc.jobs import job_id_for

    failed_run = DeadLetter(
        "m1",
        _notification("a.pdf", "v1"),
        {"richdoc.job_id": "j1", "richdoc.run": "2", "richdoc.kind": "corrupt_input"},
    )
    undelivered = DeadLetter("m2", _notification("my+report.pdf", "v7"))
    malformed = DeadLetter("m3", "\x1b[2Jhello" + "x" * 300)

    assert (failed_run.kind, failed_run.job_id, failed_run.run) == ("corrupt_input", "j1", 2)
    assert undelivered.kind == "undelivered"
    assert undelivered.job_id == job_id_for("ingest", "my report.pdf", "v7")
    assert undelivered.reason == "the starter failed on every delivery of s3://ingest/my report.pdf"
    assert (malformed.kind, malformed.job_id) == ("malformed", None)
    assert malformed.reason is not None
    assert malformed.reason.startswith("message body is not JSON: ")
    assert "'\\x1b[2Jhello" in malformed.reason and malformed.reason.endswith("...")

    outlook = redrive_outlook([failed_run, undelivered, malformed, malformed])
    assert (outlook.total, outlook.next_runs, outlook.undelivered, outlook.malformed) == (
        4,
        1,
        1,
        2,
    )
    assert outlook.lines()[2].startswith("2 malformed message(s), not S3 notifications")


def test_a_runs_shards_are_listed_in_page_order_with_their_last_attempt() -> None:
    from richdoc_tools.ops.shards import ShardParse, shard_parses

    from richdoc.contracts import PageSpan
    from richdoc.jobs import Attempt

    def attempt(
        seq: int, run: int, pages: str | None, tier: int, outcome: str, **kw: Any
    ) -> Attempt:
        stage = kw.pop("stage", "parse")
        return Attempt(
            job_id="j",
            run=run,
            seq=seq,
            stage=stage,
            attempt=1,
            outcome=outcome,
            started_at="t",
            tier=tier,
            pages=PageSpan.parse(pages) if pages else None,
            **kw,
        )

    attempts = [
        attempt(1, 1, None, 1, "ok", stage="plan"),
        attempt(2, 1, "51-100", 1, "Runtime.OutOfMemory"),
        attempt(3, 1, "1-50", 1, "ok", cached=False),
        attempt(4, 1, "51-100", 2, "ok", cached=False),
        attempt(5, 2, "1-50", 1, "ok", cached=True),
        attempt(6, 1, None, 1, "ok", stage="merge"),
    ]
    first, second = PageSpan.parse("1-50"), PageSpan.parse("51-100")
    assert shard_parses(attempts) == [
        ShardParse(run=1, pages=first, attempts=1, tier=1, outcome="ok", cached=False),
        ShardParse(run=1, pages=second, attempts=2, tier=2, outcome="ok", cached=False),
        ShardParse(run=2, pages=first, attempts=1, tier=1, outcome="ok", cached=True),
    ]
    assert shard_parses([attempt(1, 1, None, 1, "ok")]) == []  # a whole document
