"""Item 12, admission under a burst: small documents from two tenants dropped at once into
the strict embedded stack with ``MaxRunningJobs=2``.

The first tenant uploads 450 documents, the second one, then the first the rest (500 in
all; ``--quick``: 45, 1, 14). Measured from the records, never by sampling:

* dead letters (0) and every job SUCCEEDED;
* the most slots held at any moment, from the ledger's every version (the jobs table's
  stream) and from the jobs' admitted and released times (at most the capacity);
* throughput against the capacity's limit in the same run: slots / mean run time (the
  mean time a run held its slot) against documents / elapsed (first admission to last
  release), at least 0.9;
* the second tenant's upload: how many of the first tenant's jobs were admitted between
  its queueing and its admission, in slot turnovers (at most 2);
* every slot back at the end;
* what admission costs per document: the starter's and the dispatcher's AWS calls and
  Lambda invocations (the model of docs/architecture.md, "Bounded concurrency").

A second, smaller run injects faults at 5 % (``--faults 0.05,seed=7``): every job ends
terminal, no dead letter is lost, and no slot is left held once the sweep has run.

    python -m bench.admission_bench [--quick]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/admission_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ItemResult, Mode, Table, Target, fmt

CAPACITY = 2
THROUGHPUT_TARGET = 0.9
TURNOVERS_TARGET = 2
FAULT_RATE, FAULT_SEED = 0.05, 7


def _note(n: int) -> bytes:
    return f"# Note {n}\n\nA short note about item {n}.\n".encode()


def ledger_history(stack: Any) -> list[int]:
    """``running`` in every version of the slot ledger the jobs table's stream holds."""
    from boto3.dynamodb.types import TypeDeserializer

    from richdoc.jobs.keys import ledger_key

    streams = stack.client("dynamodbstreams")
    table = stack.client("dynamodb").describe_table(TableName=stack.outputs["JobsTableName"])
    arn = table["Table"]["LatestStreamArn"]
    [shard] = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    key, values = ledger_key(), []
    while iterator:
        answer = streams.get_records(ShardIterator=iterator, Limit=1000)
        for record in answer.get("Records", []):
            keys, image = record["dynamodb"].get("Keys", {}), record["dynamodb"].get("NewImage")
            if image and (keys["pk"]["S"], keys["sk"]["S"]) == (key["pk"], key["sk"]):
                values.append(int(TypeDeserializer().deserialize(image["running"])))
        if not answer.get("Records"):
            break
        iterator = answer.get("NextShardIterator")
    return values


def most_at_once(jobs: list[Any]) -> int:
    """The most jobs holding slots at one moment (a release before an admission at the
    same moment: the admission waited for it)."""
    moments = [(j.admitted_at, 1) for j in jobs] + [(j.released_at, -1) for j in jobs]
    held = most = 0
    for _, change in sorted(moments):
        held += change
        most = max(most, held)
    return most


def turnover_gaps(jobs: list[Any], capacity: int) -> list[float]:
    """For each admission after the first ``capacity``, the seconds since the release
    whose slot it took (releases matched to admissions in order): what a slot waits
    between one run and the next."""
    releases = sorted(j.released_at for j in jobs)
    gaps, taken = [], 0
    for admitted in sorted(j.admitted_at for j in jobs)[capacity:]:
        if taken < len(releases) and releases[taken] <= admitted:
            gaps.append(_seconds(releases[taken], admitted))
            taken += 1
        else:
            gaps.append(0.0)
    return gaps


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _ledger(stack: Any) -> Any:
    from richdoc.admission.slots import Ledger
    from richdoc.jobs.keys import ledger_key

    item = stack.jobs.table.get_item(Key=ledger_key(), ConsistentRead=True).get("Item")
    return Ledger.model_validate(item) if item else Ledger(exists=False)


def _settle(stack: Any, job_ids: list[str], timeout_s: float) -> dict[str, Any]:
    """Every job terminal, then every slot back (the stream's last releases)."""
    from richdoc_tools.local.runtime.loops import wait_until

    from richdoc.jobs.keys import ledger_key

    jobs = stack.wait_for_jobs(job_ids, timeout_s)

    def slots_back() -> bool:
        item = stack.jobs.table.get_item(Key=ledger_key(), ConsistentRead=True).get("Item", {})
        return int(item.get("running", 0)) == 0 and stack.notifications_delivered()

    wait_until(slots_back, 300, interval_s=0.5)
    return {job_id: stack.jobs.get(job_id) for job_id in jobs}


