"""Deleting jobs against emulated S3 and DynamoDB: the digest references that keep a
shared parse artifact while another job uses it, the purge, the DELETED record and its
expiry, and the removal notifications the starter reads."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import boto3
import pytest

from richdoc.artifacts import ArtifactStore
from richdoc.contracts import JobCounts, JobOptions, JobOutputs
from richdoc.deletion import Deletion, RemovedObject
from richdoc.ingest import object_events
from richdoc.jobs import (
    DeletionMark,
    JobPhase,
    JobStatus,
    JobStore,
    StaleRun,
    job_id_for,
    job_key,
)
from richdoc.jobs.model import TTL_ATTRIBUTE
from richdoc.jobs.references import DigestReferences
from richdoc.taxonomy import Transient
from tests.support.records import SOURCE
from tests.support.s3_events import s3_notification

SHA = "ab" * 32
BUCKET = "artifacts"


@pytest.fixture
def world(aws: None, jobs_table: Any) -> dict[str, Any]:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    jobs = JobStore(jobs_table, retention_days=30)
    references = DigestReferences(jobs_table, retention_days=90)
    artifacts = ArtifactStore(s3, BUCKET)
    return {
        "s3": s3,
        "jobs": jobs,
        "references": references,
        "deletion": Deletion(jobs=jobs, references=references, artifacts=artifacts),
    }


def _job_with_outputs(world: dict[str, Any], job_id: str) -> None:
    """A succeeded job that parsed SHA and wrote one run's outputs."""
    jobs: JobStore = world["jobs"]
    assert jobs.create(job_id, SOURCE, JobOptions(clarify=False))
    jobs.mark_running(job_id, 1, f"arn:execution:{job_id}-r1")
    world["references"].register(SHA, job_id)
    for key in (f"docling/{SHA}/doc.json", f"jobs/{job_id}/run-001/projection.json"):
        world["s3"].put_object(Bucket=BUCKET, Key=key, Body=b"the text")
    outputs = JobOutputs(
        docling_key=f"docling/{SHA}/doc.json",
        projection_key=f"jobs/{job_id}/run-001/projection.json",
        detection_key=f"jobs/{job_id}/run-001/detection.json",
    )
    counts = JobCounts(nodes=1, edges=0, spans=1, ambiguities=0, ambiguities_suppressed=0)
    jobs.succeed(job_id, 1, outputs=outputs, counts=counts, pipeline="standard")


def _keys(world: dict[str, Any]) -> set[str]:
    listed = world["s3"].list_objects_v2(Bucket=BUCKET)
    return {obj["Key"] for obj in listed.get("Contents", [])}


def test_a_shared_parse_artifact_goes_with_its_last_user(world: dict[str, Any]) -> None:
    _job_with_outputs(world, "job-a")
    _job_with_outputs(world, "job-b")
    deletion: Deletion = world["deletion"]
    first = deletion.delete_job("job-a", by="operator", reason="test")
    assert first is not None and first.job.status is JobStatus.DELETED
    assert first.job.progress().phase is JobPhase.DELETED  # what jobs show and watch print
    assert (first.purged.run_outputs, first.purged.shared_kept) == (1, True)
    assert _keys(world) == {f"docling/{SHA}/doc.json", "jobs/job-b/run-001/projection.json"}
    assert world["references"].users(SHA) == {"job-b"}

    second = deletion.delete_job("job-b", by="source-removed", reason="test")
    assert second is not None and second.purged.parse_artifacts == 1
    assert _keys(world) == set()
    # Again: nothing changes, nothing fails.
    again = deletion.delete_job("job-b", by="operator", reason="again")
    assert again is not None and again.job.deletion == second.job.deletion
    assert (again.purged.run_outputs, again.purged.parse_artifacts) == (0, 0)
    assert deletion.delete_job("no-such-job", by="operator", reason="test") is None


