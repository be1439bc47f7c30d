"""Which job record writes are completions, and the event each one publishes
(richdoc.completion): one event per terminal change, keys and counts only."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from richdoc.completion import completed, completion_detail
from richdoc.jobs import Job, JobStatus
from richdoc.taxonomy import Failure, FailureKind
from richdoc_client.events import TerminalStatus, completion_event_id
from richdoc_client.identity import document_id
from tests.support.published_schemas import schema_errors
from tests.support.records import COUNTS, OUTPUTS, SOURCE

RESULTS = "results-bucket"


def job(status: JobStatus, run: int = 1, **fields: object) -> Job:
    values = {"job_id": "job-1", "status": status, "run": run, "source": SOURCE, **fields}
    return Job.model_validate(values)


def test_a_run_ending_is_a_completion() -> None:
    running, done = job(JobStatus.RUNNING), job(JobStatus.SUCCEEDED)
    assert completed(running, done) is done


def test_a_job_created_already_terminal_is_a_completion() -> None:
    """A tombstone: a version deleted before its creation notification was handled."""
    deleted = job(JobStatus.DELETED)
    assert completed(None, deleted) is deleted


def test_a_later_write_of_the_same_terminal_status_is_not() -> None:
    """A discard recorded on a dead-lettered job, a cancel closed, a purge of a deleted one."""
    for status in (s for s in JobStatus if s.terminal):
        assert completed(job(status), job(status)) is None


def test_the_same_status_in_a_later_run_is_a_completion() -> None:
    assert completed(job(JobStatus.DEAD_LETTERED, 1), job(JobStatus.DEAD_LETTERED, 2)) is not None


def test_open_statuses_and_removals_are_not() -> None:
    for status in (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED):
        assert completed(job(JobStatus.RUNNING), job(status)) is None
    assert completed(job(JobStatus.SUCCEEDED), None) is None  # its time to live ran out


@given(
    old=st.none() | st.tuples(st.sampled_from(list(JobStatus)), st.integers(1, 3)),
    new=st.tuples(st.sampled_from(list(JobStatus)), st.integers(1, 3)),
)
def test_a_completion_is_exactly_a_terminal_status_new_to_its_run(
    old: tuple[JobStatus, int] | None, new: tuple[JobStatus, int]
) -> None:
    before = job(*old) if old else None
    after = job(*new)
    expected = new[0].terminal and (old is None or old != new)
    assert (completed(before, after) is not None) == expected


def test_a_success_names_its_outputs_and_counts_and_nothing_of_the_document() -> None:
    done = job(
        JobStatus.SUCCEEDED,
        outputs=OUTPUTS,
        counts=COUNTS,
        metadata={"richdoc-tenant": "acme"},
        source=SOURCE.model_copy(update={"sha256": "ab" * 32}),
    )
    detail = completion_detail(done, RESULTS, None)
    assert detail.status is TerminalStatus.SUCCEEDED
    assert detail.event_id == completion_event_id("job-1", 1, TerminalStatus.SUCCEEDED)
    assert detail.document_id == document_id("ingest", "contract.docx")
    assert detail.source.model_dump() == {
        "bucket": "ingest",
        "key": "contract.docx",
        "version_id": "v1",
        "sha256": "ab" * 32,
    }
    # The outputs as the notifier keeps them with the document, for as long as the version.
    assert detail.outputs is not None and detail.outputs.bucket == RESULTS
    kept = f"documents/{detail.document_id}/job-1/run-001/"
    assert detail.outputs.chunks_key == f"{kept}chunks.jsonl"
    assert detail.outputs.projection_key == f"{kept}projection.json"
    assert detail.counts is not None and detail.counts.chunks == COUNTS.chunks
    assert (detail.failure, detail.metadata) == (None, {"richdoc-tenant": "acme"})
    assert (detail.current, detail.manifest) == (False, None)  # no manifest was given
    assert schema_errors("event", detail.model_dump(mode="json", by_alias=True)) == []


def test_the_event_says_how_its_run_relates_to_the_documents_manifest() -> None:
    from richdoc.manifests import ObjectVersion, version_manifest

    old = job(JobStatus.SUCCEEDED, outputs=OUTPUTS, counts=COUNTS)
    newer = job(JobStatus.SUCCEEDED, outputs=OUTPUTS, counts=COUNTS, job_id="job-2")
    manifest = version_manifest(
        "ingest", "contract.docx", ObjectVersion("v2", None), newer, RESULTS
    )
    assert manifest is not None
    current = completion_detail(newer, RESULTS, manifest)
    assert current.current is True and current.manifest is not None
    assert current.manifest.result == current.result
    superseded = completion_detail(old, RESULTS, manifest)
    assert superseded.current is False
    assert superseded.manifest == current.manifest  # the document's result is job-2's
    gone = completion_detail(job(JobStatus.DELETED), RESULTS, None)
    assert (gone.current, gone.manifest) == (False, None)  # the document has none


def test_a_dead_letter_names_the_kind_and_feature_but_never_the_reason() -> None:
    reason = "the secret clause on page 3 could not be read"
    failure = Failure(kind=FailureKind.UNSUPPORTED_FEATURE, reason=reason, feature="ocr")
    detail = completion_detail(job(JobStatus.DEAD_LETTERED, 2, failure=failure), RESULTS, None)
    assert detail.failure is not None
    assert (detail.failure.kind, detail.failure.feature) == ("unsupported_feature", "ocr")
    assert (detail.outputs, detail.counts, detail.run) == (None, None, 2)
    assert reason not in detail.to_json()
    assert schema_errors("event", detail.model_dump(mode="json", by_alias=True)) == []


def test_cancelled_and_deleted_carry_neither_outputs_nor_a_failure() -> None:
    for status in (JobStatus.CANCELLED, JobStatus.DELETED):
        detail = completion_detail(job(status, outputs=OUTPUTS, counts=COUNTS), RESULTS, None)
        assert (detail.outputs, detail.counts, detail.failure) == (None, None, None)
        assert detail.metadata == {}


def test_each_terminal_change_has_its_own_event_id_and_every_repeat_the_same() -> None:
    ids = {
        completion_detail(job(status, run), RESULTS, None).event_id
        for status in (JobStatus.DEAD_LETTERED, JobStatus.CANCELLED, JobStatus.DELETED)
        for run in (1, 2)
    }
    assert len(ids) == 6
    again = completion_detail(job(JobStatus.DELETED, 2), RESULTS, None).event_id
    assert again in ids
