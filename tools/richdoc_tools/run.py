"""The main job, locally: files -> ingest bucket -> the whole pipeline -> results.

``richdoc run`` starts the embedded stack, uploads each file to the ingest bucket exactly
as a user would drop it into S3 (with ``richdoc-clarify`` object metadata), lets
S3 -> queue -> starter -> state machine process it, and waits for every job record to
reach a terminal state. Nothing here shortcuts the orchestration.

Each input gets one name (``input_keys``): its object key in the ingest bucket, its row in
the table and its folder under ``--out``. It is the file name, and for a file name that
several inputs share, the first keeps it and the later ones are ``<stem>~<n><suffix>``
(``report.pdf``, ``report~2.pdf``, ...), skipping any name another input already has.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from richdoc.contracts import OUTPUT_FILES, OUTPUT_FOLDERS
from richdoc.document_results import written_keys
from richdoc.jobs import Attempt, Job, JobStatus, Progress
from richdoc_client.reader import ResultsReader
from richdoc_client.tables import table_csv_name
from richdoc_client.wire import AbsentOmitted
from richdoc_tools.local.runtime.events import wait_until
from richdoc_tools.local.stack import EmbeddedStack
from richdoc_tools.ops.job_document import JobDocument
from richdoc_tools.ops.uploads import Upload, clarify_metadata


class Counts(AbsentOmitted):
    nodes: int | None = None
    edges: int | None = None
    spans: int | None = None
    ambiguities: int | None = None
    chunks: int | None = None  # the retrieval chunks of chunks.jsonl
    tables: int | None = None  # the CSVs under tables/, one per table
    # As the job's counts say them: the pages OCR read, and the pages without a text
    # layer left unread because OcrMode is off; absent for a document without such pages.
    ocr_page_count: int | SkipJsonSchema[None] = None
    unread_pages: list[int] | SkipJsonSchema[None] = None


class RunResult(BaseModel):
    """One input's outcome: an object of ``richdoc run --json``, a summary of its job's
    public JSON (``document``, which ``job.json`` under ``--out`` holds): the job's id,
    status, attempts, shards (1 when not sharded) and counts (each null until the run
    succeeds), its failure's kind, feature and reason, pipeline and output keys; and what
    the run adds: the input (``source``), its object key, the ambiguities' kinds, the
    biggest parse tier the run needed and the seconds the job took."""

    source: str
    key: str  # object key in the ingest bucket = folder name under --out (input_keys)
    job_id: str
    status: str
    failure_kind: str | None = None
    feature: str | None = None
    reason: str | None = None
    attempts: list[Attempt]
    shards: int = 1  # page-range shards the parse ran as; 1 when not sharded
    counts: Counts
    ambiguity_kinds: list[str] = []
    pipeline: str | None = None
    tier: int | None = None
    seconds: float | None = None
    outputs: dict[str, str] = {}
    # What it summarises (None: no job record was created); written as job.json.
    document: JobDocument | None = Field(default=None, exclude=True)

    @property
    def succeeded(self) -> bool:
        return self.status == JobStatus.SUCCEEDED

    @classmethod
    def of(cls, source: Path, upload: Upload, document: JobDocument | None) -> RunResult:
        if document is None:
            return cls(
                source=str(source),
                key=upload.key,
                job_id=upload.job_id,
                status="MISSING",
                attempts=[],
                counts=Counts(),
                reason="no job record was created",
            )
        job, attempts = document.job, document.attempts
        failure = job.failure
        # The biggest tier the job's run needed: its last parse, or its most demanding shard.
        parse_tiers = [
            a.tier
            for a in attempts
            if a.stage == "parse" and a.tier is not None and a.run == job.run
        ]
        return cls(
            source=str(source),
            key=upload.key,
            job_id=job.job_id,
            status=str(job.status),
            failure_kind=str(failure.kind) if failure else None,
            feature=failure.feature if failure else None,
            reason=failure.reason if failure else None,
            attempts=attempts,
            shards=job.shards or 1,
            counts=Counts.model_validate(job.counts, from_attributes=True)
            if job.counts
            else Counts(),
            pipeline=job.pipeline,
            tier=max(parse_tiers, default=None),
            seconds=_seconds(job),
            outputs=job.outputs.model_dump() if job.outputs else {},
            document=document,
        )


def expand_inputs(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; directories expand to their files (recursively, sorted, no dotfiles)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")
    return files


def input_keys(files: Sequence[Path]) -> list[str]:
    """One distinct name per input, in input order (see the module docstring)."""
    taken = {f.name for f in files}
    seen: Counter[str] = Counter()
    keys = []
    for f in files:
        seen[f.name] += 1
        if seen[f.name] == 1:
            keys.append(f.name)
            continue
        stem, suffix = (f.stem, f.suffix) if f.stem else (f.name, "")
        n = seen[f.name]
        while f"{stem}~{n}{suffix}" in taken:
            n += 1
        taken.add(f"{stem}~{n}{suffix}")
        keys.append(f"{stem}~{n}{suffix}")
    return keys


def _seconds(job: Job) -> float | None:
    if not job.created_at or not job.ended_at:
        return None
    delta = datetime.fromisoformat(job.ended_at) - datetime.fromisoformat(job.created_at)
    return round(delta.total_seconds(), 2)


def run_files(
    stack: EmbeddedStack,
    files: Sequence[Path],
    *,
    clarify: bool,
    timeout_s: float = 1800.0,
    on_finished: Callable[[Job], None] | None = None,
    on_open: Callable[[list[Progress]], None] | None = None,
) -> list[RunResult]:
    """Upload every file to the started stack and wait for all jobs; results in input
    order. ``on_finished`` gets each job as it ends, ``on_open`` what the others are doing."""
    metadata = clarify_metadata(clarify)
    uploads = [
        stack.upload(f, key=k, metadata=metadata)
        for f, k in zip(files, input_keys(files), strict=True)
    ]
    jobs = stack.wait_for_jobs([u.job_id for u in uploads], timeout_s, on_finished, on_open)
    # A run's record is whole once admission has released its slot, which the dispatcher
    # does on reading the run's end from the jobs table's stream: the records are read
    # again when the streams have caught up, so job.json and --json show the release.
    if wait_until(stack.notifications_delivered, timeout_s):
        jobs.update(stack.jobs.get_many([job_id for job_id, job in jobs.items() if job]))
    results = [
        RunResult.of(f, u, _document(jobs.get(u.job_id), stack))
        for f, u in zip(files, uploads, strict=True)
    ]
    for result in results:
        if "detection_key" in result.outputs:
            detection = json.loads(stack.artifact(result.outputs["detection_key"]))
            result.ambiguity_kinds = [a["kind"] for a in detection["ambiguities"]]
    return results


def _document(job: Job | None, stack: EmbeddedStack) -> JobDocument | None:
    return (
        None
        if job is None
        else JobDocument(job=job, attempts=stack.jobs.attempts.of_job(job.job_id))
    )


JOB_FILE = "job.json"


def out_problem(out_dir: Path, files: Sequence[Path]) -> str | None:
    """Why ``--out DIR`` cannot take these inputs' folders, before anything runs."""
    if out_dir.exists() and not out_dir.is_dir():
        return f"--out {out_dir}: not a directory"
    for key in input_keys(files):
        target = out_dir / key
        if target.exists() and not target.is_dir():
            return f"--out {out_dir}: {target} exists and is not a directory"
    return None


