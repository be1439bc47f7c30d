"""Sample values of the job record, for tests that write jobs by hand."""

from __future__ import annotations

from richdoc.contracts import JobCounts, JobOutputs, SourceObject

SOURCE = SourceObject(bucket="ingest", key="contract.docx", version_id="v1", size=10)
OUTPUTS = JobOutputs(
    docling_key="docling/ab/contract.json",
    projection_key="jobs/job-1/run-001/projection.json",
    detection_key="jobs/job-1/run-001/detection.json",
    chunks_key="jobs/job-1/run-001/chunks.jsonl",
    markdown_key="jobs/job-1/run-001/document.md",
    tables_prefix="jobs/job-1/run-001/tables/",
)
COUNTS = JobCounts(
    nodes=3, edges=2, spans=2, ambiguities=0, ambiguities_suppressed=1, chunks=2, tables=1
)
