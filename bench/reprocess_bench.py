"""Item 12, a reprocess beside a tenant's fresh uploads: 1,000 finished documents of one
tenant run again (``richdoc reprocess``) on the strict embedded stack with
``MaxRunningJobs=2`` and indexes that lag as AWS's do, while the same tenant uploads 10
fresh documents, one after another (each once the last was admitted). A fresh upload
must never wait behind its tenant's reprocess: its wait is counted in slot turnovers,
the admissions between its queueing and its own (target: at most 2), and the share of
the turnovers the reprocess got meanwhile is reported (the two backlogs take turns).

The 1,000 documents are uploaded with the ingest queue paused and purged, their jobs
written as ended runs (cancelled: a reprocess runs any ended run again), so that only
their reprocess runs. Once the fresh uploads are measured, the reprocess runs still
waiting are cancelled (one conditional write each) and the stack stops.

    python -m bench.reprocess_bench [--quick]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/reprocess_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ItemResult, Mode, Table, Target, fmt

CAPACITY = 2
TURNOVERS_TARGET = 2
WAIT_S = 1800.0


def _note(n: int | str) -> bytes:
    return f"# Note {n}\n\nA short note about item {n}.\n".encode()


def _notification(bucket: str, key: str, version: str | None) -> str:
    """The ingest message the starter would have kept on the job."""
    created = {"bucket": {"name": bucket}, "object": {"key": key, "versionId": version}}
    record = {"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": created}
    return json.dumps({"Records": [record]})


def _finished_documents(stack: Any, count: int) -> list[str]:
    """``count`` documents of tenant ``acme`` whose runs ended: their sources uploaded
    (the notifications purged), their jobs written and cancelled."""
    from richdoc.contracts import JobOptions, SourceObject

    sqs, jobs = stack.client("sqs"), stack.jobs
    with stack.queues_paused():
        uploads = [
            stack.upload(Path(f"{n:04d}.md"), key=f"acme/redo-{n:04d}.md", body=_note(n))
            for n in range(count)
        ]
        sqs.purge_queue(QueueUrl=stack.outputs["IngestQueueUrl"])
    for upload in uploads:
        source = SourceObject(bucket=upload.bucket, key=upload.key, version_id=upload.version_id)
        message = _notification(upload.bucket, upload.key, upload.version_id)
        jobs.create(upload.job_id, source, JobOptions(), message=message)
        jobs.cancel(upload.job_id, 1, by="bench")
    return [upload.job_id for upload in uploads]


def _measure(mode: Mode, work: Path) -> dict[str, Any]:
    from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import WITHIN_A_SECOND
    from richdoc_tools.local.runtime.loops import wait_until
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.ops.operator import Operator
    from richdoc_tools.ops.reprocess import (
        ReprocessCursor,
        ReprocessFilter,
        ReprocessOutcome,
        reprocess,
    )

    documents, fresh_count = (1000, 10) if mode is Mode.FULL else (100, 3)
    with EmbeddedStack(
        StackSettings(
            parameters={"MaxRunningJobs": str(CAPACITY)},
            log_path=work / "reprocess.log",
            schedules=False,
            index_lag=WITHIN_A_SECOND,
        )
    ) as stack:
        redo = _finished_documents(stack, documents)
        operator = Operator.connect(stack.settings.stack_name)
        started = time.perf_counter()
        # Their runs were cancelled: a reprocess runs them again when asked to.
        wanted = ReprocessFilter(prefix="acme/redo-", include_cancelled=True)
        cursor = ReprocessCursor(wanted=wanted, dry_run=False, began=stack.jobs.clock())
        queued = sum(
            result.outcome is ReprocessOutcome.QUEUED for result, _ in reprocess(operator, cursor)
        )
        queued_s = time.perf_counter() - started
        fresh = []
        for n in range(fresh_count):
            upload = stack.upload(Path(f"fresh-{n}.md"), key=f"acme/fresh-{n}.md", body=_note(n))
            fresh.append(upload.job_id)

            def admitted(job_id: str = upload.job_id) -> bool:
                job = stack.jobs.get(job_id)
                return job is not None and job.admitted_at is not None

            # The minutely schedule's work, fired as the minute would when a wake missed
            # the upload (the index showed it only after the wakes that followed it).
            while not wait_until(admitted, 60):
                stack.fire_schedules()
        stack.wait_for_jobs(fresh, WAIT_S)
        records = stack.jobs.get_many([*redo, *fresh])
        # The rest of the reprocess waits: cancelled, one write each, before the stack stops.
        waiting = [job for job in records.values() if job.waiting]
        for job in waiting:
            stack.jobs.cancel(job.job_id, job.run, by="bench")
        stack.wait_for_jobs(redo, WAIT_S)
    return {
        "documents": documents,
        "queued": queued,
        "queued_s": queued_s,
        "fresh": [records[i] for i in fresh],
        "redo": [records[i] for i in redo],
        "left_waiting": len(waiting),
    }


def run(mode: Mode) -> ItemResult:
    result = ItemResult(
        "admission_reprocess", "12. Admission: a reprocess beside a tenant's fresh uploads"
    )
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-reprocess-") as tmp:
        found = _measure(mode, Path(tmp))
    admitted = sorted(
        job.admitted_at for job in found["redo"] if job.run == 2 and job.admitted_at is not None
    )
    rows, waits = [], []
    for job in found["fresh"]:
        overtaking = [at for at in admitted if job.queued_at < at < job.admitted_at]
        waited_s = _seconds(job.queued_at, job.admitted_at)
        waits.append(len(overtaking))
        rows.append([job.source.key, len(overtaking), fmt(waited_s), str(job.status)])
    first = min(job.queued_at for job in found["fresh"])
    last = max(job.admitted_at for job in found["fresh"])
    during = [at for at in admitted if first <= at <= last]
    share = len(during) / (len(during) + len(found["fresh"]))
    result.targets.append(
        Target(
            "12l",
            "a fresh upload's wait behind its tenant's reprocess (slot turnovers)",
            max(waits),
            TURNOVERS_TARGET,
            "count",
            f"reprocess admissions between each of {len(waits)} fresh uploads' queueing and "
            f"its admission, the most of them, {found['documents']:,} documents reprocessed",
        )
    )
    result.measurements = {
        "documents": found["documents"],
        "queued": found["queued"],
        "queued_s": round(found["queued_s"], 1),
        "fresh_waits": waits,
        "reprocess_share_while_fresh_waited": round(share, 3),
        "reprocess_admitted": len(admitted),
        "left_waiting": found["left_waiting"],
    }
    result.tables.append(
        Table(
            "Each fresh upload",
            ["key", "reprocess admissions waited", "seconds", "status"],
            rows,
        )
    )
    result.notes.append(
        f"{found['queued']:,} reprocess runs queued in {found['queued_s']:.0f} s; while the "
        f"fresh uploads came, the reprocess got {share:.0%} of the turnovers; "
        f"{found['left_waiting']:,} left waiting and cancelled at the end."
    )
    return result


def _seconds(start: str, end: str) -> float:
    from datetime import datetime

    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


if __name__ == "__main__":
    sys.exit(run(Mode.QUICK if "--quick" in sys.argv else Mode.FULL).print_and_exit_code())
