"""Deleting a source object end to end on the embedded stack: S3's removal notification
reaches the starter through the ingest queue, the job becomes DELETED and nothing under
the artifact bucket still holds the document's text, except a parse artifact another job
with the same bytes uses. A delete that arrives while the job runs, a parse that finishes
after it, two runs of the same bytes, and ``richdoc jobs delete`` by hand."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.cli import main
from richdoc_tools.local.runtime.loops import wait_until

from richdoc.contracts import ParseInput
from richdoc.document_results import kept_keys
from richdoc.jobs import Job, JobStatus
from richdoc.jobs.references import DigestReferences
from tests.support.stack_runs import execution, history, states_entered

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


def _document(secret: str) -> bytes:
    return (
        f"# Supply agreement\n\nThe parties agree on the clause {secret}.\n\n"
        "## Term\n\nSigned on 3 March 2025, effective 1 April 2025.\n"
    ).encode()


def _upload(stack: Any, key: str, body: bytes) -> str:
    upload = stack.upload(Path(key), key=key, body=body, metadata={"richdoc-clarify": "true"})
    job_id: str = upload.job_id
    return job_id


def _finished(stack: Any, job_id: str) -> Job:
    job = stack.wait_for_jobs([job_id], 120)[job_id]
    assert job is not None and job.status.terminal, job
    return job


def _deleted(stack: Any, job_id: str) -> Job:
    assert wait_until(lambda: stack.jobs.get(job_id).status is JobStatus.DELETED, 60)
    job: Job = stack.jobs.get(job_id)
    return job


def _holding(stack: Any, text: str) -> list[str]:
    """Every key of the artifact bucket whose object holds ``text``."""
    s3, bucket = stack.client("s3"), stack.outputs["ArtifactBucketName"]
    keys = [
        obj["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        for obj in page.get("Contents", [])
    ]
    holding = []
    for key in keys:
        try:
            body = stack.artifact(key)
        except s3.exceptions.NoSuchKey:
            continue  # deleted since the listing (a purge under way)
        if text.encode() in body:
            holding.append(key)
    return holding


def _delete_source(stack: Any, key: str) -> None:
    """What `aws s3 rm s3://BUCKET/KEY` does in a versioned bucket: a delete marker."""
    stack.client("s3").delete_object(Bucket=stack.outputs["IngestBucketName"], Key=key)


def _users(stack: Any, job: Job) -> set[str]:
    """The jobs the digest references say use the parse artifacts of ``job``'s bytes."""
    assert job.source.sha256 is not None
    return DigestReferences(stack.jobs.table).users(job.source.sha256)


def _exists(stack: Any, key: str) -> bool:
    listed = stack.client("s3").list_objects_v2(
        Bucket=stack.outputs["ArtifactBucketName"], Prefix=key
    )
    return bool(listed.get("Contents"))


def test_deleting_the_source_deletes_every_artifact_of_the_document(stack: Any) -> None:
    secret = "zebra-quartz-7731"
    job_id = _upload(stack, "deletion/contract.md", _document(secret))
    job = _finished(stack, job_id)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.outputs is not None
    assert set(_holding(stack, secret)) >= {
        job.outputs.docling_key,
        job.outputs.projection_key,
    }
    _delete_source(stack, "deletion/contract.md")
    deleted = _deleted(stack, job_id)
    assert deleted.deletion is not None and deleted.deletion.by == "source-removed"
    assert "ObjectRemoved:DeleteMarkerCreated" in deleted.deletion.reason
    assert deleted.outputs is None and deleted.counts is not None  # keys gone, counts kept
    # The job is marked DELETED first, then purged: the purge is awaited.
    assert wait_until(lambda: _holding(stack, secret) == [], 30), _holding(stack, secret)
    # The job says so, in the command line's JSON as in its table.
    assert deleted.to_dict()["status"] == "DELETED"


def test_a_second_document_with_the_same_bytes_keeps_its_shared_artifact(stack: Any) -> None:
    secret = "walrus-ember-2208"
    body = _document(secret)
    first = _finished(stack, _upload(stack, "deletion/shared-a.md", body))
    second = _finished(stack, _upload(stack, "deletion/shared-b.md", body))
    assert first.outputs is not None and second.outputs is not None
    shared = first.outputs.docling_key
    assert shared == second.outputs.docling_key  # parsed once, for both

    _delete_source(stack, "deletion/shared-a.md")
    _deleted(stack, first.job_id)
    # The purge has released the first job's use of the parse artifacts (after deleting
    # its run outputs); the second job still uses them, so they stay.
    assert wait_until(lambda: _users(stack, second) == {second.job_id}, 30)
    assert _exists(stack, shared)
    # Only the second job's artifacts hold the text (its detection may quote it or not),
    # with the copies kept for its document's consumers; the first's copies went with it.
    assert wait_until(stack.notifications_delivered, 30)
    kept = kept_keys(second, stack.outputs["ArtifactBucketName"])
    assert kept is not None and kept.chunks_key is not None
    holding = set(_holding(stack, secret))
    outputs = second.outputs
    assert {shared, outputs.projection_key, outputs.chunks_key, outputs.markdown_key} <= holding
    assert holding <= {
        shared,
        outputs.projection_key,
        outputs.chunks_key,
        outputs.markdown_key,
        outputs.detection_key,
        kept.docling_key,
        kept.projection_key,
        kept.chunks_key,
        kept.markdown_key,
        kept.detection_key,
    }
    assert not _exists(stack, f"jobs/{first.job_id}/")
    assert stack.jobs.get(second.job_id).status is JobStatus.SUCCEEDED

    _delete_source(stack, "deletion/shared-b.md")
    _deleted(stack, second.job_id)
    assert wait_until(lambda: _holding(stack, secret) == [], 30), _holding(stack, secret)


