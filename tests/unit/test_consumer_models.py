"""The published models of the document id, the manifest and the completion event, and
the reader's directory store (docs/consumers.md)."""

from __future__ import annotations

import hashlib
import json

import pytest
from pydantic import ValidationError

from richdoc import taxonomy
from richdoc.jobs import JobStatus
from richdoc_client.events import (
    CompletionDetail,
    CompletionEvent,
    FailureSummary,
    TerminalStatus,
    completion_event_id,
)
from richdoc_client.failures import FailureKind
from richdoc_client.identity import document_id
from richdoc_client.manifest import Manifest, ManifestResult, manifest_key
from richdoc_client.reader import (
    DirectoryResultStore,
    NoSuccessfulRun,
    ResultNotFound,
    ResultsReader,
    UnreadableManifest,
)
from richdoc_client.results import ResultCounts
from tests.support.consumer_examples import (
    CONSUMERS,
    COUNTS,
    JOB,
    events,
    manifests,
    outputs,
    source,
)


def test_the_document_id_is_bucket_and_key_whatever_the_version():
    expected = hashlib.sha256(b"ingest\x00contracts/lease.pdf").hexdigest()[:32]
    assert document_id("ingest", "contracts/lease.pdf") == expected
    first = source().model_copy(update={"version_id": "v1"})
    second = source().model_copy(update={"version_id": "v2", "sha256": None})
    assert first.document_id == second.document_id
    assert document_id("ingest", "a/b") != document_id("ingest/a", "b")
    assert manifest_key(expected) == f"documents/{expected}/manifest.json"


def test_the_event_id_is_one_per_terminal_change():
    ids = {completion_event_id(JOB, run, status) for run in (1, 2) for status in TerminalStatus}
    assert len(ids) == 2 * len(TerminalStatus)
    again = CompletionDetail.create(
        job_id=JOB, run=3, status=TerminalStatus.DELETED, source=source()
    )
    assert again == events()["deleted"]
    assert again.event_id == completion_event_id(JOB, 3, TerminalStatus.DELETED)


def test_terminal_statuses_are_the_job_records_and_failure_kinds_the_taxonomys():
    assert {s.value for s in TerminalStatus} == {s.value for s in JobStatus if s.terminal}
    assert taxonomy.FailureKind is FailureKind


@pytest.mark.parametrize("name", sorted(events()))
def test_the_example_events_are_what_the_models_write(name):
    data = (CONSUMERS / f"event-{name}.json").read_text()
    assert data == events()[name].to_json() + "\n"
    assert CompletionDetail.model_validate_json(data) == events()[name]


def test_an_event_whose_members_disagree_is_refused():
    good = json.loads(events()["succeeded"].to_json())
    for damage in (
        {"event_id": "0" * 32},
        {"document_id": "0" * 32},
        {"outputs": None},
        {"failure": {"kind": "internal", "feature": None}},
        {"status": "CANCELLED"},
    ):
        with pytest.raises(ValidationError):
            CompletionDetail.model_validate({**good, **damage})
    with pytest.raises(ValidationError, match="failure"):
        CompletionDetail.create(
            job_id=JOB, run=2, status=TerminalStatus.DEAD_LETTERED, source=source()
        )
    with pytest.raises(ValidationError, match="outputs"):
        CompletionDetail.create(
            job_id=JOB, run=1, status=TerminalStatus.DELETED, source=source(),
            outputs=outputs(), counts=COUNTS,
        )  # fmt: skip
    assert events()["dead-lettered"].failure == FailureSummary(
        kind=FailureKind.UNSUPPORTED_FEATURE, feature="encrypted"
    )


def test_an_eventbridge_event_is_read_with_its_detail_checked_in_full():
    envelope = {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": "Job Finished",
        "source": "richdoc",
        "account": "123456789012",
        "time": "2026-12-04T10:00:00Z",
        "region": "us-east-1",
        "resources": [],
        "detail": json.loads(events()["succeeded"].to_json()),
    }
    event = CompletionEvent.model_validate(envelope)
    assert (event.detail, event.replay_name) == (events()["succeeded"], None)
    with pytest.raises(ValidationError):
        CompletionEvent.model_validate({**envelope, "detail": {**envelope["detail"], "run": 0}})
    replayed = CompletionEvent.model_validate({**envelope, "replay-name": "consumer-catch-up"})
    assert replayed.replay_name == "consumer-catch-up"


@pytest.mark.parametrize("name", sorted(manifests()))
def test_the_example_manifests_are_what_the_models_write(name):
    data = (CONSUMERS / f"manifest-{name}.json").read_bytes()
    assert data == manifests()[name].to_json_bytes()
    assert Manifest.model_validate_json(data) == manifests()[name]


def test_a_manifest_points_at_its_own_version_s_successful_run():
    current = manifests()["current"]
    with pytest.raises(ValidationError, match="SUCCEEDED"):
        current.model_validate({**current.model_dump(by_alias=True), "result": None})
    later = ManifestResult(run=4, outputs=outputs(4), counts=COUNTS)
    with pytest.raises(ValidationError, match="later"):
        Manifest.model_validate(
            {**manifests()["no-result"].model_dump(by_alias=True), "result": later}
        )
    with pytest.raises(ValidationError):
        Manifest.model_validate({**current.model_dump(by_alias=True), "status": "DELETED"})


