"""The operator policy the stack ships (``OperatorPolicy``) against what the operator
tools really call: every command (jobs list, show, watch, failures, tiers, cancel,
redrive, delete; dlq list, redrive, discard; events tail, republish) and the console's
pages and actions
(uploads, the dead-letter workbench's discard) run against the embedded stack, every AWS
request they make is mapped to the IAM action and resource AWS authorizes it as, and the
deployed policy must allow each one."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import unquote

import pytest
from botocore.client import BaseClient
from richdoc_tools.cli import main
from richdoc_tools.console.app import create_app
from richdoc_tools.console.settings import ConsoleSettings
from richdoc_tools.local.runtime.lambdas import FUNCTION_THREAD_PREFIX
from richdoc_tools.local.runtime.loops import wait_until
from richdoc_tools.ops.operator import Operator

from richdoc.contracts import ParseInput
from richdoc.jobs import JobStatus
from tests.support.admission import admission_state
from tests.support.paths import SAMPLES
from tests.support.stack_runs import execution, run_one

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

PORT = 8031
BASE_URL = f"http://127.0.0.1:{PORT}"


@dataclass(frozen=True)
class Call:
    service: str  # the IAM prefix: s3, dynamodb, sqs, states, cloudformation, sts
    operation: str
    params: dict[str, Any]


@dataclass
class Recorder:
    """The AWS requests this thread makes while ``on`` (the embedded stack's functions run
    on threads of their own: their requests are not the operator's)."""

    calls: list[Call] = field(default_factory=list)
    recording: bool = False
    thread: threading.Thread = field(default_factory=threading.current_thread)

    @contextmanager
    def on(self) -> Iterator[None]:
        self.recording = True
        try:
            yield
        finally:
            self.recording = False


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    original = BaseClient._make_api_call  # type: ignore[attr-defined]  # not in the stubs

    def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if recorder.recording and threading.current_thread() is recorder.thread:
            service = client.meta.service_model.endpoint_prefix
            recorder.calls.append(Call(service, operation, dict(params)))
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", call)
    return recorder


def _queue_arn(url: str, region: str, account: str) -> str:
    return f"arn:aws:sqs:{region}:{account}:{url.rstrip('/').rsplit('/', 1)[-1]}"


def authorizations(call: Call, region: str, account: str) -> list[tuple[str, str]]:
    """The (IAM action, resource ARN) pairs AWS checks for one request."""
    p, op = call.params, call.operation
    if call.service == "sts":
        return []  # GetCallerIdentity needs no permission
    if call.service == "s3":
        bucket = f"arn:aws:s3:::{p['Bucket']}"
        if op in ("ListObjectsV2", "ListObjects"):
            return [("s3:ListBucket", bucket)]
        if op == "ListObjectVersions":
            return [("s3:ListBucketVersions", bucket)]
        if op == "DeleteObjects":
            return [("s3:DeleteObject", f"{bucket}/{o['Key']}") for o in p["Delete"]["Objects"]]
        if op == "CopyObject":  # events republish keeps a success's outputs with its document
            source = p["CopySource"]
            return [
                ("s3:PutObject", f"{bucket}/{p['Key']}"),
                ("s3:GetObject", f"arn:aws:s3:::{source['Bucket']}/{source['Key']}"),
            ]
        versioned = bool(p.get("VersionId"))
        action = {
            "GetObject": "s3:GetObjectVersion" if versioned else "s3:GetObject",
            "HeadObject": "s3:GetObjectVersion" if versioned else "s3:GetObject",
            "PutObject": "s3:PutObject",
            "DeleteObject": "s3:DeleteObjectVersion" if versioned else "s3:DeleteObject",
        }[op]
        return [(action, f"{bucket}/{p['Key']}")]
    if call.service == "dynamodb":
        tables = list(p["RequestItems"]) if op == "BatchGetItem" else [p["TableName"]]
        index = f"/index/{p['IndexName']}" if p.get("IndexName") else ""
        return [
            (f"dynamodb:{op}", f"arn:aws:dynamodb:{region}:{account}:table/{table}{index}")
            for table in tables
        ]
    if call.service == "sqs":
        arn = p.get("SourceArn") or _queue_arn(p["QueueUrl"], region, account)
        return [(f"sqs:{op}", arn)]
    if call.service == "states":
        return [(f"states:{op}", p.get("executionArn") or p["stateMachineArn"])]
    if call.service == "events":
        return [
            ("events:PutEvents", f"arn:aws:events:{region}:{account}:event-bus/{e['EventBusName']}")
            for e in p["Entries"]
        ]
    if call.service == "logs":
        return [(f"logs:{op}", f"arn:aws:logs:{region}:{account}:log-group:{p['logGroupName']}")]
    if call.service == "cloudformation":
        stack = f"arn:aws:cloudformation:{region}:{account}:stack/{p['StackName']}/"
        return [(f"cloudformation:{op}", stack + "00000000-0000-0000-0000-000000000000")]
    raise AssertionError(f"an operator call of a service the policy does not name: {call}")


def allowed(document: dict[str, Any], action: str, resource: str) -> bool:
    def listed(value: str | list[str]) -> list[str]:
        return [value] if isinstance(value, str) else value

    return any(
        statement["Effect"] == "Allow"
        and any(fnmatchcase(action.lower(), a.lower()) for a in listed(statement["Action"]))
        and any(fnmatchcase(resource, r) for r in listed(statement["Resource"]))
        for statement in document["Statement"]
    )


def _deployed_policy(stack: Any) -> dict[str, Any]:
    iam = stack.client("iam")
    arn = stack.outputs["OperatorPolicyArn"]
    version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
    document = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]
    found = document["Document"]
    return json.loads(unquote(found)) if isinstance(found, str) else dict(found)


