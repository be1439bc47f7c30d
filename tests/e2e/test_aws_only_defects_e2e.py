"""Three defects that only AWS shows, end to end on the strict embedded stack: each test
drives the race or the input that exposes it deterministically (a held transaction, a
gated parse, a gated removal, a queue paused) and asserts what the pipeline must do on
AWS. Each failed against the code before its fix: nothing here relaxes the emulation.

* A sharded PDF's job-item writes meet a transaction in flight on the job item
  (DynamoDB refuses them with TransactionConflictException): the job must not be
  dead-lettered as internal.
* A source removed before its parse, read by a role without ``s3:ListBucket`` on the
  ingest bucket (S3 answers 403, not 404): the job fails as corrupt_input, "no longer
  exists"; a version deleted before its created event is handled leaves a tombstone,
  so that event starts nothing.
* An object key with a control character, in a run that fails: the dead-letter message
  (whose attributes carry the failure reason, with the key) is accepted by SQS, which
  refuses those characters: exactly one message, the job DEAD_LETTERED.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.patches.dynamodb_transactions import SINGLE_WRITES
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ParseInput
from richdoc.deletion import Deletion
from richdoc.jobs import JobStatus
from richdoc.jobs.keys import job_key
from richdoc.parse.settings import SHARD_PAGES_ENV
from richdoc.taxonomy import FailureKind
from tests.support import parse_inputs
from tests.support.gates import Gate
from tests.support.stack_runs import dead_letters_for, job_of, upload, wait_for_handlers

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

PAST_THE_WORKFLOW_TIMEOUT = timedelta(hours=3, minutes=15)


def _ended(stack: Any, job_id: str) -> bool:
    job = stack.jobs.get(job_id)
    return job is not None and job.status.terminal


def _until_dead_lettered_or_reconciled(stack: Any, job_id: str) -> None:
    """The run's own dead-letter route has finished: the job is DEAD_LETTERED, or its
    execution ended and the reconciler (the backstop) has run for it."""

    def settled() -> bool:
        job = stack.jobs.get(job_id)
        if job is None:
            return False
        if job.status.terminal:
            return True
        if job.status is not JobStatus.FAILED or job.execution_arn is None:
            return False
        sfn = stack.client("stepfunctions")
        return sfn.describe_execution(executionArn=job.execution_arn)["status"] != "RUNNING"

    assert wait_until(settled, 180, interval_s=0.2)
    # The sweep closes whatever the definition and the reconciler could not.
    stack.fire_schedules(at=datetime.now(UTC) + PAST_THE_WORKFLOW_TIMEOUT)


# ---- a transaction in flight on a sharded job's item --------------------------------------


@pytest.fixture
def two_parses_at_once(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both shards parse side by side, however few cores the machine has."""
    monkeypatch.setitem(stack.runtime._runners, "ParseTier1Function", threading.BoundedSemaphore(2))


