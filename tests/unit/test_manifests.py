"""A document's manifest from its versions and their jobs (richdoc.manifests): the newest
version whose job finished, and that job's success or nothing; never a stale result."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.contracts import SourceObject
from richdoc.jobs import Job, JobStatus, RunEnd, job_id_for
from richdoc.manifests import ObjectVersion, ObjectVersions, current_manifest
from richdoc_client.events import TerminalStatus
from richdoc_client.identity import document_id
from tests.support.published_schemas import schema_errors
from tests.support.records import COUNTS, OUTPUTS

BUCKET, KEY, RESULTS = "ingest", "contracts/lease.pdf", "results"


def versions(*ids: str, deleted: bool = False) -> ObjectVersions:
    """Versions newest first."""
    return ObjectVersions(
        bucket=BUCKET,
        key=KEY,
        versions=[ObjectVersion(version_id=v, etag=f"etag-{v}") for v in ids],
        deleted=deleted,
    )


def job(version: str, status: JobStatus, run: int = 1, **fields: object) -> Job:
    source = SourceObject(bucket=BUCKET, key=KEY, version_id=version)
    values = {
        "job_id": job_id_for(BUCKET, KEY, version),
        "status": status,
        "run": run,
        "source": source,
        **fields,
    }
    if status is JobStatus.SUCCEEDED:
        values.setdefault("outputs", OUTPUTS)
        values.setdefault("counts", COUNTS)
    return Job.model_validate(values)


def jobs(*listed: Job) -> dict[str, Job]:
    return {j.job_id: j for j in listed}


def test_the_newest_succeeded_version_is_the_documents_result() -> None:
    manifest = current_manifest(
        versions("v2", "v1"),
        jobs(
            job("v2", JobStatus.SUCCEEDED, metadata={"richdoc-tenant": "acme"}),
            job("v1", JobStatus.SUCCEEDED),
        ),
        RESULTS,
    )
    assert manifest is not None
    assert manifest.document_id == document_id(BUCKET, KEY)
    assert (manifest.source.version_id, manifest.status) == ("v2", TerminalStatus.SUCCEEDED)
    assert manifest.result is not None and manifest.result.outputs.bucket == RESULTS
    assert manifest.metadata == {"richdoc-tenant": "acme"}
    assert schema_errors("manifest", manifest.model_dump(mode="json", by_alias=True)) == []


def test_a_newer_version_still_running_leaves_the_finished_one_in_place() -> None:
    manifest = current_manifest(
        versions("v3", "v2", "v1"),
        jobs(job("v3", JobStatus.RUNNING), job("v2", JobStatus.SUCCEEDED)),
        RESULTS,
    )
    assert manifest is not None and manifest.source.version_id == "v2"


def test_a_newer_version_that_failed_has_no_result_rather_than_a_stale_one() -> None:
    manifest = current_manifest(
        versions("v2", "v1"),
        jobs(job("v2", JobStatus.DEAD_LETTERED, run=2), job("v1", JobStatus.SUCCEEDED)),
        RESULTS,
    )
    assert manifest is not None
    assert (manifest.source.version_id, manifest.run, manifest.result) == ("v2", 2, None)
    assert manifest.status is TerminalStatus.DEAD_LETTERED


# ---- a later run of the same job (a reprocess, a redrive) -----------------------------------


def rerun(status: JobStatus, *, run: int = 2, ended: JobStatus = JobStatus.SUCCEEDED) -> Job:
    """v2's job as its run ``run`` leaves it, after run ``run - 1`` ended ``ended`` (run 1
    succeeded: the record keeps its outputs and counts, under ``run-001/``)."""
    return job(
        "v2",
        status,
        run=run,
        outputs=OUTPUTS,
        counts=COUNTS,
        last_end=RunEnd(run=run - 1, status=ended),
    )


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED])
def test_a_later_run_that_waits_or_runs_leaves_the_manifest_on_the_last_success(
    status: JobStatus,
) -> None:
    older = job("v1", JobStatus.SUCCEEDED)
    manifest = current_manifest(versions("v2", "v1"), jobs(rerun(status), older), RESULTS)
    assert manifest is not None
    assert (manifest.source.version_id, manifest.run, manifest.status) == (
        "v2",
        1,
        TerminalStatus.SUCCEEDED,
    )  # not the older version, and not gone
    assert manifest.result is not None and manifest.result.run == 1
    assert manifest.result.outputs.projection_key.endswith("/run-001/projection.json")


@pytest.mark.parametrize("status", [JobStatus.DEAD_LETTERED, JobStatus.CANCELLED])
def test_a_later_run_that_fails_keeps_the_result_that_existed(status: JobStatus) -> None:
    failed = rerun(status)
    manifest = current_manifest(versions("v2"), jobs(failed), RESULTS)
    assert manifest is not None
    assert (manifest.run, manifest.status) == (2, TerminalStatus(status.value))
    assert manifest.result is not None and manifest.result.run == 1
    assert manifest.result_ref is not None and manifest.result_ref.run == 1
    assert schema_errors("manifest", manifest.model_dump(mode="json", by_alias=True)) == []


def test_a_run_after_a_failed_rerun_shows_the_failure_and_the_success_before_it() -> None:
    waiting = rerun(JobStatus.QUEUED, run=3, ended=JobStatus.DEAD_LETTERED)
    manifest = current_manifest(versions("v2"), jobs(waiting), RESULTS)
    assert manifest is not None
    assert (manifest.run, manifest.status) == (2, TerminalStatus.DEAD_LETTERED)
    assert manifest.result is not None and manifest.result.run == 1


def test_a_record_that_does_not_say_how_its_last_run_ended_keeps_the_stored_manifest() -> None:
    """A rerun queued before records kept ``last_end``: the manifest of the same job
    stands, as it does for a record that expired."""
    finished = current_manifest(versions("v2"), jobs(job("v2", JobStatus.SUCCEEDED)), RESULTS)
    assert finished is not None
    legacy = job("v2", JobStatus.RUNNING, run=2, outputs=OUTPUTS, counts=COUNTS)
    assert current_manifest(versions("v2"), jobs(legacy), RESULTS, stored=finished) == finished
    assert current_manifest(versions("v2"), jobs(legacy), RESULTS) is None


def test_a_deleted_version_gives_way_to_the_one_before_it() -> None:
    manifest = current_manifest(
        versions("v2", "v1"),
        jobs(job("v2", JobStatus.DELETED), job("v1", JobStatus.CANCELLED)),
        RESULTS,
    )
    assert manifest is not None
    assert (manifest.source.version_id, manifest.status) == ("v1", TerminalStatus.CANCELLED)


def test_no_manifest_under_a_delete_marker_or_without_a_finished_job() -> None:
    finished = jobs(job("v1", JobStatus.SUCCEEDED))
    assert current_manifest(versions("v1", deleted=True), finished, RESULTS) is None
    assert current_manifest(versions(), {}, RESULTS) is None
    assert current_manifest(versions("v1"), jobs(job("v1", JobStatus.QUEUED)), RESULTS) is None
    assert current_manifest(versions("v1"), {}, RESULTS) is None  # no job yet


def test_an_unversioned_bucket_names_its_object_by_the_etag_as_the_starter_does() -> None:
    unversioned = ObjectVersions(
        bucket=BUCKET, key=KEY, versions=[ObjectVersion(None, "abc")], deleted=False
    )
    assert unversioned.job_ids() == [job_id_for(BUCKET, KEY, "abc")]


STATUSES = st.sampled_from(list(JobStatus)) | st.none()


@given(st.lists(STATUSES, min_size=0, max_size=6), st.booleans())
def test_the_manifest_is_the_first_finished_version_and_points_only_at_its_own_run(
    statuses: list[JobStatus | None], deleted: bool
) -> None:
    ids = [f"v{n}" for n in range(len(statuses), 0, -1)]  # newest first
    listed = jobs(*(job(v, s) for v, s in zip(ids, statuses, strict=True) if s is not None))
    manifest = current_manifest(versions(*ids, deleted=deleted), listed, RESULTS)
    finished = [
        v
        for v, s in zip(ids, statuses, strict=True)
        if s in (JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED, JobStatus.CANCELLED)
    ]
    if deleted or not finished:
        assert manifest is None
        return
    assert manifest is not None and manifest.source.version_id == finished[0]
    own = listed[manifest.job_id]
    assert (manifest.result is not None) == (own.status is JobStatus.SUCCEEDED)