def _ended(stack: Any, job_id: str, run: int = 1) -> bool:
    job = stack.jobs.get(job_id)
    if job is None or job.run != run or not job.status.terminal:
        return False
    return str(execution(stack, job)["status"]) != "RUNNING"


def _settle(stack: Any) -> None:
    """Leave the shared stack idle for the next test: the redriven dead letters (this
    test's and any other's) and the dropped upload run to their ends, and the cancelled
    run's held parse returns."""
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    queue = stack.outputs["IngestQueueUrl"]
    counts = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")

    def idle() -> bool:
        depth = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=list(counts))
        running = sfn.list_executions(
            stateMachineArn=stack.outputs["StateMachineArn"], statusFilter="RUNNING"
        )["executions"]
        parsing = f"{FUNCTION_THREAD_PREFIX}ParseTier"
        threads = [t for t in threading.enumerate() if t.name.startswith(parsing)]
        return (
            not running
            and not threads
            and all(int(depth["Attributes"].get(c, "0")) == 0 for c in counts)
        )

    assert wait_until(idle, 120)


@pytest.fixture
def parse_on_hold(patch_parse: Callable[..., None]) -> Iterator[threading.Event]:
    """Parses of keys under ``hold/`` wait until released: a job that stays RUNNING."""
    release = threading.Event()

    def held(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.source.key.startswith("hold/"):
            release.wait(120)
        return real(event, **kw)

    patch_parse(held)
    yield release
    release.set()


def test_the_operator_policy_allows_every_call_the_operator_tools_make(
    stack: Any,
    recorder: Recorder,
    parse_on_hold: threading.Event,
    capsys: pytest.CaptureFixture[str],
) -> None:
    contract = (SAMPLES / "contract.docx").read_bytes()
    done = run_one(stack, "policy/contract.docx", contract)
    assert done.status is JobStatus.SUCCEEDED and done.outputs is not None, done.failure
    broken = [run_one(stack, f"policy/plan{n}.dwg", b"AC1032" + bytes(9)) for n in (1, 2, 3)]
    assert wait_until(lambda: all(_ended(stack, job.job_id) for job in broken), 60)
    held = stack.upload(SAMPLES / "contract.docx", key="hold/contract.docx", body=contract)
    assert wait_until(
        lambda: (job := stack.jobs.get(held.job_id)) is not None and job.stage == "parse", 60
    ), admission_state(stack, held.job_id)
    operator = Operator.connect(stack.settings.stack_name)
    settings = ConsoleSettings(operator=operator, port=PORT, stack_label="embedded stack")
    console = create_app(settings).test_client()

    def post(path: str, **kwargs: Any) -> Any:
        headers = {"X-CSRF-Token": settings.csrf_token, "Accept": "application/json"}
        response = console.post(path, base_url=BASE_URL, headers=headers, **kwargs)
        assert response.status_code < 400, response.get_data(as_text=True)
        return response.get_json()

    with recorder.on():
        for command in (
            ["jobs", "list", "--json"],
            ["jobs", "show", done.job_id, "--json"],
            ["jobs", "watch", done.job_id, "--json"],
            ["jobs", "failures", "--json"],
            ["jobs", "tiers", "--json"],
            ["jobs", "backlog", "--json"],
            ["dlq", "list", "--json"],
            ["dlq", "list", "--peek", "--json"],
            ["jobs", "cancel", held.job_id, "--reason", "policy test"],
            ["events", "tail", "--since", "1h", "--json"],
            ["events", "republish", done.job_id],
        ):
            assert main(command) in (0, 1), command
        assert console.get(f"/?token={settings.token}", base_url=BASE_URL).status_code == 303
        for page in (
            "/jobs",
            f"/jobs/{done.job_id}",
            f"/jobs/{done.job_id}/document",
            f"/jobs/{done.job_id}/artifacts/projection.json",
            f"/jobs/{done.job_id}/source",
            "/dead-letters",
            "/failures",
            "/tiers",
        ):
            assert console.get(page, base_url=BASE_URL).status_code == 200, page
        letters = {
            job.job_id: job.dead_letter.message_id
            for job in (stack.jobs.get(j.job_id) for j in broken)
            if job is not None and job.dead_letter is not None
        }
        message_id = letters[broken[1].job_id]
        discard = {"message_id": [message_id], "reason": "policy test", "dry_run": "0"}
        assert post("/dead-letters/discard", data=discard)["outcome"]["done"] == [message_id]
        assert main(["dlq", "discard", letters[broken[2].job_id], "--reason", "policy"]) == 0
        with (SAMPLES / "contract.docx").open("rb") as file:
            dropped = {"files": [(file, "policy/dropped.docx")]}
            post("/uploads", data=dropped, content_type="multipart/form-data")
        assert main(["jobs", "redrive", broken[0].job_id]) == 0
        assert wait_until(lambda: _ended(stack, broken[0].job_id, run=2), 60)
        assert main(["dlq", "redrive"]) == 0
        assert main(["reprocess", "--prefix", "policy/contract", "--json"]) == 0
        assert wait_until(lambda: _ended(stack, done.job_id, run=2), 60)
        assert main(["jobs", "delete", done.job_id, "--with-source", "--json"]) == 0
    parse_on_hold.set()
    capsys.readouterr()
    _settle(stack)

    region, account = stack.outputs["StateMachineArn"].split(":")[3:5]
    policy = _deployed_policy(stack)
    checked = {pair for call in recorder.calls for pair in authorizations(call, region, account)}
    refused = sorted(pair for pair in checked if not allowed(policy, *pair))
    assert refused == []
    # The run made the calls the policy is for (the console's drawing, a cancel's stop,
    # a deletion's purge, a redrive's send): not a vacuous pass.
    assert {action for action, _ in checked} >= {
        "cloudformation:DescribeStacks",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
        "s3:GetObjectVersion",
        "s3:DeleteObjectVersion",
        "s3:DeleteObject",
        "s3:PutObject",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:SendMessage",
        "states:GetExecutionHistory",
        "states:DescribeStateMachineForExecution",
        "states:StopExecution",
        "events:PutEvents",
        "logs:FilterLogEvents",
    }
