"""Item 5, local end to end: ``richdoc run`` on small documents against the steps alone.

What runs, in one process (as ``richdoc run`` does):

1. the embedded stack starts (template.yaml deployed into moto) — reported, not charged;
2. warm-up: one document of each format goes through the whole pipeline, so the parse
   worker's one-time import (its zygote) and the handler imports are not charged to the
   measured documents — reported separately;
3. baseline: the three steps of every measured document run in-process, one after
   another, as the handlers run them minus AWS: ``parse_file`` through the same warm
   isolated worker, load + project + serialize, load + detect + serialize;
4. the measured run: ``richdoc.run.run_files`` on N small generated documents (DOCX,
   HTML, Markdown, all distinct): upload to the ingest bucket, S3 -> SQS -> starter ->
   state machine -> handlers, until every job record is terminal;
5. latency: a few more documents, one ``run_files`` each, to show single-document latency;
6. the burst: M uploads at once, then a census: job records by status, executions by
   status, dead-letter and ingest queue depths.

Definitions (per document, averaged over the N measured documents):

* ``steps`` = parse + project + detect in-process (the baseline above);
* ``per_document`` = wall time of the measured run / N;
* orchestration overhead = ``per_document - steps`` (a guard: at most 0.35 s, every strict
  rule on; no speed patch of moto is added unless the profile shows the stack over it). The
  same in CPU time (this process plus the parse worker's zygote and children) is
  reported beside it: the machine is shared, and CPU time is what neighbours move least.

It also counts, per successful job, the AWS calls the functions make, the Lambda
invocations and their durations, the state transitions of the execution, the size of
the job and attempt items and the function log volume: the cost model's inputs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/e2e_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import ItemResult, Mode, Table, Target, item_main, peak_rss_mb

# A guard, not a goal: a developer tool's speed is not bought with changes to moto.
OVERHEAD_TARGET_S = 0.35


@dataclass(frozen=True)
class Config:
    documents: int
    burst: int
    latency: int
    burst_timeout_s: float

    @classmethod
    def for_mode(cls, mode: Mode) -> Config:
        if mode is Mode.QUICK:
            return cls(documents=6, burst=12, latency=2, burst_timeout_s=180)
        return cls(documents=50, burst=200, latency=5, burst_timeout_s=480)


# ---- clocks -------------------------------------------------------------------------------


class Clock:
    """Wall time, and CPU time of this process plus the parse worker's zygote and the
    children it reaped (the conversions), which is where the parse step's CPU goes."""

    def __init__(self) -> None:
        self._zygote: Any = None

    def attach(self, pid: int | None) -> None:
        import psutil

        self._zygote = psutil.Process(pid) if pid else None

    def now(self) -> tuple[float, float]:
        cpu = time.process_time()
        if self._zygote is not None:
            times = self._zygote.cpu_times()
            cpu += times.user + times.system + times.children_user + times.children_system
        return time.perf_counter(), cpu


@dataclass
class Steps:
    parse: tuple[float, float]
    project: tuple[float, float]
    detect: tuple[float, float]

    @property
    def total(self) -> tuple[float, float]:
        return (
            self.parse[0] + self.project[0] + self.detect[0],
            self.parse[1] + self.project[1] + self.detect[1],
        )


def in_process_steps(paths: list[Path], work: Path, clock: Clock) -> list[Steps]:
    """The three steps of each document, run here as the handlers run them (minus AWS)."""
    from richdoc.detection import detect
    from richdoc.graph import Projection
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file, shared_worker
    from richdoc.projection import load_docling, project
    from richdoc_client.projection import ProjectionSource

    worker, limits = shared_worker(), ParseLimits.resolve()
    out = work / "baseline.docling.json"
    steps = []
    for path in paths:
        t0 = clock.now()
        parse_file(path, out, limits, worker=worker)
        t1 = clock.now()
        projection = project(load_docling(out.read_bytes()), ProjectionSource(name=path.name))
        data = projection.to_json_bytes()
        t2 = clock.now()
        detect(Projection.model_validate_json(data), clarify=True).to_json_bytes()
        t3 = clock.now()
        steps.append(
            Steps(
                (t1[0] - t0[0], t1[1] - t0[1]),
                (t2[0] - t1[0], t2[1] - t1[1]),
                (t3[0] - t2[0], t3[1] - t2[1]),
            )
        )
    return steps


# ---- records ------------------------------------------------------------------------------


