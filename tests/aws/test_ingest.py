"""The starter's logic: notifications become jobs and exactly one execution per run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from richdoc.admission.backlog import Backlog
from richdoc.contracts import JobOptions, SourceObject
from richdoc.deadletter import failure_attributes
from richdoc.ingest import (
    MalformedMessage,
    Starter,
    StartOutcome,
    object_created_events,
)
from richdoc.jobs import JobStatus, JobStore, job_id_for
from richdoc.taxonomy import Failure, FailureKind
from tests.support.handlers import load_handler
from tests.support.lambda_context import FakeLambdaContext
from tests.support.s3_events import BUCKET, eventbridge_notification, s3_notification
from tests.support.sdk_faults import client_error, failing

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import MessageAttributeValueTypeDef


def test_s3_keys_are_url_decoded() -> None:
    [event] = object_created_events(s3_notification("reports/Q1+plan+%281%29.docx"))
    assert event == SourceObject(
        bucket=BUCKET, key="reports/Q1 plan (1).docx", version_id="v1", etag="0123abcd", size=5
    )


def test_eventbridge_object_created_events_are_accepted() -> None:
    [event] = object_created_events(eventbridge_notification("a+b.pdf"))
    assert (event.key, event.version_id) == ("a b.pdf", "v9")


def test_s3_test_events_are_skipped() -> None:
    body = json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": BUCKET})
    assert object_created_events(body) == []


def test_removal_events_are_ignored() -> None:
    assert object_created_events(s3_notification("a.pdf", event="ObjectRemoved:Delete")) == []


@pytest.mark.parametrize("body", ["not json", "[1, 2]", '{"hello": "world"}'])
def test_other_messages_are_malformed(body: str) -> None:
    with pytest.raises(MalformedMessage):
        object_created_events(body)


# ---- the starter against emulated S3 and DynamoDB -----------------------------------------------

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:p"


@pytest.fixture
def world(aws: None, job_store: JobStore) -> dict[str, Any]:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    backlog = Backlog(job_store.table, job_store.clock)
    starter = Starter(
        s3=s3,
        jobs=job_store,
        backlog=backlog,
        state_machine_arn=MACHINE,
        clarify_default=False,
        tenant_key="richdoc-tenant",
    )
    return {"s3": s3, "starter": starter, "jobs": job_store, "backlog": backlog}


def _upload(
    world: dict[str, Any],
    key: str,
    body: bytes = b"hello",
    metadata: dict[str, str] | None = None,
    tags: str | None = None,
) -> str:
    extra = {"Tagging": tags} if tags else {}
    response = world["s3"].put_object(
        Bucket=BUCKET, Key=key, Body=body, Metadata=metadata or {}, **extra
    )
    version: str = response["VersionId"]
    return version


def _waiting(world: dict[str, Any], tenant: str) -> list[str]:
    """The ids of the jobs waiting for ``tenant``, oldest first."""
    ids: list[str] = world["backlog"].oldest(tenant, 100).job_ids
    return ids


def test_a_notification_queues_run_1_in_its_tenants_backlog_and_starts_nothing(
    world: dict[str, Any],
) -> None:
    version = _upload(world, "acme/a.docx")
    body = s3_notification("acme/a.docx", version)
    [result] = world["starter"].handle_message(body)
    assert result.outcome is StartOutcome.QUEUED
    assert result.job_id == job_id_for(BUCKET, "acme/a.docx", version)
    job = world["jobs"].get(result.job_id)
    assert job.status is JobStatus.QUEUED and job.waiting
    assert job.tenant == "acme" and job.admitted_at is None and job.slots is None
    assert job.source == SourceObject(
        bucket=BUCKET, key="acme/a.docx", version_id=version, etag="0123abcd", size=5
    )
    assert job.options == JobOptions(clarify=False)
    assert _waiting(world, "acme") == [result.job_id]
    assert [t.tenant for t in world["backlog"].entries()] == ["acme"]
    # What the dispatcher starts the run with, and what the sweep needs to close it.
    assert job.message == body
    assert job.execution_arn == (
        MACHINE.replace(":stateMachine:", ":execution:") + f":{result.job_id}-r1"
    )


def test_a_tenant_is_named_by_metadata_or_tag_else_by_the_keys_first_segment(
    world: dict[str, Any],
) -> None:
    def tenant_of_upload(key: str, **kwargs: Any) -> str | None:
        version = _upload(world, key, **kwargs)
        [result] = world["starter"].handle_message(s3_notification(key, version))
        return world["jobs"].get(result.job_id).tenant

    assert tenant_of_upload("a/b.docx", metadata={"richdoc-tenant": "Meta"}) == "Meta"
    assert tenant_of_upload("a/c.docx", tags="richdoc-tenant=Tagged") == "Tagged"
    assert tenant_of_upload("a/d.docx") == "a"
    assert tenant_of_upload("top.docx") == "/"


def test_a_tenant_named_in_non_ascii_metadata_is_the_one_a_tag_of_that_name_names(
    world: dict[str, Any],
) -> None:
    """S3 returns a metadata value with a non-ASCII character RFC 2047-encoded (the
    strict stack's S3 does too): the tenant is the decoded name."""
    import contextlib

    from botocore.handlers import validate_ascii_metadata
    from richdoc_tools.local.moto_fixes.fidelity import s3_metadata_encoding

    s3 = world["s3"]  # botocore refuses non-ASCII metadata; other clients send it raw
    s3.meta.events.unregister("before-parameter-build.s3.PutObject", validate_ascii_metadata)
    tenants = []
    with contextlib.ExitStack() as exit_stack:
        s3_metadata_encoding.install(exit_stack)
        for key, upload in (
            ("x/meta.docx", {"metadata": {"richdoc-tenant": "Café"}}),
            ("x/tag.docx", {"tags": "richdoc-tenant=Caf%C3%A9"}),
        ):
            version = _upload(world, key, **upload)
            [result] = world["starter"].handle_message(s3_notification(key, version))
            tenants.append(world["jobs"].get(result.job_id).tenant)
    assert tenants == ["Café", "Café"]
    assert [entry.tenant for entry in world["backlog"].entries()] == ["Café"]


def test_each_tenants_uploads_wait_in_the_order_they_were_made(world: dict[str, Any]) -> None:
    versions = [_upload(world, f"acme/{n}.docx") for n in range(3)]
    times = ["2026-01-01T00:00:03Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"]
    ids = []
    for n, (version, at) in enumerate(zip(versions, times, strict=True)):
        body = json.loads(s3_notification(f"acme/{n}.docx", version))
        body["Records"][0]["eventTime"] = at  # delivered out of order
        ids.append(world["starter"].handle_message(json.dumps(body))[0].job_id)
    assert _waiting(world, "acme") == [ids[1], ids[2], ids[0]]
    jobs = [world["jobs"].get(job_id) for job_id in ids]
    assert [world["backlog"].position(job) for job in jobs] == [3, 1, 2]


def test_duplicate_deliveries_queue_one_run(world: dict[str, Any]) -> None:
    version = _upload(world, "a.docx")
    body = s3_notification("a.docx", version)
    outcomes = [world["starter"].handle_message(body)[0].outcome for _ in range(3)]
    assert outcomes == [
        StartOutcome.QUEUED,
        StartOutcome.ALREADY_QUEUED,
        StartOutcome.ALREADY_QUEUED,
    ]
    assert len(_waiting(world, "/")) == 1


def test_a_missing_version_id_is_taken_from_the_object(world: dict[str, Any]) -> None:
    version = _upload(world, "a.docx")
    [result] = world["starter"].handle_message(s3_notification("a.docx", version=None))
    assert result.job_id == job_id_for(BUCKET, "a.docx", version)


def test_a_new_upload_under_the_same_key_is_a_new_job(world: dict[str, Any]) -> None:
    first = _upload(world, "a.docx", b"one")
    second = _upload(world, "a.docx", b"two")
    a = world["starter"].handle_message(s3_notification("a.docx", first))[0]
    b = world["starter"].handle_message(s3_notification("a.docx", second))[0]
    assert a.job_id != b.job_id
    assert len(_waiting(world, "/")) == 2


def test_object_metadata_overrides_the_clarify_default(world: dict[str, Any]) -> None:
    version = _upload(world, "a.docx", metadata={"richdoc-clarify": "true"})
    [result] = world["starter"].handle_message(s3_notification("a.docx", version))
    assert world["jobs"].get(result.job_id).options == JobOptions(clarify=True)


def test_a_version_deleted_before_its_notification_leaves_a_deleted_record_and_no_run(
    world: dict[str, Any],
) -> None:
    version = _upload(world, "gone.docx")
    world["s3"].delete_object(Bucket=BUCKET, Key="gone.docx", VersionId=version)
    [result] = world["starter"].handle_message(s3_notification("gone.docx", version))
    assert result.outcome is StartOutcome.DELETED
    assert _waiting(world, "/") == []
    job = world["jobs"].get(result.job_id)
    assert job is not None and job.status is JobStatus.DELETED and job.deletion is not None
    assert job.deletion.by == "source-removed"
    assert "deleted before its creation notification" in job.deletion.reason
    assert (job.source.key, job.source.version_id) == ("gone.docx", version)
    # Delivered again (or its removal notification after it): nothing starts.
    [again] = world["starter"].handle_message(s3_notification("gone.docx", version))
    assert again.outcome is StartOutcome.DUPLICATE_IGNORED and _waiting(world, "/") == []


def test_an_unreadable_object_still_gets_a_run_whose_parse_says_why(
    world: dict[str, Any],
) -> None:
    # A 403 is the pipeline's own permissions (or a key policy): the plan and parse steps
    # meet the same refusal and record it as SourceAccessDenied.
    denied = client_error("403", "HeadObject", 403)
    with failing(world["s3"], "HeadObject", denied):
        [result] = world["starter"].handle_message(s3_notification("secret.docx", "v1"))
    assert result.outcome is StartOutcome.QUEUED


def _dead_letter(
    world: dict[str, Any], job_id: str, *, marked: bool = True
) -> dict[str, MessageAttributeValueTypeDef]:
    """Fail run 1; ``marked=False`` stops before the DEAD_LETTERED mark (job FAILED)."""
    jobs: JobStore = world["jobs"]
    jobs.mark_running(job_id, 1, "arn:execution")
    failure = Failure(FailureKind.TRANSIENT, "S3 SlowDown", error="Transient")
    jobs.record_failure(job_id, 1, failure)
    if marked:
        jobs.mark_dead_lettered(job_id, 1, "message-1", sent_by="state-machine")
    return failure_attributes(job_id, 1, failure)


def test_a_redriven_message_queues_the_next_run(world: dict[str, Any]) -> None:
    version = _upload(world, "acme/a.docx")
    body = s3_notification("acme/a.docx", version)
    [first] = world["starter"].handle_message(body)
    attributes = {k: v["StringValue"] for k, v in _dead_letter(world, first.job_id).items()}
    assert _waiting(world, "acme") == []  # running, then dead-lettered: not waiting
    [again] = world["starter"].handle_message(body, attributes)
    assert (again.run, again.outcome) == (2, StartOutcome.QUEUED)
    job = world["jobs"].get(first.job_id)
    assert (job.run, job.status, job.tenant) == (2, JobStatus.QUEUED, "acme")
    assert _waiting(world, "acme") == [first.job_id]
    # The same dead-letter message redriven twice does not queue run 3.
    [twice] = world["starter"].handle_message(body, attributes)
    assert twice.outcome is StartOutcome.DUPLICATE_IGNORED
    assert world["jobs"].get(first.job_id).run == 2


def test_a_jobs_tenant_is_in_the_lane_before_the_job_waits(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's write wakes the dispatcher (its stream record), which finds waiting jobs
    through the lane: a new tenant's backlog marked only after its first job would not be
    found until the next trigger. Seen at each queuing write: the first run's and a
    redrive's, after the backlog left the lane."""
    jobs: JobStore = world["jobs"]
    backlog: Backlog = world["backlog"]
    lane_at_write: list[tuple[str, list[str]]] = []

    def seeing_the_lane(write: Any) -> Any:
        def write_seeing_the_lane(*args: Any, **kwargs: Any) -> Any:
            lane_at_write.append((write.__name__, [t.tenant for t in backlog.entries()]))
            return write(*args, **kwargs)

        return write_seeing_the_lane

    monkeypatch.setattr(jobs, "create", seeing_the_lane(jobs.create))
    monkeypatch.setattr(jobs, "start_next_run", seeing_the_lane(jobs.start_next_run))
    version = _upload(world, "newcomer/a.docx")
    body = s3_notification("newcomer/a.docx", version)
    [first] = world["starter"].handle_message(body)
    attributes = {k: v["StringValue"] for k, v in _dead_letter(world, first.job_id).items()}
    [tenant] = backlog.entries()
    assert backlog.clear(tenant, datetime.now(UTC) + timedelta(days=1))  # its backlog emptied
    [again] = world["starter"].handle_message(body, attributes)
    assert (first.outcome, again.outcome, again.run) == (StartOutcome.QUEUED,) * 2 + (2,)
    # The redrive's delivery tries the first run's create again (it finds the job).
    assert lane_at_write == [
        ("create", ["newcomer"]),
        ("create", ["newcomer"]),
        ("start_next_run", ["newcomer"]),
    ]


def test_a_plain_duplicate_of_a_dead_lettered_job_does_not_restart_it(
    world: dict[str, Any],
) -> None:
    version = _upload(world, "a.docx")
    body = s3_notification("a.docx", version)
    [first] = world["starter"].handle_message(body)
    _dead_letter(world, first.job_id)
    [duplicate] = world["starter"].handle_message(body)
    assert duplicate.outcome is StartOutcome.DUPLICATE_IGNORED
    assert world["jobs"].get(first.job_id).status is JobStatus.DEAD_LETTERED


def test_a_failed_run_restarts_only_from_its_redriven_message(world: dict[str, Any]) -> None:
    # FAILED: the failure is recorded, the mark after the dead-letter send has not happened.
    version = _upload(world, "a.docx")
    body = s3_notification("a.docx", version)
    [first] = world["starter"].handle_message(body)
    attributes = {
        k: v["StringValue"] for k, v in _dead_letter(world, first.job_id, marked=False).items()
    }
    [duplicate] = world["starter"].handle_message(body)
    assert duplicate.outcome is StartOutcome.DUPLICATE_IGNORED
    assert world["jobs"].get(first.job_id).status is JobStatus.FAILED
    # The redriven message exists, so the send was durable: run 2 is queued.
    [again] = world["starter"].handle_message(body, attributes)
    assert (again.run, again.outcome) == (2, StartOutcome.QUEUED)
    job = world["jobs"].get(first.job_id)
    assert (job.run, job.status) == (2, JobStatus.QUEUED)
    assert job.execution_arn is not None and job.execution_arn.endswith(f"{first.job_id}-r2")


# ---- the starter's failed-record metric (StarterErrorsAlarm) ------------------------------------


def _starter_app(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("JOBS_TABLE", world["jobs"].table.name)
    monkeypatch.setenv("STATE_MACHINE_ARN", MACHINE)
    monkeypatch.setenv("ARTIFACT_BUCKET", "artifacts")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    return load_handler("starter", monkeypatch)


def _sqs_event(*bodies: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m-{i}",
                "receiptHandle": f"r-{i}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
                "awsRegion": "us-east-1",
            }
            for i, body in enumerate(bodies)
        ]
    }


def _failed_records(capsys: pytest.CaptureFixture[str], name: str) -> list[float]:
    """The values of ``name`` in the EMF lines the handler printed (namespace richdoc, no
    dimensions)."""
    values: list[float] = []
    for line in capsys.readouterr().out.splitlines():
        if not line.startswith("{"):
            continue
        emf = json.loads(line)
        if name in emf:
            [directive] = emf["_aws"]["CloudWatchMetrics"]
            assert directive["Namespace"] == "richdoc"
            assert directive["Dimensions"] == [[]]  # what StarterErrorsAlarm matches
            values.extend(emf[name])
    return values


STARTER_CONTEXT = FakeLambdaContext(function_name="richdoc-starter", memory_limit_in_mb=256)


def test_every_failed_record_is_a_data_point_of_the_starters_alarm_metric(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _starter_app(world, monkeypatch)
    version = _upload(world, "a.docx")
    capsys.readouterr()
    # One record fails, two succeed: a successful invocation (no Errors data point).
    event = _sqs_event("not json", s3_notification("a.docx", version), _test_event())
    response = app.handler(event, STARTER_CONTEXT)
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-0"}]}
    assert _failed_records(capsys, app.FAILED_RECORDS_METRIC) == [1.0]
    # Every record fails: the invocation fails too, and each record still counts.
    with pytest.raises(BatchProcessingError):
        app.handler(_sqs_event("not json", "[1, 2]"), STARTER_CONTEXT)
    assert _failed_records(capsys, app.FAILED_RECORDS_METRIC) == [1.0, 1.0]


def _test_event() -> str:
    return json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": BUCKET})