def _burst(mode: Mode, work: Path) -> dict[str, Any]:
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack

    from bench.awscalls import ApiCounter

    first, rest = (450, 49) if mode is Mode.FULL else (45, 14)
    counter = ApiCounter()
    counter.install()
    try:
        with EmbeddedStack(
            StackSettings(
                parameters={"MaxRunningJobs": str(CAPACITY)},
                log_path=work / "burst.log",
                schedules=False,
            )
        ) as stack:
            assert stack.runtime is not None
            counter.reset()
            invocations_before = len(stack.runtime.invocations)
            started = time.perf_counter()
            backfill = [
                stack.upload(Path(f"acme/{n:03d}.md"), key=f"acme/{n:03d}.md", body=_note(n)).job_id
                for n in range(first)
            ]
            lone = stack.upload(Path("globex/one.md"), key="globex/one.md", body=_note(0)).job_id
            backfill += [
                stack.upload(Path(f"acme/{n:03d}.md"), key=f"acme/{n:03d}.md", body=_note(n)).job_id
                for n in range(first, first + rest)
            ]
            job_ids = [*backfill, lone]
            jobs = _settle(stack, job_ids, timeout_s=6 * 3600)
            wall_s = time.perf_counter() - started
            calls = counter.snapshot()
            invocations = Counter(
                inv.logical_id for inv in stack.runtime.invocations[invocations_before:]
            )
            history = ledger_history(stack)
            ledger = _ledger(stack)
            dead_letters = int(
                stack.client("sqs").get_queue_attributes(
                    QueueUrl=stack.outputs["DeadLetterQueueUrl"],
                    AttributeNames=["ApproximateNumberOfMessages"],
                )["Attributes"]["ApproximateNumberOfMessages"]
            )
            throttles = sum(stack.runtime.reserved.throttled.values())
    finally:
        counter.uninstall()
    return {
        "jobs": jobs,
        "backfill": backfill,
        "lone": lone,
        "wall_s": wall_s,
        "calls": calls,
        "invocations": invocations,
        "history": history,
        "ledger_running": ledger.running,
        "ledger_holders": len(ledger.holders),
        "dead_letters": dead_letters,
        "throttles": throttles,
    }


def _faulted(mode: Mode, work: Path) -> dict[str, Any]:
    from richdoc_tools.local.faults.injected import FaultSettings
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack

    count = 100 if mode is Mode.FULL else 20
    with EmbeddedStack(
        StackSettings(
            parameters={"MaxRunningJobs": str(CAPACITY)},
            log_path=work / "faulted.log",
            schedules=False,
            injected_faults=FaultSettings(rate=FAULT_RATE, seed=FAULT_SEED),
        )
    ) as stack:
        job_ids = [
            stack.upload(
                Path(f"faulted/{n:03d}.md"), key=f"faulted/{n:03d}.md", body=_note(n)
            ).job_id
            for n in range(count)
        ]
        # The sweep's schedule, a while after the runs: the backstop for what a fault
        # left open (a lost status event, a dropped asynchronous invocation).
        jobs = stack.wait_for_jobs(job_ids, 6 * 3600)
        for _ in range(3):
            stack.fire_schedules(at=datetime.now(UTC) + timedelta(hours=4))
            jobs = _settle(stack, job_ids, timeout_s=600)
        ledger = _ledger(stack)
        injected = stack.injector.report()
    statuses = Counter(str(job.status) if job else "missing" for job in jobs.values())
    return {
        "count": count,
        "statuses": dict(statuses),
        "open": sum(1 for job in jobs.values() if job is None or not job.status.terminal),
        "slots_held": ledger.running,
        "holders": len(ledger.holders),
        "injected": injected,
    }