def test_a_deleted_job_cannot_register_and_a_purge_in_progress_holds_registrations(
    world: dict[str, Any],
) -> None:
    references: DigestReferences = world["references"]
    _job_with_outputs(world, "job-a")
    world["deletion"].delete_job("job-a", by="operator", reason="test")
    with pytest.raises(StaleRun):
        references.register(SHA, "job-a")  # a late parse of the deleted job

    jobs: JobStore = world["jobs"]
    assert jobs.create("job-c", SOURCE, JobOptions(clarify=False))
    token = references.begin_purge(SHA)
    assert token is not None
    assert references.begin_purge(SHA) is None  # one purge at a time
    with pytest.raises(Transient):
        references.register(SHA, "job-c")  # retried once the purge is over
    references.end_purge(SHA, token)
    references.register(SHA, "job-c")
    assert references.users(SHA) == {"job-c"}
    assert references.begin_purge(SHA) is None  # a job uses them: no purge


def test_a_step_that_ends_after_the_delete_removes_what_it_wrote(world: dict[str, Any]) -> None:
    _job_with_outputs(world, "job-a")
    deletion: Deletion = world["deletion"]
    deletion.delete_job("job-a", by="source-removed", reason="test")
    # The run's detect step was still going: it writes after the purge.
    world["s3"].put_object(Bucket=BUCKET, Key="jobs/job-a/run-001/detection.json", Body=b"x")
    with pytest.raises(StaleRun):
        deletion.discard_if_deleted("job-a", "run_outputs")
    assert _keys(world) == set()


def _expires_days_after_end(jobs: JobStore, job_id: str) -> float:
    item = jobs.table.get_item(Key=job_key(job_id))["Item"]
    ended = datetime.fromisoformat(str(item["ended_at"])).timestamp()
    return (int(str(item[TTL_ATTRIBUTE])) - int(ended)) / 86400


def test_deleted_and_ended_jobs_expire_after_the_retention(world: dict[str, Any]) -> None:
    jobs: JobStore = world["jobs"]
    _job_with_outputs(world, "job-a")
    assert _expires_days_after_end(jobs, "job-a") == 30
    # A version with no job yet: a DELETED record, so that its creation starts nothing.
    mark = DeletionMark(at="2026-12-01T00:00:00.000+00:00", by="source-removed", reason="t")
    tombstone = jobs.mark_deleted("job-new", mark, source=SOURCE)
    assert tombstone is not None and tombstone.status is JobStatus.DELETED
    assert tombstone.phase is JobPhase.DELETED
    assert _expires_days_after_end(jobs, "job-new") == 30
    assert jobs.mark_deleted("job-none", mark) is None  # no source: nothing recorded


def test_removal_notifications_name_the_version_or_the_delete_marker() -> None:
    marker = object_events(
        s3_notification("a+b.pdf", "m1", event="ObjectRemoved:DeleteMarkerCreated")
    )
    [removed] = marker.removed
    assert (removed.key, removed.version_id, removed.delete_marker) == ("a b.pdf", "m1", True)
    assert marker.created == []
    [version] = object_events(s3_notification("a.pdf", "v1", event="ObjectRemoved:Delete")).removed
    assert (version.version_id, version.delete_marker) == ("v1", False)
    [expired] = object_events(
        s3_notification("a.pdf", "v2", event="LifecycleExpiration:Delete")
    ).removed
    assert expired.event == "LifecycleExpiration:Delete"
    deleted = {
        "detail-type": "Object Deleted",
        "source": "aws.s3",
        "detail": {
            "bucket": {"name": "ingest"},
            "object": {"key": "a.pdf", "version-id": "m2"},
            "deletion-type": "Delete Marker Created",
        },
    }
    [bridged] = object_events(json.dumps(deleted)).removed
    assert (bridged.version_id, bridged.delete_marker) == ("m2", True)


# ---- registering on a digest: single-item writes, never a transaction ------------------------


def _running(world: dict[str, Any], job_id: str) -> JobStore:
    """Run 1 of a new job, RUNNING (its parse registers next); the job store."""
    jobs: JobStore = world["jobs"]
    assert jobs.create(job_id, SOURCE, JobOptions(clarify=False))
    jobs.mark_running(job_id, 1, f"arn:execution:{job_id}-r1")
    return jobs


