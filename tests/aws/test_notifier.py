"""The notifier against the AWS emulation: manifests kept in the results bucket from the
ingest bucket's versions and the job records (richdoc.manifests), each success's outputs
kept with its document (richdoc.document_results), completion events put on a bus saying
how they relate to the manifest (richdoc.notifier), and the handler fed the jobs table's
own stream records."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from itertools import count
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from richdoc_tools.local.clients import CLIENT_CONFIG
from richdoc_tools.local.patches import dynamodb_streams, events_delivery

from richdoc import artifacts
from richdoc.contracts import JobOptions, JobOutputs, SourceObject
from richdoc.document_results import job_results_prefix, kept_keys
from richdoc.jobs import ENDED_STATUSES, Job, JobStatus, JobStore, job_id_for
from richdoc.manifests import ManifestKeeper
from richdoc.notifier import Notifier
from richdoc.taxonomy import Failure, FailureKind, Transient
from richdoc_client.events import CompletionDetail, CompletionEvent, TerminalStatus
from richdoc_client.identity import document_id
from richdoc_client.manifest import Manifest, manifest_key
from richdoc_client.reader import ResultsReader
from richdoc_client.tables import table_csv_name
from tests.support.handlers import load_handler
from tests.support.lambda_context import FakeLambdaContext
from tests.support.records import COUNTS, OUTPUTS

REGION = "us-east-1"
INGEST, RESULTS, KEY = "ingest", "results", "contracts/lease.pdf"


@pytest.fixture
def world(jobs_table: Any) -> Iterator[dict[str, Any]]:
    with contextlib.ExitStack() as exit_stack:
        events_delivery.install(exit_stack)  # targets get the event whole, as on AWS
        yield _world(jobs_table)


def _world(jobs_table: Any) -> dict[str, Any]:
    s3 = boto3.client("s3", region_name=REGION)
    for bucket in (INGEST, RESULTS):
        s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=INGEST, VersioningConfiguration={"Status": "Enabled"})
    events = boto3.client("events", region_name=REGION)
    events.create_event_bus(Name="richdoc-test")
    sqs = boto3.client("sqs", region_name=REGION)
    queue = sqs.create_queue(QueueName="consumer")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    events.put_rule(
        Name="mine", EventBusName="richdoc-test", EventPattern='{"source": ["richdoc"]}'
    )
    events.put_targets(
        Rule="mine",
        EventBusName="richdoc-test",
        Targets=[{"Id": "q", "Arn": queue_arn["Attributes"]["QueueArn"]}],
    )
    store = JobStore(jobs_table)
    keeper = ManifestKeeper(s3=s3, jobs=store, results_bucket=RESULTS)
    notifier = Notifier(
        events=events, bus_name="richdoc-test", manifests=keeper, results_bucket=RESULTS
    )
    return {
        "s3": s3,
        "sqs": sqs,
        "queue": queue,
        "jobs": store,
        "keeper": keeper,
        "notifier": notifier,
    }


def upload(world: dict[str, Any], body: bytes = b"%PDF") -> str:
    return str(world["s3"].put_object(Bucket=INGEST, Key=KEY, Body=body)["VersionId"])


def record_job(world: dict[str, Any], version: str, status: JobStatus, run: int = 1) -> Job:
    """A job item as the pipeline leaves it (written whole: its writes are tested elsewhere)."""
    store: JobStore = world["jobs"]
    job_id = job_id_for(INGEST, KEY, version)
    fields: dict[str, Any] = {
        "job_id": job_id,
        "status": status,
        "run": run,
        "source": SourceObject(bucket=INGEST, key=KEY, version_id=version),
        "options": JobOptions(),
        "metadata": {"richdoc-tenant": "acme"},
    }
    if status is JobStatus.SUCCEEDED:
        fields |= {"outputs": OUTPUTS, "counts": COUNTS}
        for output in (OUTPUTS.docling_key, OUTPUTS.projection_key, OUTPUTS.detection_key):
            world["s3"].put_object(Bucket=RESULTS, Key=output, Body=f"{version} {output}")
        world["s3"].put_object(Bucket=RESULTS, Key=str(OUTPUTS.chunks_key), Body=b"")
        world["s3"].put_object(Bucket=RESULTS, Key=str(OUTPUTS.markdown_key), Body=b"# One\n")
        table = f"{OUTPUTS.tables_prefix}{table_csv_name(1)}"  # COUNTS.tables: one
        world["s3"].put_object(Bucket=RESULTS, Key=table, Body=b"Date\r\n2024-03-01\r\n")
    if status is JobStatus.DEAD_LETTERED:
        fields["failure"] = Failure(kind=FailureKind.CORRUPT_INPUT, reason="damaged")
    job = Job.model_validate(fields)
    store.table.put_item(Item={"pk": f"JOB#{job_id}", "sk": "JOB", **job.to_item()})
    return job


def stored_manifest(world: dict[str, Any]) -> Manifest | None:
    key = manifest_key(document_id(INGEST, KEY))
    try:
        body = world["s3"].get_object(Bucket=RESULTS, Key=key)["Body"].read()
    except world["s3"].exceptions.NoSuchKey:
        return None
    return Manifest.model_validate_json(body)


def received(world: dict[str, Any]) -> list[CompletionEvent]:
    messages = world["sqs"].receive_message(QueueUrl=world["queue"], MaxNumberOfMessages=10)
    return [
        CompletionEvent.model_validate(json.loads(m["Body"])) for m in messages.get("Messages", [])
    ]


def test_a_finished_version_gets_a_manifest_and_one_event(world: dict[str, Any]) -> None:
    version = upload(world)
    running = record_job(world, version, JobStatus.RUNNING)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    detail = world["notifier"].job_changed(running, done)
    assert detail is not None and detail.status is TerminalStatus.SUCCEEDED
    manifest = stored_manifest(world)
    assert manifest is not None and manifest.source.version_id == version
    assert manifest.result is not None and manifest.result.outputs == kept_keys(done, RESULTS)
    [event] = received(world)
    assert event.detail == detail
    assert event.detail.metadata == {"richdoc-tenant": "acme"}
    assert event.detail.outputs == manifest.result.outputs
    assert event.detail.current is True and event.detail.manifest is not None
    assert event.detail.manifest.result == manifest.result_ref


def test_a_write_that_ends_no_run_publishes_nothing(world: dict[str, Any]) -> None:
    version = upload(world)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    assert world["notifier"].job_changed(done, done) is None
    assert world["notifier"].job_changed(None, None) is None
    assert received(world) == []
    assert stored_manifest(world) is None  # nothing refreshed either


def test_the_manifest_follows_new_versions_and_goes_with_a_delete_marker(
    world: dict[str, Any],
) -> None:
    keeper: ManifestKeeper = world["keeper"]
    first = upload(world, b"one")
    record_job(world, first, JobStatus.SUCCEEDED)
    keeper.refresh(INGEST, KEY)
    second = upload(world, b"two")
    record_job(world, second, JobStatus.DEAD_LETTERED)
    manifest = keeper.refresh(INGEST, KEY)
    assert manifest is not None and manifest.source.version_id == second
    assert manifest.result is None  # the newer version failed: no stale result
    assert stored_manifest(world) == manifest
    world["s3"].delete_object(Bucket=INGEST, Key=KEY)  # a delete marker hides every version
    assert keeper.refresh(INGEST, KEY) is None
    assert stored_manifest(world) is None


def test_a_refresh_that_an_other_version_overtakes_writes_again_until_it_holds(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two versions' jobs end together: the refresh that computed first writes last, then
    sees the newer truth on its check and writes that."""
    keeper: ManifestKeeper = world["keeper"]
    first = upload(world, b"one")
    second = upload(world, b"two")
    record_job(world, first, JobStatus.SUCCEEDED)
    record_job(world, second, JobStatus.RUNNING)
    real = keeper.compute
    computed: list[Manifest | None] = []

    def compute(bucket: str, key: str, stored: Manifest | None = None) -> Any:
        result = real(bucket, key, stored)
        computed.append(result[0])
        if len(computed) == 1:  # the other job ends right after this snapshot
            record_job(world, second, JobStatus.SUCCEEDED)
        return result

    monkeypatch.setattr(keeper, "compute", compute)
    manifest = keeper.refresh(INGEST, KEY)
    assert [m.source.version_id if m else None for m in computed] == [first, second, second]
    assert manifest is not None and stored_manifest(world) == manifest
    assert manifest.source.version_id == second