def write_outputs(results: Sequence[RunResult], stack: EmbeddedStack, out_dir: Path) -> None:
    """DIR/<key>/ with docling.json, projection.json, detection.json, chunks.jsonl,
    document.md and tables/table-<node>.csv (those that exist) and job.json: the job's
    public JSON (``JobDocument``) with the input's path, ``input``. A folder left by an
    earlier run loses the files this run does not write (a failed re-run must not sit next
    to the previous success's outputs); other files in it are left alone."""
    bucket = stack.outputs["ArtifactBucketName"]
    reader = ResultsReader.s3(bucket, client=stack.client("s3"))
    for result in results:
        target = out_dir / result.key
        target.mkdir(parents=True, exist_ok=True)
        document = result.document
        outputs = document.job.outputs if document else None
        written = outputs.files() if outputs else {}
        for file_name in OUTPUT_FILES.values():
            if file_name in written:
                (target / file_name).write_bytes(stack.artifact(written[file_name]))
            else:
                (target / file_name).unlink(missing_ok=True)
        tables = target / OUTPUT_FOLDERS["tables_prefix"]
        for stale in tables.glob("table-*.csv"):
            stale.unlink()
        keys = written_keys(document.job, bucket) if document else None
        if keys is not None and keys.tables_prefix is not None:
            tables.mkdir(exist_ok=True)
            for table in reader.tables(keys):
                (tables / table_csv_name(table.node)).write_bytes(stack.artifact(table.key))
        elif tables.is_dir() and not any(tables.iterdir()):
            tables.rmdir()
        public = document.model_dump(mode="json") if document else {"attempts": []}
        record = {**public, "input": result.source}
        (target / JOB_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
