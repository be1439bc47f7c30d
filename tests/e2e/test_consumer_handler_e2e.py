"""The consumer contract end to end on the strict embedded stack: docs/consumers.md's
handler, executed as printed, subscribed by a rule of its own under the page's queue
policy, keeps an index that equals the manifests after out-of-order versions, a deleted
old version, a noncurrent version the lifecycle expires, a failed newest version, a
deleted key, a replay of the archive, and a consumer that lags behind a delete;
non-ASCII metadata arrives decoded in the job, the manifest and the event; and the
consumer policy allows what the page documents and no forged event; a change the
notifier cannot deliver outlasts an outage, then is parked whole and republished.

Waits are on observable conditions: a job's record, the notifier having handled every
change written so far, a gate the test opens."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

import pytest
from botocore.handlers import validate_ascii_metadata
from richdoc_tools.cli import main
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime.events import wait_until
from richdoc_tools.local.strict.policies import AuthorizationRequest, PolicyDocument, evaluate

from richdoc.contracts import ParseInput
from richdoc.jobs import JobStatus, job_id_for
from richdoc.taxonomy import CorruptInput
from richdoc_client.events import CompletionEvent, TerminalStatus
from richdoc_client.identity import document_id
from richdoc_client.reader import ResultNotFound, ResultsReader
from tests.support.consumer_docs import documented, subscribe
from tests.support.gates import Gate

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 120
KEY, LAGGING = "consumers/lease.md", "consumers/lagging.md"
BROKEN_SIZE = 4321  # a version of this size fails its parse (corrupt_input)
EVERYTHING = '{"source": ["richdoc"]}'


def body(text: str) -> bytes:
    return f"# Lease\n\n{text}\n".encode()


class Consumer:
    """The documented handler and its index, fed from a queue of the consumer's own."""

    def __init__(self, stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.stack = stack
        monkeypatch.setenv("RESULTS_BUCKET", stack.outputs["ArtifactBucketName"])
        self.app: dict[str, Any] = {"__name__": "consumer_handler"}
        # The page's code, as printed: the index, then the handler beside it.
        exec(documented("index"), self.app)
        exec(documented("handler"), self.app)
        bus = stack.outputs["EventBusName"]
        sqs, events = stack.client("sqs"), stack.client("events")
        self.queue = subscribe(sqs, events, bus, "consumer-index", EVERYTHING)
        self.rule_arn = events.describe_rule(Name="consumer-index", EventBusName=bus)["Arn"]
        # A queue without the policy: on AWS (and the strict stack) it receives nothing.
        self.unpolicied = sqs.create_queue(QueueName="consumer-no-policy")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self.unpolicied, AttributeNames=["QueueArn"])
        events.put_rule(Name="consumer-no-policy", EventBusName=bus, EventPattern=EVERYTHING)
        events.put_targets(
            Rule="consumer-no-policy",
            EventBusName=bus,
            Targets=[{"Id": "q", "Arn": arn["Attributes"]["QueueArn"]}],
        )
        self.handled: list[dict[str, Any]] = []

    @property
    def index(self) -> Any:
        return self.app["index"]

    def receive(self, url: str | None = None) -> list[dict[str, Any]]:
        """Every event delivered so far, once the notifier has caught up."""
        assert wait_until(self.stack.notifications_delivered, TIMEOUT_S)
        sqs, got = self.stack.client("sqs"), []
        while batch := sqs.receive_message(QueueUrl=url or self.queue, MaxNumberOfMessages=10).get(
            "Messages"
        ):
            for message in batch:
                got.append(json.loads(message["Body"]))
                sqs.delete_message(
                    QueueUrl=url or self.queue, ReceiptHandle=message["ReceiptHandle"]
                )
        return got

    def handle(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self.app["handler"](event, None)
            self.handled.append(event)

    def deliver(self, *, reverse: bool = False) -> list[CompletionEvent]:
        events = self.receive()
        self.handle(list(reversed(events)) if reverse else events)
        return [CompletionEvent.model_validate(e) for e in events]


@pytest.fixture
def consumer(stack: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Consumer]:
    yield Consumer(stack, monkeypatch)


def consumer_role(stack: Any) -> callers.Caller:
    """A role of the consumer's own with ConsumerPolicy attached, as its application
    acts: its calls are decided by that policy on the strict stack, as on AWS."""
    iam = stack.client("iam")
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    role = iam.create_role(RoleName="consumer-app", AssumeRolePolicyDocument=json.dumps(trust))
    iam.attach_role_policy(RoleName="consumer-app", PolicyArn=stack.outputs["ConsumerPolicyArn"])
    arn = role["Role"]["Arn"]
    return callers.Caller(stack.access.assume(stack.client, "consumer-app", arn, "consumer-app"))


def reader(stack: Any) -> ResultsReader:
    return ResultsReader.s3(stack.outputs["ArtifactBucketName"], client=stack.client("s3"))


def assert_index_equals_the_manifests(stack: Any, consumer: Consumer) -> dict[str, Any]:
    read = reader(stack)
    expected = {
        manifest.document_id: (manifest.result_ref, {c.id: c.text for c in read.chunks(manifest)})
        for manifest in read.documents()
        if manifest.result_ref is not None
    }
    assert consumer.index.documents == expected
    return expected


def put(stack: Any, key: str, data: bytes) -> str:
    """Upload a version; its job's id."""
    bucket = stack.outputs["IngestBucketName"]
    version = stack.client("s3").put_object(Bucket=bucket, Key=key, Body=data)["VersionId"]
    return job_id_for(bucket, key, version)


def ended(stack: Any, job_id: str, status: JobStatus | None = None) -> Any:
    job = stack.wait_for_jobs([job_id], TIMEOUT_S)[job_id]
    assert job is not None and job.status.terminal, job
    if status is not None:
        assert job.status is status, job
    return job


def until_deleted(stack: Any, job_id: str) -> None:
    """Until the job is DELETED (its source's removal has been handled)."""
    assert wait_until(lambda: stack.jobs.get(job_id).status is JobStatus.DELETED, TIMEOUT_S)


def version_of(stack: Any, job_id: str) -> str:
    return str(stack.jobs.get(job_id).source.version_id)


def test_the_documented_handler_keeps_an_index_equal_to_the_manifests(
    stack: Any,
    consumer: Consumer,
    patch_parse: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    s3, bucket = stack.client("s3"), stack.outputs["IngestBucketName"]
    document = document_id(bucket, KEY)
    started = datetime.now(UTC) - timedelta(minutes=1)
    gate, calls = Gate(), []

    def parse(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        calls.append(event.source.version_id)
        if event.source.size == BROKEN_SIZE:
            raise CorruptInput("this version is damaged")
        if len(calls) == 1:
            gate.wait_here()  # the first version's parse finishes after the second's
        return real(event, **kw)

    patch_parse(parse)

    # Out-of-order versions: v1 is slow, v2 finishes first; the events are handled in
    # any order (here: newest first, then again oldest first).
    v1 = put(stack, KEY, body("Version one of the lease."))
    assert gate.reached()
    v2 = put(stack, KEY, body("Version two of the lease, with a new clause."))
    ended(stack, v2, JobStatus.SUCCEEDED)
    gate.open()
    ended(stack, v1, JobStatus.SUCCEEDED)
    events = consumer.deliver(reverse=True)
    by_job = {e.detail.job_id: e.detail for e in events}
    assert by_job[v2].current is True and by_job[v1].current is False
    superseded = by_job[v1].manifest
    assert superseded is not None and superseded.job_id == v2
    consumer.handle(list(reversed(consumer.handled)))  # the same events, the other way
    index = assert_index_equals_the_manifests(stack, consumer)
    assert index[document][0].job_id == v2

    # A deleted old version: its DELETED says the document still has v2's result.
    s3.delete_object(Bucket=bucket, Key=KEY, VersionId=version_of(stack, v1))
    until_deleted(stack, v1)
    [deleted] = [e.detail for e in consumer.deliver() if e.detail.job_id == v1]
    assert deleted.status is TerminalStatus.DELETED and deleted.current is False
    assert deleted.manifest is not None and deleted.manifest.result is not None
    assert deleted.manifest.result.job_id == v2
    assert assert_index_equals_the_manifests(stack, consumer)[document][0].job_id == v2

    # A noncurrent version the lifecycle expires (SourceVersionRetentionDays after v3).
    v3 = put(stack, KEY, body("Version three of the lease."))
    ended(stack, v3, JobStatus.SUCCEEDED)
    consumer.deliver()
    days = int(stack.template.sam["Parameters"]["SourceVersionRetentionDays"]["Default"])
    expired = stack.apply_lifecycle(after=timedelta(days=days + 1))
    assert [(e.key, e.action) for e in expired if e.bucket == bucket] == [(KEY, "Delete")]
    until_deleted(stack, v2)
    gone = [e.detail for e in consumer.deliver() if e.detail.job_id == v2]
    assert [(d.status, d.current) for d in gone] == [(TerminalStatus.DELETED, False)]
    assert assert_index_equals_the_manifests(stack, consumer)[document][0].job_id == v3

    # A failed newest version: the document has no current result; its chunks go.
    v4 = put(stack, KEY, b"#" * BROKEN_SIZE)
    ended(stack, v4, JobStatus.DEAD_LETTERED)
    [failed] = [e.detail for e in consumer.deliver() if e.detail.job_id == v4]
    assert failed.manifest is not None and failed.manifest.result is None
    assert document not in assert_index_equals_the_manifests(stack, consumer)

    # A good version again, then the key deleted: the document is gone everywhere.
    v5 = put(stack, KEY, body("Version five of the lease."))
    ended(stack, v5, JobStatus.SUCCEEDED)
    consumer.deliver()
    assert assert_index_equals_the_manifests(stack, consumer)[document][0].job_id == v5
    s3.delete_object(Bucket=bucket, Key=KEY)
    for job_id in (v3, v4, v5):
        until_deleted(stack, job_id)
    finals = consumer.deliver()
    assert {e.detail.job_id for e in finals} >= {v3, v4, v5}
    assert all(e.detail.manifest is None for e in finals)
    assert assert_index_equals_the_manifests(stack, consumer) == {}

    # A consumer that lags behind a delete: it handles a success whose outputs are gone.
    lagging = put(stack, LAGGING, body("A document deleted before its consumer caught up."))
    ended(stack, lagging, JobStatus.SUCCEEDED)
    held = consumer.receive()
    s3.delete_object(Bucket=bucket, Key=LAGGING)
    until_deleted(stack, lagging)
    later = consumer.receive()  # its DELETED, once the notifier has caught up
    [success] = [CompletionEvent.model_validate(e).detail for e in held]
    with pytest.raises(ResultNotFound):  # what the event names went with the document
        list(reader(stack).chunks(success))
    consumer.handle(held)  # late: the manifest says the document is gone
    consumer.handle(later)
    assert assert_index_equals_the_manifests(stack, consumer) == {}

    # A replay of the archive to this consumer's rule, started with the consumer's own
    # credentials (ConsumerPolicy, decided by the strict stack's IAM): every event again,
    # no change.
    originally = len(consumer.handled)
    events_client = stack.client("events")
    with callers.acting_as(consumer_role(stack)):
        events_client.start_replay(
            ReplayName="consumer-index-catch-up",
            EventSourceArn=stack.outputs["EventArchiveArn"],
            EventStartTime=started,
            EventEndTime=datetime.now(UTC) + timedelta(minutes=1),
            Destination={"Arn": stack.outputs["EventBusArn"], "FilterArns": [consumer.rule_arn]},
        )
        state = events_client.describe_replay(ReplayName="consumer-index-catch-up")["State"]
        assert state in ("STARTING", "RUNNING", "COMPLETED")
        listed = events_client.list_rules(EventBusName=stack.outputs["EventBusName"])["Rules"]
        assert "consumer-index" in {r["Name"] for r in listed}
    replayed = consumer.deliver()
    assert replayed and all(e.replay_name == "consumer-index-catch-up" for e in replayed)
    assert len({e.detail.event_id for e in replayed}) == len(replayed) <= originally
    assert assert_index_equals_the_manifests(stack, consumer) == {}

    # The queue without the documented policy received nothing, live or replayed; the
    # event log holds each event once (the log rule skips replays).
    assert consumer.receive(consumer.unpolicied) == []
    capsys.readouterr()
    assert main(["events", "tail", "--since", "1h", "--json"]) == 0
    tailed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    logged = [e["detail"]["event_id"] for e in tailed]
    assert len(logged) == len(set(logged))
    assert {e.detail.event_id for e in replayed} <= set(logged)


def test_non_ascii_metadata_arrives_decoded_in_the_job_the_manifest_and_the_event(
    stack: Any, consumer: Consumer
) -> None:
    """S3 returns non-ASCII metadata RFC 2047-encoded (the strict stack does too): sent
    encoded (boto3, the AWS SDKs) or raw (another client), it arrives as written."""
    s3, bucket = stack.client("s3"), stack.outputs["IngestBucketName"]
    owner, site = "Zoë Ångström", "東京 office"
    encoded = "=?UTF-8?B?" + base64.b64encode(owner.encode()).decode() + "?="
    first = s3.put_object(
        Bucket=bucket,
        Key="consumers/meta-encoded.md",
        Body=body("Sent encoded."),
        Metadata={"richdoc-owner": encoded},
        Tagging="richdoc-team=%C3%89quipe",
    )
    assert s3.head_object(Bucket=bucket, Key="consumers/meta-encoded.md")["Metadata"] == {
        "richdoc-owner": encoded
    }
    raw = stack.session.client("s3")
    raw.meta.events.unregister("before-parameter-build.s3.PutObject", validate_ascii_metadata)
    second = raw.put_object(
        Bucket=bucket,
        Key="consumers/meta-raw.md",
        Body=body("Sent raw."),
        Metadata={"richdoc-site": site},
    )
    jobs = {
        job_id_for(bucket, "consumers/meta-encoded.md", first["VersionId"]): {
            "richdoc-owner": owner,
            "richdoc-team": "Équipe",
        },
        job_id_for(bucket, "consumers/meta-raw.md", second["VersionId"]): {"richdoc-site": site},
    }
    for job_id in jobs:
        ended(stack, job_id, JobStatus.SUCCEEDED)
    events = {e.detail.job_id: e.detail for e in consumer.deliver()}
    for job_id, metadata in jobs.items():
        job = ended(stack, job_id, JobStatus.SUCCEEDED)
        assert job.metadata == metadata
        manifest = reader(stack).manifest(document_id(bucket, job.source.key))
        assert manifest.metadata == metadata
        assert events[job_id].metadata == metadata


def test_the_consumer_policy_allows_the_documented_calls_and_no_forgery(stack: Any) -> None:
    """ConsumerPolicy as deployed, decided by IAM's rules: the reader, a rule of the
    consumer's own prefix, a replay; never an event on the bus, the stack's own log rule,
    or the pipeline's working store."""
    iam = stack.client("iam")
    arn = stack.outputs["ConsumerPolicyArn"]
    version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
    found = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]["Document"]
    document = json.loads(unquote(found)) if isinstance(found, str) else dict(found)
    policy = [PolicyDocument.parse("ConsumerPolicy", document)]
    results, bus = (
        f"arn:aws:s3:::{stack.outputs['ArtifactBucketName']}",
        stack.outputs["EventBusArn"],
    )
    rules = bus.replace(":event-bus/", ":rule/")
    events = stack.client("events")
    [log_rule] = [
        r["Name"]
        for r in events.list_rules(EventBusName=stack.outputs["EventBusName"])["Rules"]
        if "EventLogRule" in r["Name"]
    ]

    def may(action: str, resource: str) -> bool:
        return evaluate(policy, AuthorizationRequest(action=action, resource=resource), {}).allowed

    assert may("s3:GetObject", f"{results}/documents/{'0' * 32}/manifest.json")
    assert may("s3:ListBucket", results)
    assert may("events:PutRule", f"{rules}/consumer-my-app")
    assert may("events:PutTargets", f"{rules}/consumer-my-app")
    # StartReplay needs the archive, the bus it replays into and the replay: all three.
    assert may("events:StartReplay", stack.outputs["EventArchiveArn"])
    assert may("events:StartReplay", bus)
    assert may("events:StartReplay", bus.split(":event-bus/")[0] + ":replay/catch-up")
    assert may("events:ListRules", "*")  # ListRules is authorized on no resource
    assert not may("events:PutEvents", bus)  # no forged DELETED for the others
    assert not may("events:PutTargets", f"{rules}/{log_rule}")  # the stack's own rule
    assert not may("events:DeleteRule", f"{rules}/{log_rule}")
    assert not may("s3:GetObject", f"{results}/jobs/{'0' * 32}/run-001/projection.json")
    assert not may("s3:GetObject", f"{results}/docling/{'0' * 64}/native.json")


def test_a_change_the_notifier_cannot_deliver_outlasts_an_outage_then_is_parked_whole(
    stack: Any, consumer: Consumer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stream's budget is the record's age, not a count: 25 failed deliveries in a row
    (the old limit was 10) end in the event; a change still failing past
    NotifierMaxRecordAgeSeconds is written whole to NotifyFailureBucket, a message names
    it on NotifyFailureQueue, and `richdoc events republish --failed` publishes it."""
    outage = [PlatformError("Lambda.ServiceException", "EventBridge is unavailable")]
    stack.script.add("NotifierFunction", *outage * 25, when=lambda e: "outage-a" in json.dumps(e))
    outlasted = put(stack, "consumers/outage-a.md", body("Outlasted an outage."))
    ended(stack, outlasted, JobStatus.SUCCEEDED)
    assert [e.detail.job_id for e in consumer.deliver()] == [outlasted]
    assert (
        stack.client("s3")
        .list_objects_v2(Bucket=stack.outputs["NotifyFailureBucketName"])
        .get("KeyCount")
        == 0
    )

    stack.script.add(
        "NotifierFunction", *outage * 10_000, when=lambda e: "outage-b" in json.dumps(e)
    )
    parked = put(stack, "consumers/outage-b.md", body("Parked after its budget."))
    ended(stack, parked, JobStatus.SUCCEEDED)
    age = int(stack.template.sam["Parameters"]["NotifierMaxRecordAgeSeconds"]["Default"])
    stack.clock.advance(timedelta(seconds=age + 60))  # the outage outlasts the budget
    sqs, queue = stack.client("sqs"), stack.outputs["NotifyFailureQueueUrl"]

    def waiting() -> int:
        attributes = sqs.get_queue_attributes(
            QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"]
        )
        return int(attributes["Attributes"]["ApproximateNumberOfMessages"])

    assert wait_until(lambda: waiting() >= 1, TIMEOUT_S)
    assert consumer.receive() == []  # its event was never published
    stack.script.clear()  # the outage is over
    capsys.readouterr()
    assert main(["events", "republish", "--failed", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert {(r["job_id"], r["outcome"]) for r in results} == {(parked, "published")}
    [event] = consumer.deliver()
    assert (event.detail.job_id, event.detail.current) == (parked, True)
    assert waiting() == 0