def run(mode: Mode) -> ItemResult:
    result = ItemResult("admission", "12. Admission: a burst of two tenants at two slots")
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-admission-") as tmp:
        burst = _burst(mode, Path(tmp))
        faulted = _faulted(mode, Path(tmp))

    jobs = burst["jobs"]
    records = [job for job in jobs.values() if job is not None]
    n = len(records)
    statuses = Counter(str(job.status) for job in records)
    runs = [_seconds(j.admitted_at, j.released_at) for j in records]
    mean_run = statistics.fmean(runs)
    first = min(j.admitted_at for j in records)
    last = max(j.released_at for j in records)
    elapsed = _seconds(first, last)
    limit = CAPACITY / mean_run  # documents a second
    achieved = n / elapsed
    lone = jobs[burst["lone"]]
    overtaking = [
        j
        for j in (jobs[i] for i in burst["backfill"])
        if lone.queued_at < j.admitted_at < lone.admitted_at
    ]
    # A slot turnover: a slot frees every mean run / capacity seconds, each admitting one.
    waited_s = _seconds(lone.queued_at, lone.admitted_at)
    gaps = turnover_gaps(records, CAPACITY)
    # Where the capacity went: every slot's time from the first admission to the last
    # release, against the runs' own time in it.
    idle_s = CAPACITY * elapsed - sum(runs)
    turnovers = len(overtaking)
    peak_history = max(burst["history"], default=0)
    peak_records = most_at_once(records)
    calls = burst["calls"]

    def per_doc(kind: str) -> dict[str, float]:
        return {op: round(count / n, 2) for op, count in sorted(calls.get(kind, {}).items())}

    starter, dispatcher = (
        per_doc("function:StarterFunction"),
        per_doc("function:DispatcherFunction"),
    )
    invocations = {lid: round(count / n, 2) for lid, count in sorted(burst["invocations"].items())}

    result.targets += [
        Target(
            "12a",
            "dead letters of the burst",
            burst["dead_letters"],
            0,
            "count",
            "messages on the dead-letter queue at the end",
        ),
        Target(
            "12b",
            "most slots held at once (the ledger's every version)",
            peak_history,
            CAPACITY,
            "count",
            "max of running over the ledger's stream records",
        ),
        Target(
            "12c",
            "most jobs holding slots at once (admitted/released times)",
            peak_records,
            CAPACITY,
            "count",
            "sweep over the jobs' admitted_at and released_at",
        ),
        Target(
            "12d",
            "throughput against the capacity's limit",
            round(achieved / limit, 3),
            THROUGHPUT_TARGET,
            "x",
            f"{n} documents / elapsed against {CAPACITY} slots / mean run time",
            at_least=True,
        ),
        Target(
            "12e",
            "the second tenant's upload waited (slot turnovers)",
            turnovers,
            TURNOVERS_TARGET,
            "count",
            "first-tenant admissions between its queueing and its admission",
        ),
        Target(
            "12f",
            "slots held at the end",
            burst["ledger_running"] + burst["ledger_holders"],
            0,
            "count",
            "the ledger's running and holders",
        ),
        Target(
            "12g",
            "jobs left open or lost under faults at 5 %",
            faulted["open"],
            0,
            "count",
            f"{faulted['count']} documents, seed {FAULT_SEED}, the sweep fired",
        ),
        Target(
            "12h",
            "slots leaked under faults at 5 %",
            faulted["slots_held"] + faulted["holders"],
            0,
            "count",
            "the ledger's running and holders after the sweep",
        ),
    ]
    result.measurements = {
        "documents": n,
        "statuses": dict(statuses),
        "capacity": CAPACITY,
        "wall_s": round(burst["wall_s"], 1),
        "elapsed_s": round(elapsed, 1),
        "mean_run_s": round(mean_run, 3),
        "run_s_p50": round(statistics.median(runs), 3),
        "limit_per_s": round(limit, 4),
        "achieved_per_s": round(achieved, 4),
        "lone_waited_s": round(waited_s, 1),
        "turnover_gap_s": {
            "median": round(statistics.median(gaps), 3),
            "mean": round(statistics.fmean(gaps), 3),
            "max": round(max(gaps), 3),
        },
        "idle_slot_s": round(idle_s, 1),
        "idle_in_turnovers_s": round(sum(gaps), 1),
        "lone_overtaken_by": turnovers,
        "ledger_versions": len(burst["history"]),
        "throttles": burst["throttles"],
        "per_document": {"starter": starter, "dispatcher": dispatcher, "invocations": invocations},
        "faulted": {k: v for k, v in faulted.items() if k != "injected"},
        "faults_injected": faulted["injected"],
    }
    result.tables += [
        Table(
            "The burst",
            [
                "documents",
                "capacity",
                "mean run s",
                "elapsed s",
                "limit doc/s",
                "achieved doc/s",
                "ratio",
            ],
            [
                [
                    n,
                    CAPACITY,
                    fmt(mean_run),
                    fmt(elapsed),
                    fmt(limit),
                    fmt(achieved),
                    fmt(achieved / limit),
                ]
            ],
        ),
        Table(
            "Admission's calls per document",
            ["caller", "operation", "per document"],
            [["starter", op, v] for op, v in starter.items()]
            + [["dispatcher", op, v] for op, v in dispatcher.items()],
        ),
        Table(
            "Invocations per document",
            ["function", "per document"],
            [[lid, v] for lid, v in invocations.items()],
        ),
    ]
    result.notes.append(
        f"The second tenant's upload waited {waited_s:.1f} s, overtaken by {turnovers} of "
        f"the first tenant's jobs; {burst['throttles']} throttles; faults: {faulted['statuses']}."
    )
    return result


if __name__ == "__main__":
    sys.exit(run(Mode.QUICK if "--quick" in sys.argv else Mode.FULL).print_and_exit_code())