def test_a_refresh_that_never_settles_is_transient(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    keeper: ManifestKeeper = world["keeper"]
    version = upload(world)
    statuses = iter([JobStatus.SUCCEEDED, JobStatus.CANCELLED] * 10)
    real = keeper.compute

    def compute(bucket: str, key: str, stored: Manifest | None = None) -> Any:
        record_job(world, version, next(statuses))
        return real(bucket, key, stored)

    monkeypatch.setattr(keeper, "compute", compute)
    with pytest.raises(Transient, match="changed"):
        keeper.refresh(INGEST, KEY)


def test_an_event_the_bus_refuses_is_transient(world: dict[str, Any]) -> None:
    """Retried by the stream's event source mapping, never lost."""
    version = upload(world)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    notifier: Notifier = world["notifier"]
    with Stubber(notifier.events) as stubber:
        stubber.add_response(
            "put_events",
            {
                "FailedEntryCount": 1,
                "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"}],
            },
        )
        with pytest.raises(Transient, match="InternalFailure"):
            notifier.job_changed(None, done)


def test_a_refresh_reads_the_newest_versions_job_first_and_stops_there(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key overwritten many times: a refresh reads one job, not one per version."""
    keeper: ManifestKeeper = world["keeper"]
    versions = [upload(world, f"v{n}".encode()) for n in range(30)]
    for version in versions:
        record_job(world, version, JobStatus.DEAD_LETTERED)
    record_job(world, versions[-1], JobStatus.SUCCEEDED)
    asked: list[list[str]] = []
    real = keeper.jobs.get_many

    def get_many(job_ids: Iterable[str]) -> dict[str, Job]:
        asked.append(list(job_ids))
        return real(asked[-1])

    monkeypatch.setattr(keeper.jobs, "get_many", get_many)
    manifest = keeper.refresh(INGEST, KEY)
    assert manifest is not None and manifest.source.version_id == versions[-1]
    assert [len(ids) for ids in asked] == [1, 1]  # the refresh, then its check
    asked.clear()
    newest = upload(world, b"newest")
    record_job(world, newest, JobStatus.RUNNING)  # its first run: passed over while open
    keeper.refresh(INGEST, KEY)
    assert [len(ids) for ids in asked][:2] == [1, 4]  # newest first, in growing batches


def test_a_manifest_outlives_its_job_record_and_the_working_outputs(
    world: dict[str, Any],
) -> None:
    """What the manifest names is kept with it: the job record's time to live and the
    results bucket's lifecycle (jobs/, docling/) take nothing it needs."""
    keeper: ManifestKeeper = world["keeper"]
    version = upload(world)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    world["notifier"].job_changed(None, done)
    manifest = stored_manifest(world)
    assert manifest is not None
    world["jobs"].table.delete_item(Key={"pk": f"JOB#{done.job_id}", "sk": "JOB"})  # TTL
    table = f"{OUTPUTS.tables_prefix}{table_csv_name(1)}"
    working = (OUTPUTS.docling_key, OUTPUTS.projection_key, OUTPUTS.detection_key)
    for key in (*working, OUTPUTS.markdown_key, table):
        world["s3"].delete_object(Bucket=RESULTS, Key=str(key))  # the lifecycle's expiry
    assert keeper.refresh(INGEST, KEY) == manifest  # a later refresh keeps it
    reader = ResultsReader.s3(RESULTS, client=world["s3"])
    assert reader.docling(manifest) == f"{version} {OUTPUTS.docling_key}".encode()
    assert reader.markdown(manifest) == "# One\n"
    [kept_table] = reader.tables(manifest)
    assert reader.table(kept_table).records() == [{"Date": "2024-03-01"}]


def test_a_deleted_versions_kept_outputs_go_once_the_manifest_no_longer_names_them(
    world: dict[str, Any],
) -> None:
    first = upload(world, b"one")
    old = record_job(world, first, JobStatus.SUCCEEDED)
    world["notifier"].job_changed(None, old)
    second = upload(world, b"two")
    new = record_job(world, second, JobStatus.SUCCEEDED)
    world["notifier"].job_changed(None, new)
    kept_old = kept_keys(old, RESULTS)
    assert kept_old is not None
    world["s3"].head_object(Bucket=RESULTS, Key=kept_old.projection_key)
    world["s3"].delete_object(Bucket=INGEST, Key=KEY, VersionId=first)
    gone = old.model_copy(update={"status": JobStatus.DELETED, "outputs": None, "counts": None})
    world["jobs"].table.put_item(Item={"pk": f"JOB#{old.job_id}", "sk": "JOB", **gone.to_item()})
    detail = world["notifier"].job_changed(old, gone)
    assert detail is not None and detail.status is TerminalStatus.DELETED
    # The document still has the newer version's result: the event says so.
    assert detail.current is False and detail.manifest is not None
    assert detail.manifest.result is not None and detail.manifest.result.job_id == new.job_id
    listed = world["s3"].list_objects_v2(Bucket=RESULTS, Prefix=f"documents/{old.job_id}")
    prefix = kept_old.projection_key.rsplit("/", 2)[0] + "/"
    assert world["s3"].list_objects_v2(Bucket=RESULTS, Prefix=prefix).get("KeyCount") == 0
    assert listed.get("KeyCount") == 0
    manifest = stored_manifest(world)
    assert manifest is not None and manifest.job_id == new.job_id


def test_a_success_handled_after_its_job_was_deleted_keeps_nothing_and_still_tells(
    world: dict[str, Any],
) -> None:
    """The source deleted at once: the deletion took the run's working outputs before the
    notifier read the success. Nothing is left to keep, and that is no failure to retry."""
    version = upload(world)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    world["s3"].delete_object(Bucket=INGEST, Key=KEY, VersionId=version)
    for key in (OUTPUTS.docling_key, OUTPUTS.projection_key, OUTPUTS.detection_key):
        world["s3"].delete_object(Bucket=RESULTS, Key=key)
    gone = done.model_copy(update={"status": JobStatus.DELETED, "outputs": None, "counts": None})
    world["jobs"].table.put_item(Item={"pk": f"JOB#{done.job_id}", "sk": "JOB", **gone.to_item()})
    detail = world["notifier"].job_changed(None, done)
    assert detail is not None and detail.status is TerminalStatus.SUCCEEDED
    assert detail.current is False
    kept = kept_keys(done, RESULTS)
    assert kept is not None
    prefix = kept.projection_key.rsplit("/", 2)[0] + "/"
    assert world["s3"].list_objects_v2(Bucket=RESULTS, Prefix=prefix).get("KeyCount") == 0
    assert [e.detail.status for e in received(world)] == [TerminalStatus.SUCCEEDED]


def test_a_working_copy_expired_under_a_live_job_is_transient(world: dict[str, Any]) -> None:
    version = upload(world)
    done = record_job(world, version, JobStatus.SUCCEEDED)
    world["s3"].delete_object(Bucket=RESULTS, Key=OUTPUTS.projection_key)
    with pytest.raises(Transient):
        world["notifier"].job_changed(None, done)


# ---- the handler, fed the table's own stream ----------------------------------------------


@contextlib.contextmanager
def stream_kept() -> Iterator[None]:
    with contextlib.ExitStack() as exit_stack:
        dynamodb_streams.install(exit_stack)
        yield


def stream_records(table_name: str) -> list[dict[str, Any]]:
    """Every record of the table's stream, as Lambda hands them to a function."""
    ddb = boto3.client("dynamodb", region_name=REGION)
    arn = ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", region_name=REGION, config=CLIENT_CONFIG)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    records = streams.get_records(ShardIterator=iterator)["Records"]
    return [json.loads(json.dumps({**r, "eventSourceARN": arn}, default=str)) for r in records]


def handle(records: Iterable[dict[str, Any]], world: dict[str, Any], monkeypatch: Any) -> Any:
    monkeypatch.setenv("ARTIFACT_BUCKET", RESULTS)
    monkeypatch.setenv("EVENT_BUS_NAME", "richdoc-test")
    monkeypatch.setenv("JOBS_TABLE", world["jobs"].table.name)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    app = load_handler("notifier", monkeypatch)
    return app.handler({"Records": list(records)}, FakeLambdaContext(function_name="notifier"))


def test_the_handler_turns_the_streams_terminal_writes_into_one_event_each(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with stream_kept():
        store: JobStore = world["jobs"]
        version = upload(world)
        job_id = job_id_for(INGEST, KEY, version)
        store.create(job_id, SourceObject(bucket=INGEST, key=KEY, version_id=version), JobOptions())
        store.mark_running(job_id, 1, "arn:execution")
        store.record_failure(job_id, 1, Failure(kind=FailureKind.CORRUPT_INPUT, reason="bad"))
        store.mark_dead_lettered(job_id, 1, message_id="m-1", sent_by="state-machine")
        store.record_discard(job_id, 1, "m-1", "seen it")  # a later write, same status
        records = stream_records(store.table.name)
        answer = handle(records, world, monkeypatch)
    assert answer == {"batchItemFailures": []}
    [event] = received(world)
    assert (event.detail.status, event.detail.run) == (TerminalStatus.DEAD_LETTERED, 1)
    assert event.detail.failure is not None and event.detail.failure.kind == "corrupt_input"
    manifest = stored_manifest(world)
    assert manifest is not None and manifest.status is TerminalStatus.DEAD_LETTERED


# ---- later runs of one job (a reprocess, a redrive) ----------------------------------------


def _working_outputs(world: dict[str, Any], job_id: str, run: int) -> JobOutputs:
    """Run ``run``'s outputs, written where the project and detect steps write them."""
    outputs = JobOutputs(
        docling_key=f"docling/{job_id}/contract.json",
        projection_key=artifacts.projection_key(job_id, run),
        detection_key=artifacts.detection_key(job_id, run),
        chunks_key=artifacts.chunks_key(job_id, run),
        markdown_key=artifacts.markdown_key(job_id, run),
        tables_prefix=artifacts.tables_prefix(job_id, run),
    )
    for key in outputs.files().values():
        world["s3"].put_object(Bucket=RESULTS, Key=key, Body=f"run {run}".encode())
    table = f"{outputs.tables_prefix}{table_csv_name(1)}"
    world["s3"].put_object(Bucket=RESULTS, Key=table, Body=f"Run\r\n{run}\r\n".encode())
    return outputs


def _kept_runs(world: dict[str, Any], job: Job) -> set[str]:
    """The run folders kept with the job's document (``run-NNN``)."""
    prefix = job_results_prefix(job)
    listed = world["s3"].list_objects_v2(Bucket=RESULTS, Prefix=prefix, Delimiter="/")
    return {p["Prefix"].removeprefix(prefix).rstrip("/") for p in listed.get("CommonPrefixes", [])}


class OneJob:
    """A job of one version of ``key`` driven through the store's own transitions, each
    terminal one handed to the notifier as the jobs table's stream would hand it."""

    def __init__(self, world: dict[str, Any], key: str) -> None:
        self.world, self.store, self.key = world, world["jobs"], key
        version = world["s3"].put_object(Bucket=INGEST, Key=key, Body=key.encode())["VersionId"]
        self.job_id = job_id_for(INGEST, key, version)
        source = SourceObject(bucket=INGEST, key=key, version_id=version)
        assert self.store.create(self.job_id, source, JobOptions(), message="{}", tenant="t")
        self.run = 1
        self.store.mark_running(self.job_id, 1, "arn:execution")

    @property
    def job(self) -> Job:
        found = self.store.get(self.job_id)
        assert found is not None
        return found

    def end(self, status: JobStatus) -> CompletionDetail:
        before = self.job
        if status is JobStatus.SUCCEEDED:
            outputs = _working_outputs(self.world, self.job_id, self.run)
            self.store.succeed(self.job_id, self.run, outputs=outputs, counts=COUNTS, pipeline=None)
        elif status is JobStatus.DEAD_LETTERED:
            failure = Failure(kind=FailureKind.CORRUPT_INPUT, reason="damaged")
            self.store.record_failure(self.job_id, self.run, failure)
            self.store.mark_dead_lettered(self.job_id, self.run, f"m-{self.run}", sent_by="sweep")
        else:
            self.store.cancel(self.job_id, self.run, by="test")
        detail = self.world["notifier"].job_changed(before, self.job)
        assert detail is not None
        return detail

    def again(self) -> None:
        """A reprocess: the next run waits, then runs."""
        self.store.start_next_run(self.job_id, self.run, allowed=ENDED_STATUSES)
        self.run += 1

    def manifest(self) -> Manifest | None:
        key = manifest_key(document_id(INGEST, self.key))
        try:
            body = self.world["s3"].get_object(Bucket=RESULTS, Key=key)["Body"].read()
        except self.world["s3"].exceptions.NoSuchKey:
            return None
        return Manifest.model_validate_json(body)


def test_a_failed_rerun_keeps_the_documents_result_and_its_event_says_so(
    world: dict[str, Any],
) -> None:
    one = OneJob(world, KEY)
    first = one.end(JobStatus.SUCCEEDED)
    assert first.current is True
    one.again()
    # While run 2 waits, and while it runs, a refresh (another version's change, a
    # republish) leaves the manifest as it was.
    manifest = one.manifest()
    assert manifest is not None and world["keeper"].refresh(INGEST, KEY) == manifest
    one.store.mark_running(one.job_id, 2, "arn:execution")
    assert world["keeper"].refresh(INGEST, KEY) == manifest == one.manifest()
    failed = one.end(JobStatus.DEAD_LETTERED)
    manifest = one.manifest()
    assert manifest is not None and (manifest.run, manifest.status) == (2, "DEAD_LETTERED")
    assert manifest.result is not None and manifest.result.run == 1
    assert manifest.result.outputs == first.outputs
    # The event is not the result, and says which one is.
    assert (failed.current, failed.outputs) == (False, None)
    assert failed.manifest is not None and failed.manifest.result == manifest.result_ref
    reader = ResultsReader.s3(RESULTS, client=world["s3"])
    assert reader.markdown(manifest) == "run 1"
    assert _kept_runs(world, one.job) == {"run-001"}


def test_a_newer_success_of_a_job_removes_its_older_kept_runs(world: dict[str, Any]) -> None:
    one = OneJob(world, KEY)
    one.end(JobStatus.SUCCEEDED)
    first = one.job  # the stream's image of run 1's success
    one.again()
    one.store.mark_running(one.job_id, 2, "arn:execution")
    second = one.end(JobStatus.SUCCEEDED)
    assert second.current is True
    manifest = one.manifest()
    assert manifest is not None and manifest.result is not None and manifest.result.run == 2
    assert _kept_runs(world, one.job) == {"run-002"}
    reader = ResultsReader.s3(RESULTS, client=world["s3"])
    assert reader.markdown(manifest) == "run 2"
    # Run 1's success handled again (a stream retry, a republish): it is kept for no
    # longer than it takes to see that run 2 is the job's result.
    again = world["notifier"].job_changed(None, first)
    assert again is not None and again.current is False
    assert _kept_runs(world, one.job) == {"run-002"}
    assert one.manifest() == manifest


ENDINGS = st.sampled_from([JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED, JobStatus.CANCELLED])
documents = count()


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ENDINGS, min_size=1, max_size=5))
def test_over_any_runs_the_manifest_names_the_latest_success_and_one_copy_is_kept(
    world: dict[str, Any], endings: list[JobStatus]
) -> None:
    one = OneJob(world, f"history/{next(documents)}.pdf")
    success: int | None = None
    for n, ending in enumerate(endings, start=1):
        if n > 1:
            before = one.manifest()
            one.again()
            assert world["keeper"].refresh(INGEST, one.key) == before  # waiting
            one.store.mark_running(one.job_id, n, "arn:execution")
            assert world["keeper"].refresh(INGEST, one.key) == before  # running
        detail = one.end(ending)
        success = n if ending is JobStatus.SUCCEEDED else success
        manifest = one.manifest()
        assert manifest is not None and (manifest.run, manifest.status) == (n, ending.value)
        assert (manifest.result.run if manifest.result else None) == success
        assert detail.current is (ending is JobStatus.SUCCEEDED)
        assert detail.manifest is not None and detail.manifest.result == manifest.result_ref
        kept = {f"run-{success:03d}"} if success is not None else set()
        assert _kept_runs(world, one.job) == kept
