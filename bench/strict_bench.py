"""Item 11, the strict embedded stack's cost per request: the same requests a function
makes (DynamoDB GetItem and UpdateItem of a job item, S3 PutObject and GetObject of a small
artifact) on a strict stack, signed as the function's role and checked by IAM, the
transaction-conflict wrapper and the validations, against a lenient stack, where they are
an operator's and nothing is checked.

The two stacks alternate in one process (each round starts the strict one, then the
lenient one, or the other way round), so both see the same machine; the ratio is the
median of the per-round ratios of the mean CPU time a request takes (the checks are CPU
work; on a shared machine wall time mostly measures the neighbours; it is reported too).
Target: at most 1.3x.

    python -m bench.strict_bench [--quick]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/strict_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling"), str(_root / "tools")]

from bench.common import ItemResult, Mode, Sample, Table, Target, fmt, median_s, ratio, timed

TARGET = 1.3
FUNCTION = "ProjectFunction"  # may read docling/*, write jobs/*, and the jobs table


def _requests(stack: Any, count: int) -> Sample:
    """``count`` rounds of the four requests, as the function (strict) or an operator."""
    from richdoc_tools.local.requests import callers

    table = stack.outputs["JobsTableName"]
    bucket = stack.outputs["ArtifactBucketName"]
    dynamodb, s3 = stack.client("dynamodb"), stack.client("s3")
    key = {"pk": {"S": "JOB#bench"}, "sk": {"S": "JOB"}}
    dynamodb.put_item(TableName=table, Item={**key, "job_status": {"S": "RUNNING"}})
    s3.put_object(Bucket=bucket, Key="docling/bench/doc.json", Body=b"{}")
    principal = stack.access.principal(FUNCTION) if stack.access else None

    def work() -> None:
        with callers.acting_as(callers.Caller(principal)):
            for i in range(count):
                dynamodb.get_item(TableName=table, Key=key)
                dynamodb.update_item(
                    TableName=table,
                    Key=key,
                    UpdateExpression="SET n = :n",
                    ExpressionAttributeValues={":n": {"N": str(i)}},
                )
                s3.put_object(Bucket=bucket, Key=f"jobs/bench/run-1/{i % 10}.json", Body=b"{}")
                s3.get_object(Bucket=bucket, Key="docling/bench/doc.json")["Body"].read()

    work()  # warm: the first requests build clients' caches
    sample = timed(work, collect=True)
    requests = 4 * count
    return Sample(sample.wall / requests, sample.cpu / requests)


def _round(strict: bool, count: int, log: Path) -> Sample:
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack

    with EmbeddedStack(StackSettings(log_path=log, schedules=False, strict=strict)) as stack:
        if strict:
            assert stack.access is not None, "a strict stack assumes the roles"
        return _requests(stack, count)


def run(mode: Mode) -> ItemResult:
    rounds, count = (2, 50) if mode is Mode.QUICK else (5, 250)
    samples: dict[str, list[Sample]] = {"strict": [], "lenient": []}
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-strict-") as tmp:
        for index in range(rounds):
            order = ("strict", "lenient") if index % 2 == 0 else ("lenient", "strict")
            for name in order:
                log = Path(tmp) / f"{name}-{index}.log"
                samples[name].append(_round(name == "strict", count, log))
    measured = ratio(samples["strict"], samples["lenient"])
    per_request = {name: median_s(values) for name, values in samples.items()}
    return ItemResult(
        name="strict_stack",
        title="Strict embedded stack: the cost of AWS's rules per request",
        targets=[
            Target(
                id="11",
                description="a function's request on the strict stack against the lenient",
                measured=measured["cpu"],
                limit=TARGET,
                unit="x",
                basis=f"median of {rounds} rounds' ratio of the mean CPU time of "
                f"{4 * count} requests (GetItem, UpdateItem, PutObject, GetObject)",
            )
        ],
        measurements={"per_request_s": per_request, "ratio": measured},
        tables=[
            Table(
                title="Mean time per request (median over rounds)",
                headers=["stack", "wall ms", "CPU ms"],
                rows=[
                    [name, fmt(values["wall"] * 1000), fmt(values["cpu"] * 1000)]
                    for name, values in per_request.items()
                ]
                + [["strict / lenient", fmt(measured["wall"]), fmt(measured["cpu"])]],
            )
        ],
    )


if __name__ == "__main__":
    sys.exit(run(Mode.QUICK if "--quick" in sys.argv else Mode.FULL).print_and_exit_code())