def test_sharded_job_item_writes_that_meet_a_transaction_in_flight_do_not_dead_letter_the_job(
    stack: Any,
    patch_parse: Callable[..., None],
    two_parses_at_once: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(SHARD_PAGES_ENV, "2")
    gate = Gate()

    def shards_wait(event: ParseInput, real: Callable[..., Any], **kwargs: Any) -> Any:
        gate.wait_here()
        return real(event, **kwargs)

    patch_parse(shards_wait)
    body = parse_inputs.long_pdf(tmp_path / "w1.pdf", pages=4, seed=5).read_bytes()
    job_id = upload(stack, "aws-only/w1-sharded.pdf", body)
    # Both shards have opened their attempts and wait in their parse.
    assert wait_until(lambda: gate.arrivals == 2, 120)

    # A transaction on the job item goes in flight, and stays there until a single write
    # of the item has been refused (another transaction is cancelled meanwhile).
    table = stack.outputs["JobsTableName"]
    hold = stack.transactions.hold(
        lambda t: t.touches(table, job_key(job_id)["pk"]),
        until_refused=1,
        counting=SINGLE_WRITES,
    )
    check = {
        "ConditionCheck": {
            "TableName": table,
            "Key": {name: {"S": value} for name, value in job_key(job_id).items()},
            "ConditionExpression": "attribute_exists(pk)",
        }
    }
    transaction = threading.Thread(
        target=stack.client("dynamodb").transact_write_items, kwargs={"TransactItems": [check]}
    )
    transaction.start()
    assert hold.wait_entered(30)
    gate.open()  # the shards finish their parse and write the job item
    transaction.join(60)

    assert wait_until(lambda: _ended(stack, job_id), 180)
    wait_for_handlers(stack)
    job = job_of(stack, job_id)
    assert any(r.operation in SINGLE_WRITES for r in hold.refused)
    assert job.failure is None or job.failure.kind is not FailureKind.INTERNAL, job.failure
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.shards == 2


# ---- a source removed before its parse ------------------------------------------------------


@pytest.fixture
def removals(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Removal notifications wait at this gate before the starter deletes their jobs."""
    gate = Gate()
    monkeypatch.setattr(Deletion, "source_removed", gate.before(Deletion.source_removed))
    yield gate
    gate.open()


def _remove_the_source_before_its_parse(
    stack: Any, patch_parse: Callable[..., None], key: str, body: bytes
) -> str:
    """Upload, let the parse start only once the version is gone; returns the job id."""
    parse_gate = Gate()

    def parse_after_removal(event: ParseInput, real: Callable[..., Any], **kwargs: Any) -> Any:
        parse_gate.wait_here()
        return real(event, **kwargs)

    patch_parse(parse_after_removal)
    uploaded = stack.upload(Path(key), key=key, body=body)
    assert parse_gate.reached()
    stack.client("s3").delete_object(
        Bucket=stack.outputs["IngestBucketName"], Key=key, VersionId=uploaded.version_id
    )
    parse_gate.open()
    return str(uploaded.job_id)


def test_a_source_removed_before_its_parse_fails_as_corrupt_input_under_the_parse_role(
    stack: Any, patch_parse: Callable[..., None], removals: Gate
) -> None:
    job_id = _remove_the_source_before_its_parse(
        stack, patch_parse, "aws-only/w2-removed.md", b"# gone\n\nbefore its parse\n"
    )
    _until_dead_lettered_or_reconciled(stack, job_id)
    job = job_of(stack, job_id)
    assert job.failure is not None
    assert job.failure.kind is FailureKind.CORRUPT_INPUT, job.failure
    assert "no longer exists" in job.failure.reason
    assert job.status is JobStatus.DEAD_LETTERED
    assert len(dead_letters_for(stack, job_id)) == 1
    removals.open()  # the removal notification then deletes the job
    assert wait_until(lambda: job_of(stack, job_id).status is JobStatus.DELETED, 60)


def test_a_version_deleted_before_its_created_event_leaves_a_tombstone(stack: Any) -> None:
    sqs = stack.client("sqs")
    queue = stack.outputs["IngestQueueUrl"]
    key = "aws-only/w2-tombstone.md"
    with stack.queues_paused():
        uploaded = stack.upload(Path(key), key=key, body=b"# short-lived\n")
        # The created notification is taken aside; the removal goes first.
        created = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=300)["Messages"]
        assert len(created) == 1 and "ObjectCreated" in created[0]["Body"]
        stack.client("s3").delete_object(
            Bucket=stack.outputs["IngestBucketName"], Key=key, VersionId=uploaded.version_id
        )

    def removal_handled() -> bool:
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
        return (
            attributes["ApproximateNumberOfMessages"] == "0"
            and attributes["ApproximateNumberOfMessagesNotVisible"] == "1"  # ours
        )

    assert wait_until(removal_handled, 60)
    sqs.change_message_visibility(
        QueueUrl=queue, ReceiptHandle=created[0]["ReceiptHandle"], VisibilityTimeout=0
    )
    assert wait_until(lambda: stack.jobs.get(uploaded.job_id) is not None, 60)
    assert wait_until(removal_handled_and_drained(sqs, queue), 60)
    wait_for_handlers(stack)
    job = job_of(stack, uploaded.job_id)
    assert job.status is JobStatus.DELETED, job
    assert job.execution_arn is None or not _execution_exists(stack, job.execution_arn)
    assert dead_letters_for(stack, uploaded.job_id) == []


def removal_handled_and_drained(sqs: Any, queue: str) -> Callable[[], bool]:
    def drained() -> bool:
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
        return (
            attributes["ApproximateNumberOfMessages"] == "0"
            and attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
        )

    return drained


def _execution_exists(stack: Any, arn: str) -> bool:
    sfn = stack.client("stepfunctions")
    try:
        sfn.describe_execution(executionArn=arn)
    except sfn.exceptions.ExecutionDoesNotExist:
        return False
    return True


# ---- a control character in the key of a failing run ----------------------------------------


@pytest.fixture
def parse_roles_may_list_the_ingest_bucket(stack: Any) -> Iterator[None]:
    """The parse roles may list the ingest bucket, so that a missing source reads as 404
    (its reason names the key) whatever the template grants."""
    iam = stack.client("iam")
    bucket = stack.outputs["IngestBucketName"]
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}"}
        ],
    }
    roles = [stack.access.principal(f"ParseTier{tier}Function").role_arn for tier in (1, 2, 3)]
    for role_arn in roles:
        name = role_arn.rsplit("/", 1)[1]
        iam.put_role_policy(
            RoleName=name, PolicyName="test-list-ingest", PolicyDocument=json.dumps(document)
        )
        stack.access.reload(iam, role_arn)
    yield
    for role_arn in roles:
        iam.delete_role_policy(RoleName=role_arn.rsplit("/", 1)[1], PolicyName="test-list-ingest")
        stack.access.reload(iam, role_arn)


def test_a_failing_run_of_a_key_with_a_control_character_reaches_the_dead_letter_queue(
    stack: Any,
    patch_parse: Callable[..., None],
    removals: Gate,
    parse_roles_may_list_the_ingest_bucket: None,
) -> None:
    job_id = _remove_the_source_before_its_parse(
        stack, patch_parse, "aws-only/w3-bell\x01.md", b"# a key with a control character\n"
    )
    _until_dead_lettered_or_reconciled(stack, job_id)
    job = job_of(stack, job_id)
    assert job.failure is not None and "w3-bell" in job.failure.reason  # it names the key
    assert job.status is JobStatus.DEAD_LETTERED, job
    [letter] = dead_letters_for(stack, job_id)
    attributes = letter["MessageAttributes"]
    assert attributes["richdoc.kind"]["StringValue"] == str(job.failure.kind if job.failure else "")
    assert "\x01" not in "".join(str(a.get("StringValue", "")) for a in attributes.values())