def dynamo_size(value: Any) -> int:
    """Approximate DynamoDB item size in bytes (names + values, as AWS counts them)."""
    from decimal import Decimal

    if isinstance(value, dict):
        return 3 + sum(len(k.encode()) + dynamo_size(v) for k, v in value.items())
    if isinstance(value, list | set | tuple):
        return 3 + sum(1 + dynamo_size(v) for v in value)
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float | Decimal):
        return 1 + (len(str(value).lstrip("-").replace(".", "")) + 1) // 2
    return len(str(value).encode())


def _iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def transitions(stack: Any, execution_arn: str) -> int:
    """State transitions of one execution: every state entered (what Standard bills)."""
    paginator = stack.client("stepfunctions").get_paginator("get_execution_history")
    return sum(
        1
        for page in paginator.paginate(executionArn=execution_arn)
        for event in page["events"]
        if event["type"].endswith("StateEntered")
    )


def census(stack: Any) -> dict[str, Any]:
    """Everything the stack holds at the end: job records, executions, queue depths."""
    table = stack.jobs.table
    statuses: Counter[str] = Counter()
    kwargs: dict[str, Any] = {}
    while True:
        page = table.scan(**kwargs)
        for item in page["Items"]:
            if item["sk"] == "JOB":
                statuses[str(item.get("job_status"))] += 1
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    executions: Counter[str] = Counter()
    paginator = stack.client("stepfunctions").get_paginator("list_executions")
    for page in paginator.paginate(stateMachineArn=stack.outputs["StateMachineArn"]):
        executions.update(e["status"] for e in page["executions"])
    sqs = stack.client("sqs")

    def depth(url: str) -> int:
        attrs = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(
            attrs["ApproximateNumberOfMessagesNotVisible"]
        )

    return {
        "job_records": dict(statuses),
        "executions": dict(executions),
        "dead_letter_queue": depth(stack.outputs["DeadLetterQueueUrl"]),
        "ingest_queue": depth(stack.outputs["IngestQueueUrl"]),
        "event_loop_errors": [repr(e) for e in stack.loop_errors],
    }


# ---- the run ------------------------------------------------------------------------------


def _per_job_calls(snapshot: dict[str, dict[str, int]], jobs: int) -> dict[str, dict[str, float]]:
    return {
        kind: {op: round(count / jobs, 2) for op, count in ops.items()}
        for kind, ops in snapshot.items()
    }


