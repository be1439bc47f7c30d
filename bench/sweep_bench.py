"""Item 12, the sweep with 10,000 jobs waiting longer than the workflow timeout: its time
and memory against its function's (the records function: 60 s, 256 MB; target: within a
quarter of each, at most 15 s and 64 MB).

moto runs as a server in a process of its own, with the embedded stack's emulation of
DynamoDB's costs: this process is the function, and its measurements are the sweep's
own. The jobs are written straight to the table, four hours old (the clock compressed),
with one run stuck behind them; then one sweep runs, with the records function's time
budget (``TimeBudget``: it keeps half its time in reserve), as its handler runs it.

Measured: the sweep's wall time (moto's answers included, which take longer than
DynamoDB's: an upper bound) and this process's CPU time in it; the Python heap's peak
above where it started (tracemalloc) and the process's resident set at its peak (the
interpreter, boto3 and richdoc loaded, as in Lambda); the index pages it read, the jobs it
received, and whether its walk reached the end.

    python -m bench.sweep_bench [--quick]
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/sweep_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import LAYER, ROOT, TOOLS, ItemResult, Mode, Table, Target, fmt, peak_rss_mb

TIMEOUT_S = 60  # the records function's (template.yaml)
MEMORY_MB = 256
SHARE = 0.25
WORKFLOW_TIMEOUT = timedelta(hours=3)
QUEUED_AT = datetime(2026, 1, 1, tzinfo=UTC)
SWEPT_AT = QUEUED_AT + timedelta(hours=4)
# moto's server, with the embedded stack's speed patches of moto (a transaction rolls back
# its own items, not the whole table).
SERVER = """
import contextlib, sys
from richdoc_tools.local.moto_fixes import speed
from moto.server import main
with contextlib.ExitStack() as patched:
    speed.install(patched)
    main(["-p", sys.argv[1]])
"""


@contextlib.contextmanager
def _moto_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(LAYER), str(TOOLS)])}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _sweep(url: str, waiting: int) -> dict[str, Any]:
    import boto3
    from aws_lambda_powertools import Logger
    from richdoc_tools.local.cloudformation.template import load_template

    from richdoc.admission.backlog import Backlog
    from richdoc.admission.reconcile import SlotAudit
    from richdoc.admission.settings import AdmissionSettings
    from richdoc.admission.slots import SlotLedger
    from richdoc.contracts import JobOptions, SourceObject
    from richdoc.jobs import JobStatus, JobStore, timestamp
    from richdoc.records.backstops import Backstops
    from richdoc.records.calls import ScheduledSweep
    from richdoc.records.sweep_walk import TimeBudget
    from tests.support.admission import INGEST_MESSAGE, waiting_job_item
    from tests.support.aws import provision_one

    os.environ.update(
        AWS_ENDPOINT_URL=url,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
    )
    name = provision_one(load_template(), "JobsTable")
    table = boto3.resource("dynamodb").Table(name)
    with table.batch_writer() as batch:
        for n in range(waiting):
            batch.put_item(Item=waiting_job_item(n, QUEUED_AT))
    late = JobStore(table, clock=lambda: timestamp(QUEUED_AT + timedelta(minutes=1)))
    source = SourceObject(bucket="ingest", key="acme/stuck.pdf", version_id="v1")
    late.create("f" * 32, source, JobOptions(), message=INGEST_MESSAGE)
    jobs = JobStore(table)
    sqs = boto3.client("sqs")
    ledger = SlotLedger(table, AdmissionSettings.of(20), jobs.clock)
    backstops = Backstops(
        jobs=jobs,
        sqs=sqs,
        sfn=boto3.client("stepfunctions"),
        dead_letter_queue_url=sqs.create_queue(QueueName="dead-letters")["QueueUrl"],
        logger=Logger(service="bench"),
        workflow_timeout_s=int(WORKFLOW_TIMEOUT.total_seconds()),
        audit=SlotAudit(ledger=ledger, backlog=Backlog(table, jobs.clock), jobs=jobs),
    )
    event = ScheduledSweep.model_validate(
        {"detail-type": "Scheduled Event", "source": "aws.events", "time": SWEPT_AT}
    )
    deadline = time.monotonic() + TIMEOUT_S

    def remaining_ms() -> int:
        return int((deadline - time.monotonic()) * 1000)

    budget = TimeBudget.of_invocation(remaining_ms)
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    wall, cpu = time.perf_counter(), time.process_time()
    swept = backstops.sweep(event, budget)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stuck = jobs.get("f" * 32)
    return {
        "waiting": waiting,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "heap_peak_mb": round((peak - base) / (1 << 20), 2),
        "rss_peak_mb": round(peak_rss_mb(), 1),
        "index_pages": swept.index_pages,
        "read": swept.read,
        "walked": swept.walked,
        "closed": swept.closed,
        "stuck_closed": stuck is not None and stuck.status is JobStatus.DEAD_LETTERED,
    }


def run(mode: Mode) -> ItemResult:
    result = ItemResult("admission_sweep", "12. Admission: the sweep with 10,000 jobs waiting")
    waiting = 10_000 if mode is Mode.FULL else 1_000
    with _moto_server() as url:
        found = _sweep(url, waiting)
    result.targets += [
        Target(
            "12i",
            f"the sweep's time with {waiting:,} jobs waiting, against its timeout",
            round(found["wall_s"] / TIMEOUT_S, 3),
            SHARE,
            "x",
            f"wall time of one sweep (moto's answers included) / {TIMEOUT_S} s",
        ),
        Target(
            "12j",
            f"the sweep's memory with {waiting:,} jobs waiting, against its memory",
            round(found["heap_peak_mb"] / MEMORY_MB, 3),
            SHARE,
            "x",
            f"peak of the Python heap above its start (tracemalloc) / {MEMORY_MB} MB",
        ),
        Target(
            "12k",
            "a run stuck behind the waiting jobs left open by the sweep",
            0 if found["stuck_closed"] else 1,
            0,
            "count",
            "the stuck run's status after one sweep",
        ),
    ]
    result.measurements = found
    result.tables.append(
        Table(
            "One sweep",
            [
                "waiting",
                "wall s",
                "CPU s",
                "heap peak MB",
                "RSS peak MB",
                "index pages",
                "jobs read",
            ],
            [
                [
                    waiting,
                    fmt(found["wall_s"]),
                    fmt(found["cpu_s"]),
                    fmt(found["heap_peak_mb"]),
                    fmt(found["rss_peak_mb"]),
                    found["index_pages"],
                    found["read"],
                ]
            ],
        )
    )
    result.notes.append(
        f"The walk {'reached the end' if found['walked'] else 'stopped at its budget'}; "
        "the process's resident set includes the interpreter, boto3 and richdoc."
    )
    return result


if __name__ == "__main__":
    sys.exit(run(Mode.QUICK if "--quick" in sys.argv else Mode.FULL).print_and_exit_code())