def test_the_directory_store_refuses_keys_that_leave_its_root(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    store = DirectoryResultStore(tmp_path / "root")
    for key in ("../secret.txt", "/etc/hostname", "", "documents/../../secret.txt"):
        with pytest.raises(ResultNotFound):
            store.read(key)
    with pytest.raises(ResultNotFound):
        list(store.lines("../secret.txt"))


def test_the_reader_says_when_there_is_nothing_to_read(tmp_path):
    reader = ResultsReader.directory(tmp_path)
    assert list(reader.documents()) == []
    with pytest.raises(ResultNotFound):
        reader.manifest("0" * 32)
    with pytest.raises(NoSuccessfulRun, match="no successful run"):
        reader.projection(manifests()["no-result"])
    with pytest.raises(NoSuccessfulRun, match="CANCELLED"):
        list(reader.chunks(events()["cancelled"]))
    keys = outputs().model_copy(update={"chunks_key": None})
    with pytest.raises(ResultNotFound, match="no chunks"):
        list(reader.chunks(keys))


def _with_unknown_members(document: dict[str, object]) -> dict[str, object]:
    """A document as a later minor version might write it: members this one lacks, at the
    top and inside."""
    later = json.loads(json.dumps(document))
    later["schema_version"] = "1.9"
    later["ocr"] = {"engine": "tesseract", "pages": [2]}
    for name, value in later.items():
        if isinstance(value, dict) and name != "metadata":  # metadata maps any names
            value["added_in_1_9"] = True
    return later


@pytest.mark.parametrize("name", ["manifest-current", "event-succeeded", "event-deleted"])
def test_a_reader_of_this_version_reads_a_later_minor_version(name):
    from richdoc_client.schemas import PUBLISHED

    model = {p.name: p.model for p in PUBLISHED}[name.split("-")[0]]
    data = json.loads((CONSUMERS / f"{name}.json").read_bytes())
    read = model.model_validate(_with_unknown_members(data))
    assert read.model_dump(mode="json", by_alias=True) == {**data, "schema_version": "1.9"}


def test_a_document_written_before_versions_reads_as_version_1_0():
    data = json.loads((CONSUMERS / "event-succeeded.json").read_bytes())
    for member in ("schema_version", "current", "manifest"):
        data.pop(member)
    detail = CompletionDetail.model_validate(data)
    assert (detail.schema_version, detail.current, detail.manifest) == ("1.0", None, None)
    with pytest.raises(ValidationError):  # another major version is not this reader's
        CompletionDetail.model_validate({**data, "schema": "richdoc.event/v2"})


def test_a_member_with_nothing_to_say_is_absent_and_one_whose_null_says_none_is_null():
    """One rule (``richdoc_client.wire.AbsentOmitted``): a member typed
    ``T | SkipJsonSchema[None]`` is left out of the file while None, and its schema does
    not require it; one typed ``T | None`` is written as null. OCR's counts (1.1) are of
    the first kind, chunks and the event's manifest of the second."""
    from richdoc_client.schemas import PUBLISHED, json_schema

    native = json.loads(COUNTS.model_dump_json())
    assert {"ocr_page_count", "unread_pages"}.isdisjoint(native) and "chunks" in native
    assert ResultCounts.model_validate(native) == COUNTS
    scanned = {**native, "ocr_page_count": 0, "unread_pages": [2]}
    assert json.loads(ResultCounts.model_validate(scanned).model_dump_json()) == scanned
    assert json.loads(events()["deleted"].to_json())["manifest"] is None

    manifest = json_schema(next(p for p in PUBLISHED if p.name == "manifest"))
    counts = manifest["$defs"]["ResultCounts"]
    assert "chunks" in counts["required"]
    for member in ("ocr_page_count", "unread_pages"):
        assert member not in counts["required"]
        assert counts["properties"][member]["x-richdoc-since"] == "1.1"


def test_a_listing_passes_over_and_reports_a_bad_manifest(tmp_path):
    good = manifests()["current"]
    (tmp_path / good.key).parent.mkdir(parents=True)
    (tmp_path / good.key).write_bytes(good.to_json_bytes())
    for document, body in (
        ("0" * 32, b"{not json"),
        ("1" * 32, b'{"schema": "richdoc.manifest/v2"}'),
    ):
        (tmp_path / "documents" / document).mkdir()
        (tmp_path / "documents" / document / "manifest.json").write_bytes(body)
    later = tmp_path / "documents" / ("2" * 32) / "manifest.json"
    later.parent.mkdir()
    later.write_text(json.dumps(_with_unknown_members(json.loads(good.to_json_bytes()))))
    reader = ResultsReader.directory(tmp_path)
    skipped: list[UnreadableManifest] = []
    listed = list(reader.documents(on_unreadable=skipped.append))
    assert [m.document_id for m in listed] == [good.document_id, good.document_id]
    assert [s.key for s in skipped] == [
        f"documents/{'0' * 32}/manifest.json",
        f"documents/{'1' * 32}/manifest.json",
    ]
    assert "schema" in skipped[1].reason
    assert reader.current("3" * 32) is None
    assert reader.current(good.document_id) == good
