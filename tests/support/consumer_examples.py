"""Example manifests and completion events, one per way a job ends, as the pipeline
would write them for the golden documents (the reader's tests and the schema tests use
them; ``python -m tests.support.consumer_examples`` rewrites tests/data/consumers/)."""

from __future__ import annotations

from richdoc_client.events import (
    CompletionDetail,
    FailureSummary,
    ManifestSummary,
    TerminalStatus,
)
from richdoc_client.failures import FailureKind
from richdoc_client.identity import SourceIdentity
from richdoc_client.manifest import Manifest, ManifestResult
from richdoc_client.results import ResultCounts, ResultKeys, ResultRef
from tests.support.paths import DATA

CONSUMERS = DATA / "consumers"
INGEST_BUCKET = "richdoc-ingest-example"
ARTIFACT_BUCKET = "richdoc-artifacts-example"
SHA256 = "94a2d05fbc675074a2dff8249ba436818ffe953ad5e76a81a2e2bd4f3917e155"
JOB = "5d3c1f0e9b8a7d6c5b4a39281706f5e4"


def source(key: str = "contracts/lease.pdf") -> SourceIdentity:
    return SourceIdentity(
        bucket=INGEST_BUCKET, key=key, version_id="3sL4kqtJlcpXroDTDmJ", sha256=SHA256
    )


def outputs(run: int = 1, job_id: str = JOB) -> ResultKeys:
    """Where the notifier keeps a run's outputs with its document (documents/...)."""
    prefix = f"documents/{source().document_id}/{job_id}/run-{run:03d}"
    return ResultKeys(
        bucket=ARTIFACT_BUCKET,
        docling_key=f"{prefix}/docling.json",
        projection_key=f"{prefix}/projection.json",
        detection_key=f"{prefix}/detection.json",
        chunks_key=f"{prefix}/chunks.jsonl",
        markdown_key=f"{prefix}/document.md",
        tables_prefix=f"{prefix}/tables/",
    )


COUNTS = ResultCounts(
    nodes=4, edges=3, spans=3, ambiguities=1, ambiguities_suppressed=0, chunks=1, tables=1
)


def events() -> dict[str, CompletionDetail]:
    """A success that is the document's current result; a redriven run's dead letter and
    a cancel, each leaving the document no result; the deletion that removed it."""
    return {
        "succeeded": CompletionDetail.create(
            job_id=JOB,
            run=1,
            status=TerminalStatus.SUCCEEDED,
            source=source(),
            outputs=outputs(),
            counts=COUNTS,
            metadata={"richdoc-tenant": "acme"},
            manifest=ManifestSummary(
                job_id=JOB,
                run=1,
                status=TerminalStatus.SUCCEEDED,
                result=ResultRef(job_id=JOB, run=1),
            ),
        ),
        "dead-lettered": CompletionDetail.create(
            job_id=JOB,
            run=2,
            status=TerminalStatus.DEAD_LETTERED,
            source=source(),
            failure=FailureSummary(kind=FailureKind.UNSUPPORTED_FEATURE, feature="encrypted"),
            manifest=ManifestSummary(
                job_id=JOB, run=2, status=TerminalStatus.DEAD_LETTERED, result=None
            ),
        ),
        "cancelled": CompletionDetail.create(
            job_id=JOB,
            run=3,
            status=TerminalStatus.CANCELLED,
            source=source(),
            manifest=ManifestSummary(
                job_id=JOB, run=3, status=TerminalStatus.CANCELLED, result=None
            ),
        ),
        "deleted": CompletionDetail.create(
            job_id=JOB, run=3, status=TerminalStatus.DELETED, source=source()
        ),
    }


def manifests() -> dict[str, Manifest]:
    identity = source()
    return {
        "current": Manifest(
            document_id=identity.document_id,
            source=identity,
            job_id=JOB,
            run=1,
            status=TerminalStatus.SUCCEEDED,
            result=ManifestResult(run=1, outputs=outputs(), counts=COUNTS),
            metadata={"richdoc-tenant": "acme"},
        ),
        "no-result": Manifest(
            document_id=identity.document_id,
            source=identity,
            job_id=JOB,
            run=2,
            status=TerminalStatus.DEAD_LETTERED,
            result=None,
            metadata={},
        ),
    }


def main() -> None:
    CONSUMERS.mkdir(exist_ok=True)
    for name, event in events().items():
        (CONSUMERS / f"event-{name}.json").write_text(event.to_json() + "\n")
    for name, manifest in manifests().items():
        (CONSUMERS / f"manifest-{name}.json").write_bytes(manifest.to_json_bytes())


if __name__ == "__main__":
    main()