@pytest.fixture
def parse_gate(patch_parse: Callable[..., None]) -> Iterator[threading.Event]:
    """Parses wait until the gate opens (documents that take a while to convert)."""
    gate = threading.Event()

    def gated(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        gate.wait(120)
        return real(event, **kw)

    patch_parse(gated)
    yield gate
    gate.set()


def _parsing(stack: Any, job_id: str) -> bool:
    job = stack.jobs.get(job_id)
    return job is not None and (job.status, job.stage) == (JobStatus.RUNNING, "parse")


def test_a_parse_that_finishes_after_the_delete_leaves_nothing_behind(
    stack: Any, parse_gate: threading.Event
) -> None:
    secret = "heron-basalt-5150"
    job_id = _upload(stack, "deletion/running.md", _document(secret))
    assert wait_until(lambda: _parsing(stack, job_id), 60)
    _delete_source(stack, "deletion/running.md")
    _deleted(stack, job_id)
    parse_gate.set()  # the parse writes its DoclingDocument after the delete
    job = stack.jobs.get(job_id)
    described = execution(stack, job)
    # The run stops at the parse (it finds the job deleted) and never records an outcome.
    assert (described["status"], described.get("error")) == ("FAILED", "superseded")
    entered = states_entered(history(stack, described["executionArn"]))
    assert "Project" not in entered and "RecordSuccess" not in entered
    # The reconciler's last purge, once the execution has ended, takes what the parse
    # wrote after the delete's own purge (and the parse's, if it got there first).
    assert wait_until(lambda: _holding(stack, secret) == [], 30), _holding(stack, secret)
    assert stack.jobs.get(job_id).status is JobStatus.DELETED


def test_deleting_one_of_two_runs_of_the_same_bytes_keeps_the_other_whole(
    stack: Any, parse_gate: threading.Event
) -> None:
    secret = "otter-cobalt-6402"
    body = _document(secret)
    gone = _upload(stack, "deletion/twin-a.md", body)
    kept = _upload(stack, "deletion/twin-b.md", body)
    assert wait_until(lambda: _parsing(stack, gone) and _parsing(stack, kept), 60)
    _delete_source(stack, "deletion/twin-a.md")
    _deleted(stack, gone)
    parse_gate.set()
    job = _finished(stack, kept)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.outputs is not None
    execution(stack, stack.jobs.get(gone))  # the deleted run has ended
    for key in (job.outputs.docling_key, job.outputs.projection_key, job.outputs.detection_key):
        assert _exists(stack, key), key
    assert not _exists(stack, f"jobs/{gone}/")
    assert stack.jobs.get(gone).status is JobStatus.DELETED


def test_jobs_delete_by_hand_with_the_source_and_again(
    stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    secret = "lynx-argon-9034"
    job = _finished(stack, _upload(stack, "deletion/by-hand.md", _document(secret)))
    capsys.readouterr()
    assert main(["jobs", "delete", job.job_id[:12], "--with-source", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["job"]["status"] == "DELETED"
    assert answer["job"]["deletion"]["by"] == "operator"
    assert answer["deleted"]["source"] is True
    assert answer["deleted"]["run_outputs"] >= 2
    # The copies kept for the document's consumers go once the notifier has handled the
    # deletion (it may still be handling the job's success when the command returns).
    assert wait_until(stack.notifications_delivered, 30)
    assert _holding(stack, secret) == []
    versions = stack.client("s3").list_object_versions(
        Bucket=stack.outputs["IngestBucketName"], Prefix="deletion/by-hand.md"
    )
    assert [v["VersionId"] for v in versions.get("Versions", [])] == []
    # Again (and the source's own removal notification): nothing changes.
    assert main(["jobs", "delete", job.job_id]) == 0
    assert "is DELETED" in capsys.readouterr().out
    assert main(["jobs", "list", "--status", "DELETED", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert job.job_id in {j["job_id"] for j in listed}
    assert main(["jobs", "delete", "f" * 32]) == 1