def run(mode: Mode) -> ItemResult:
    from boto3.dynamodb.conditions import Key
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import run_files

    from bench.awscalls import ApiCounter
    from bench.documents import FORMATS, write_documents
    from richdoc.jobs import attempts_prefix, job_key, partition_key
    from richdoc.parse.step import shared_worker

    config = Config.for_mode(mode)
    result = ItemResult("e2e", "5. Local end to end: richdoc run against the steps alone")
    clock, counter = Clock(), ApiCounter()
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-e2e-") as tmp:
        work = Path(tmp)
        measured = write_documents(work / "measured", config.documents, seed=1)
        warm = write_documents(work / "warm", len(FORMATS), seed=2)
        latency = write_documents(work / "latency", config.latency, seed=3)
        burst = write_documents(work / "burst", config.burst, seed=4)
        log_path = work / "functions.log"
        counter.install()
        started = time.perf_counter()
        stack = EmbeddedStack(StackSettings(log_path=log_path))
        stack.start()
        try:
            stack_start_s = time.perf_counter() - started

            t = time.perf_counter()
            warm_results = run_files(stack, warm, clarify=True)
            warm_s = time.perf_counter() - t
            clock.attach(shared_worker().server.zygote_pid)

            baseline_a = in_process_steps(measured, work, clock)

            counter.reset()
            log_before = log_path.stat().st_size
            assert stack.runtime is not None
            invocations_before = len(stack.runtime.invocations)
            t0 = clock.now()
            results = run_files(stack, measured, clarify=True)
            t1 = clock.now()
            run_wall, run_cpu = t1[0] - t0[0], t1[1] - t0[1]
            calls = counter.snapshot()
            dynamo_writes = dict(counter.dynamo_writes)
            invocations = stack.runtime.invocations[invocations_before:]
            log_bytes = log_path.stat().st_size - log_before

            latencies = []
            for path in latency:
                t = time.perf_counter()
                run_files(stack, [path], clarify=True)
                latencies.append(time.perf_counter() - t)
            latency_steps = in_process_steps(latency, work, clock)

            records = [stack.jobs.get(r.job_id) for r in results]
            succeeded = [j for j in records if j is not None and j.status == "SUCCEEDED"]
            per_execution = [
                transitions(stack, j.execution_arn) for j in succeeded[:10] if j.execution_arn
            ]
            raw_job = stack.jobs.table.get_item(Key=job_key(results[0].job_id))["Item"]
            attempt_items = stack.jobs.table.query(
                KeyConditionExpression=Key("pk").eq(partition_key(results[0].job_id))
                & Key("sk").begins_with(attempts_prefix())
            )["Items"]
            timeline = [
                (_iso(j.created_at), _iso(j.started_at), _iso(j.ended_at)) for j in succeeded
            ]

            # The burst: everything uploaded at once, then a census of the whole stack.
            t = time.perf_counter()
            burst_results = run_files(stack, burst, clarify=False, timeout_s=config.burst_timeout_s)
            burst_s = time.perf_counter() - t
            burst_status = Counter(r.status for r in burst_results)
            burst_failures = Counter(
                f"{r.failure_kind}: {(r.reason or '')[:120]}"
                for r in burst_results
                if r.status != "SUCCEEDED"
            )
            final = census(stack)
            process_peak_mb = peak_rss_mb()
        finally:
            stack.stop()
            counter.uninstall()

    n = config.documents
    steps_wall = statistics.mean(s.total[0] for s in baseline_a)
    steps_cpu = statistics.mean(s.total[1] for s in baseline_a)
    by_step = {
        part: {
            "wall": round(statistics.mean(getattr(s, part)[0] for s in baseline_a), 4),
            "cpu": round(statistics.mean(getattr(s, part)[1] for s in baseline_a), 4),
        }
        for part in ("parse", "project", "detect")
    }
    per_doc_wall, per_doc_cpu = run_wall / n, run_cpu / n
    overhead_wall, overhead_cpu = per_doc_wall - steps_wall, per_doc_cpu - steps_cpu
    latency_overhead = statistics.mean(
        lat - s.total[0] for lat, s in zip(latencies, latency_steps, strict=True)
    )
    handler_s: dict[str, dict[str, float]] = defaultdict(lambda: {"count": 0, "seconds": 0.0})
    memory: dict[str, int] = {}
    for inv in invocations:
        handler_s[inv.logical_id]["count"] += 1
        handler_s[inv.logical_id]["seconds"] += inv.seconds
        memory[inv.logical_id] = inv.memory_mb
    per_job_handlers = {
        lid: {
            "invocations": round(v["count"] / n, 2),
            "seconds": round(v["seconds"] / n, 4),
            "memory_mb": memory[lid],
        }
        for lid, v in sorted(handler_s.items())
    }
    queue_s = [(s - c).total_seconds() for c, s, _ in timeline if c and s]
    exec_s = [(e - s).total_seconds() for _, s, e in timeline if s and e]
    statuses = Counter(r.status for r in results)

    burst_terminal = sum(v for k, v in burst_status.items() if k in ("SUCCEEDED", "DEAD_LETTERED"))
    lost = config.burst - burst_terminal
    expected_jobs = len(warm) + n + len(latency) + config.burst
    recorded_jobs = sum(final["job_records"].values())
    executions = sum(final["executions"].values())
    dead_lettered = final["job_records"].get("DEAD_LETTERED", 0)
    mismatches = (
        abs(recorded_jobs - expected_jobs)
        + abs(executions - expected_jobs)
        + abs(final["dead_letter_queue"] - dead_lettered)
        + final["ingest_queue"]
        + final["executions"].get("RUNNING", 0)
    )

    result.measurements = {
        "documents": n,
        "stack_start_s": round(stack_start_s, 2),
        "warm_up_s": round(warm_s, 2),
        "warm_up_statuses": [r.status for r in warm_results],
        "run": {
            "wall_s": round(run_wall, 2),
            "cpu_s": round(run_cpu, 2),
            "statuses": dict(statuses),
            "per_document": {"wall": round(per_doc_wall, 4), "cpu": round(per_doc_cpu, 4)},
        },
        "steps_in_process": {
            "per_document": {"wall": round(steps_wall, 4), "cpu": round(steps_cpu, 4)},
            "by_step": by_step,
        },
        "overhead_per_document_s": {"wall": round(overhead_wall, 4), "cpu": round(overhead_cpu, 4)},
        "latency": {
            "documents": len(latencies),
            "mean_s": round(statistics.mean(latencies), 3),
            "mean_overhead_s": round(latency_overhead, 3),
        },
        "job_timeline_mean_s": {
            "created_to_started": round(statistics.mean(queue_s), 3) if queue_s else None,
            "started_to_ended": round(statistics.mean(exec_s), 3) if exec_s else None,
        },
        "per_job": {
            "handlers": per_job_handlers,
            "aws_calls": _per_job_calls(calls, n),
            "dynamodb_writes_by_item": {
                f"{kind} -> {item}": round(c / n, 2) for (kind, item), c in dynamo_writes.items()
            },
            "state_transitions": statistics.median(per_execution) if per_execution else None,
            "job_item_bytes": dynamo_size(raw_job),
            "attempt_item_bytes": max((dynamo_size(i) for i in attempt_items), default=0),
            "function_log_bytes": round(log_bytes / n),
        },
        "burst": {
            "uploads": config.burst,
            "wall_s": round(burst_s, 1),
            "statuses": dict(burst_status),
            "failures": dict(burst_failures),
            "not_terminal_or_missing": lost,
        },
        "census": {**final, "expected_jobs": expected_jobs},
        "process_peak_rss_mb": round(process_peak_mb, 1),
    }
    result.targets += [
        Target(
            "orchestration_overhead",
            f"richdoc run on {n} small documents: wall per document minus the three steps "
            "in-process",
            round(overhead_wall, 3),
            OVERHEAD_TARGET_S,
            "s",
            "wall time of the measured run / N, minus the mean in-process steps per document",
        ),
        Target(
            "burst_lost",
            f"{config.burst} uploads at once: jobs not in a terminal state (or missing)",
            lost,
            0,
            "count",
            "job records after run_files returned",
        ),
        Target(
            "burst_consistent",
            "records agree: one job record and one execution per upload, DLQ depth = "
            "dead-lettered jobs, ingest queue empty, nothing running",
            mismatches,
            0,
            "count",
            "census of the table, the executions and the queues at the end",
        ),
    ]
    if burst_failures:
        result.notes.append(
            f"{sum(burst_failures.values())} burst job(s) failed although their documents are "
            "valid (the same documents succeed alone): handlers of concurrent invocations share "
            "process state in the embedded stack; see docs/benchmarks.md, item 5."
        )
    result.tables.append(
        Table(
            f"Per document, {n} documents (seconds)",
            ["measure", "wall", "CPU (this process + parse worker)"],
            [
                ["richdoc run, per document", round(per_doc_wall, 3), round(per_doc_cpu, 3)],
                ["steps in-process: parse", by_step["parse"]["wall"], by_step["parse"]["cpu"]],
                [
                    "steps in-process: project",
                    by_step["project"]["wall"],
                    by_step["project"]["cpu"],
                ],
                ["steps in-process: detect", by_step["detect"]["wall"], by_step["detect"]["cpu"]],
                ["steps in-process: total", round(steps_wall, 3), round(steps_cpu, 3)],
                ["orchestration overhead", round(overhead_wall, 3), round(overhead_cpu, 3)],
                [
                    "single document, end to end (latency)",
                    round(statistics.mean(latencies), 3),
                    "-",
                ],
                ["single document, overhead over its steps", round(latency_overhead, 3), "-"],
            ],
        )
    )
    result.tables.append(
        Table(
            "One-time costs",
            ["what", "seconds"],
            [
                ["stack start (template deployed into moto)", round(stack_start_s, 2)],
                [
                    "warm-up: one document per format (parse worker start, handler imports)",
                    round(warm_s, 2),
                ],
            ],
        )
    )
    result.tables.append(
        Table(
            f"Burst: {config.burst} uploads at once",
            ["measure", "value"],
            [
                ["wall time until all terminal", f"{burst_s:.1f} s"],
                ["throughput", f"{config.burst / burst_s:.2f} documents/s"],
                ["statuses", ", ".join(f"{k} {v}" for k, v in sorted(burst_status.items()))],
                ["not terminal or missing", lost],
                ["job records (whole stack) / expected", f"{recorded_jobs} / {expected_jobs}"],
                [
                    "executions (whole stack)",
                    ", ".join(f"{k} {v}" for k, v in final["executions"].items()),
                ],
                [
                    "dead-letter queue depth / dead-lettered jobs",
                    f"{final['dead_letter_queue']} / {dead_lettered}",
                ],
                ["ingest queue depth", final["ingest_queue"]],
                *(
                    [["failures", "; ".join(f"{k} (x{v})" for k, v in burst_failures.items())]]
                    if burst_failures
                    else []
                ),
            ],
        )
    )
    result.tables.append(
        Table(
            "Per successful job: Lambda invocations and handler time (this machine)",
            ["function", "invocations", "seconds", "memory MB"],
            [
                [lid, v["invocations"], v["seconds"], v["memory_mb"]]
                for lid, v in per_job_handlers.items()
            ],
        )
    )
    return result


if __name__ == "__main__":
    sys.exit(item_main(__doc__, run))