def _operations(client: Any) -> list[tuple[str, str]]:
    """Records (operation, partition key) of every DynamoDB request the client sends."""
    sent: list[tuple[str, str]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        key = params.get("Key", {}).get("pk", "")  # a Python value, or the wire's {"S": ...}
        sent.append((model.name, str(key.get("S") if isinstance(key, dict) else key)))

    client.meta.events.register("provide-client-params.dynamodb", record)
    return sent


def test_shards_of_a_planned_document_register_without_writing_the_job_item(
    world: dict[str, Any],
) -> None:
    # On DynamoDB a write to an item that a transaction holds fails: the shards of one
    # document write their job item at once (attempts, shard_done), so registering on
    # the digest must not hold the job item in a transaction.
    jobs = _running(world, "job-a")
    references: DigestReferences = world["references"]
    jobs.record_shards("job-a", 1, 3)
    references.record_on_job(SHA, "job-a")  # the plan inspected the bytes
    sent = _operations(jobs.table.meta.client)
    for _ in range(3):  # three shards
        references.register(SHA, "job-a")
    writes = [(op, pk) for op, pk in sent if op != "GetItem"]
    assert writes == [("UpdateItem", f"DOC#{SHA}")] * 3
    assert references.users(SHA) == {"job-a"}
    job = jobs.get("job-a")
    assert job is not None and job.source.sha256 == SHA


def test_a_whole_document_s_parse_records_the_digest_on_its_job_then_joins(
    world: dict[str, Any],
) -> None:
    jobs = _running(world, "job-a")
    sent = _operations(jobs.table.meta.client)
    world["references"].register(SHA, "job-a")
    assert [(op, pk) for op, pk in sent if op != "GetItem"] == [
        ("UpdateItem", "JOB#job-a"),  # the digest on the job first ...
        ("UpdateItem", f"DOC#{SHA}"),  # ... then the job in the digest's users
    ]
    job = jobs.get("job-a")
    assert job is not None and job.source.sha256 == SHA


def test_a_job_deleted_between_recording_the_digest_and_joining_is_released_by_its_next_purge(
    world: dict[str, Any],
) -> None:
    # The window the two writes leave (richdoc.jobs.references): the delete's purge runs
    # before the job joins the set, so it cannot release it; the job records the digest,
    # so the purge after the stage's work (or the reconciler's) does.
    jobs = _running(world, "job-a")
    deletion: Deletion = world["deletion"]
    client = jobs.table.meta.client
    deleted: list[Any] = []

    def delete_before_joining(params: dict[str, Any], **_: Any) -> None:
        joining = params["Key"]["pk"] == f"DOC#{SHA}" and "ADD" in params["UpdateExpression"]
        if joining and not deleted:
            deleted.append(deletion.delete_job("job-a", by="operator", reason="now"))

    client.meta.events.register_first(
        "before-parameter-build.dynamodb.UpdateItem", delete_before_joining
    )
    try:
        world["references"].register(SHA, "job-a")
    finally:
        client.meta.events.unregister(
            "before-parameter-build.dynamodb.UpdateItem", delete_before_joining
        )
    [early] = deleted
    assert early is not None and early.purged.parse_artifacts == 0
    assert world["references"].users(SHA) == {"job-a"}  # joined after the purge
    # The parse goes on and writes its artifact, then finds the job deleted.
    world["s3"].put_object(Bucket=BUCKET, Key=f"docling/{SHA}/doc.json", Body=b"late")
    with pytest.raises(StaleRun):
        deletion.discard_if_deleted("job-a", "parse_artifacts")
    assert world["references"].users(SHA) == set()
    assert _keys(world) == set()


def test_a_version_deleted_for_good_before_its_job_exists_leaves_a_tombstone(
    world: dict[str, Any],
) -> None:
    # S3 does not order its notifications: the removal of a version may be handled before
    # its creation. The version's job is then recorded DELETED, so the creation (which
    # the starter checks against the record) starts nothing.
    removed = RemovedObject(
        bucket="ingest",
        key="a.pdf",
        version_id="v7",
        event="ObjectRemoved:Delete",
        delete_marker=False,
    )
    [tombstone] = world["deletion"].source_removed(removed)
    job = world["jobs"].get(job_id_for("ingest", "a.pdf", "v7"))
    assert job is not None and job == tombstone and job.status is JobStatus.DELETED
    assert (job.source.key, job.source.version_id) == ("a.pdf", "v7")
    assert job.deletion is not None and job.deletion.by == "source-removed"
    assert job.deletion.reason == "s3:ObjectRemoved:Delete of s3://ingest/a.pdf version v7"
    # The removal delivered again changes nothing.
    [again] = world["deletion"].source_removed(removed)
    assert again.deletion == job.deletion
