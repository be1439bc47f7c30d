"""The embedded stack is as strict as AWS by default, end to end: a permission missing
from a function's role, or from the state machine's, fails the run with AccessDenied
(dead-lettered, named); operators are unrestricted; ``strict=False`` (``--lenient``)
turns the rules off (tests/e2e/test_lenient_stack_e2e.py); ``--lenient`` and
``--faults`` reach the stack from every command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.cli.root import main
from richdoc_tools.local.faults.injected import FaultSettings
from richdoc_tools.local.runtime.events import wait_until
from richdoc_tools.local.stack import EmbeddedStack

from richdoc.jobs import JobStatus
from richdoc.taxonomy import FailureKind
from tests.support.stack_runs import dead_letters_for, run_one

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

NOTE = b"# strict\n\nOn 2024-03-01 the policy took effect.\n"


def _denying(stack: Any, logical_id: str, action: str) -> Iterator[None]:
    """``logical_id``'s role gets an explicit Deny of ``action`` for the block."""
    iam = stack.client("iam")
    role_arn = stack.access.principal(logical_id).role_arn
    role = role_arn.rsplit("/", 1)[1]
    deny = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Deny", "Action": action, "Resource": "*"}],
    }
    iam.put_role_policy(RoleName=role, PolicyName="test-deny", PolicyDocument=json.dumps(deny))
    stack.access.reload(iam, role_arn)
    try:
        yield
    finally:
        iam.delete_role_policy(RoleName=role, PolicyName="test-deny")
        stack.access.reload(iam, role_arn)


@pytest.fixture
def project_may_not_write_outputs(stack: Any) -> Iterator[None]:
    yield from _denying(stack, "ProjectFunction", "s3:PutObject")


@pytest.fixture
def state_machine_may_not_invoke_detect(stack: Any) -> Iterator[None]:
    yield from _denying(stack, "PipelineStateMachine", "lambda:InvokeFunction")


def test_a_permission_missing_from_a_functions_role_fails_the_run_with_access_denied(
    stack: Any, project_may_not_write_outputs: None
) -> None:
    job = run_one(stack, "strict/denied-project.md", NOTE)
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None and job.failure.kind is FailureKind.INTERNAL
    assert "AccessDenied" in job.failure.reason
    assert "s3:PutObject" in job.failure.reason
    assert any("s3:PutObject" in m for m in stack.access.denials)
    assert len(dead_letters_for(stack, job.job_id)) == 1


def test_the_state_machines_task_calls_are_checked_against_its_role(
    stack: Any, state_machine_may_not_invoke_detect: None
) -> None:
    upload = stack.upload(Path("strict/denied-invoke.md"), body=NOTE)
    # RecordStart is already refused: the backstops close the run.
    assert wait_until(lambda: any("lambda:InvokeFunction" in m for m in stack.access.denials), 60)
    assert stack.jobs.get(upload.job_id) is not None


def test_operators_calls_are_not_restricted(stack: Any) -> None:
    # The test's own clients (like the AWS CLI against local serve) are an administrator.
    s3 = stack.client("s3")
    s3.put_object(Bucket=stack.outputs["ArtifactBucketName"], Key="operator/any", Body=b"x")
    assert stack.artifact("operator/any") == b"x"


def test_a_function_reading_a_missing_key_without_list_bucket_gets_403(stack: Any) -> None:
    # The project role may read docling/* but not list the ingest bucket.
    from botocore.exceptions import ClientError
    from richdoc_tools.local.requests import callers

    principal = stack.access.principal("ProjectFunction")
    s3 = stack.client("s3")
    with callers.acting_as(callers.Caller(principal)):
        with pytest.raises(ClientError) as missing_artifact:
            s3.get_object(Bucket=stack.outputs["ArtifactBucketName"], Key="docling/none.json")
        with pytest.raises(ClientError) as not_allowed:
            s3.get_object(Bucket=stack.outputs["IngestBucketName"], Key="anything")
    assert missing_artifact.value.response["Error"]["Code"] == "NoSuchKey"  # it may list
    assert not_allowed.value.response["Error"]["Code"] == "AccessDenied"


def test_a_transaction_sent_again_with_its_token_changes_nothing_again(stack: Any) -> None:
    # As the dispatcher's retry of an admission whose answer was lost: DynamoDB answers
    # the same request with the same ClientRequestToken as it answered the first.
    dynamodb, table = stack.client("dynamodb"), stack.outputs["JobsTableName"]
    key = {"pk": {"S": "TEST#tokens"}, "sk": {"S": "COUNTER"}}
    counted = [
        {
            "Update": {
                "TableName": table,
                "Key": key,
                "UpdateExpression": "ADD #n :one",
                "ExpressionAttributeNames": {"#n": "n"},
                "ExpressionAttributeValues": {":one": {"N": "1"}},
            }
        }
    ]
    for _ in range(2):
        dynamodb.transact_write_items(TransactItems=counted, ClientRequestToken="retried")
    assert dynamodb.get_item(TableName=table, Key=key)["Item"]["n"] == {"N": "1"}


class Refused(Exception):
    """Raised where the command would have started its stack."""


@pytest.mark.parametrize(
    ("argv", "strict", "faults"),
    [
        (
            ["run", "--lenient", "--faults", "0.05,seed=7", "samples/team-notes.md"],
            False,
            (0.05, 7),
        ),
        (["console", "--lenient", "--faults", "0.2,seed=1", "--port", "0"], False, (0.2, 1)),
        (["local", "serve", "--faults", "0.1", "--port", "0"], True, (0.1, 0)),
        (["run", "samples/team-notes.md"], True, None),
    ],
)
def test_lenient_and_faults_reach_the_embedded_stack_of_every_command(
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    strict: bool,
    faults: tuple[float, int] | None,
) -> None:
    import signal

    seen: dict[str, Any] = {}

    def recording(*args: Any, **kwargs: Any) -> EmbeddedStack:
        seen.update(kwargs)
        raise Refused

    monkeypatch.setattr("richdoc_tools.local.stack.EmbeddedStack", recording)
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # leave pytest's handlers
    with pytest.raises(Refused):
        main(argv)
    assert seen["strict"] is strict
    expected = FaultSettings(rate=faults[0], seed=faults[1]) if faults else None
    assert seen["injected_faults"] == expected
