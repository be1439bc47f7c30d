"""What the commands print: every table and JSON document of the command line.

This is the one module that reads the fields of job and attempt records (``Job``,
``Attempt``) for display. The JSON documents keep their keys and shapes: scripts read
them. Every user-controlled value reaches the terminal through ``richdoc_tools.terminal``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Column, Table

from richdoc_tools.terminal import cell, markup, visible

if TYPE_CHECKING:
    from richdoc.deletion import Deleted
    from richdoc.jobs import Attempt, Job
    from richdoc_tools.dlq import DeadLetter
    from richdoc_tools.operator import AmbiguousJobId
    from richdoc_tools.preflight import Finding
    from richdoc_tools.run import RunResult

RUN_COLUMNS = (
    "file",
    "job id",
    "status",
    "failure kind",
    "feature",
    "attempts",
    "tier",
    "shards",
    "nodes",
    "edges",
    "spans",
    "ambiguities",
    "seconds",
)
# An ambiguous job id prefix lists this many of the jobs it matches.
AMBIGUOUS_SHOWN = 10


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


# ---- richdoc run ---------------------------------------------------------------------------


def progress_label(job: Job) -> str:
    """A finished job on `richdoc run`'s progress bar (rich markup)."""
    return f"{markup(job.source.key)} {job.status}"


def run_results(results: Sequence[RunResult], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
        return
    table = Table(*RUN_COLUMNS)
    for r in results:
        c = r.counts
        table.add_row(
            cell(r.key),
            cell(r.job_id[:12]),  # a prefix `richdoc jobs show` accepts
            cell(r.status),
            cell(r.failure_kind),
            cell(r.feature),
            cell(len(r.attempts)),
            cell(r.tier),
            cell(r.shards),
            cell(c.nodes),
            cell(c.edges),
            cell(c.spans),
            cell(" ".join([_count(c.ambiguities), *r.ambiguity_kinds])),
            cell(r.seconds),
        )
    out = Console()
    # Piped or in CI logs: wide enough that no column is cut.
    (out if out.is_terminal else Console(width=220)).print(table)


# ---- richdoc jobs --------------------------------------------------------------------------


def jobs_list(jobs: Sequence[Job], *, as_json: bool) -> None:
    if as_json:
        _print_json([j.to_dict() for j in jobs])
        return
    # Whole job ids, never cut: they are what `richdoc jobs show` takes.
    table = Table(
        Column("job id", no_wrap=True, min_width=32),
        "status",
        "run",
        "stage",
        "tier",
        "key",
        "failure",
        "updated",
    )
    for j in jobs:
        failure = j.failure
        kind = failure.kind if failure else None
        label = f"{kind} [{failure.feature}]" if failure and failure.feature else kind
        table.add_row(
            cell(j.job_id),
            cell(j.status),
            cell(j.run),
            cell(j.stage),
            cell(j.tier),
            cell(j.source.key),
            cell(label),
            cell(j.updated_at),
        )
    Console().print(table)


def ambiguous_job_id(exc: AmbiguousJobId) -> str:
    """The usage error for a job id prefix several jobs share: some of them, and what to do."""
    shown = exc.candidates[:AMBIGUOUS_SHOWN]
    lines = [f"{j.job_id}  {j.status}  {visible(j.source.key)}" for j in shown]
    more = len(exc.candidates) - len(shown)
    return (
        f"job id prefix {visible(exc.prefix)!r} matches {len(exc.candidates)} jobs:\n  "
        + "\n  ".join(lines)
        + (f"\n  ... and {more} more" if more else "")
        + "\ngive more characters of the job id"
    )


def job_show(job: Job, attempts: Sequence[Attempt], *, as_json: bool) -> None:
    from richdoc_tools.operator import shard_parses

    if as_json:
        _print_json({**job.to_dict(), "attempts": [a.to_dict() for a in attempts]})
        return
    console = Console()
    # JSON-encoded, so control characters in keys or reasons arrive escaped.
    console.print_json(json.dumps(job.to_dict(), default=str))
    shards = shard_parses(list(attempts))
    if shards:
        shard_table = Table("run", "shard pages", "attempts", "tier", "outcome", "cached")
        for shard in shards:
            shard_table.add_row(
                cell(shard.run),
                cell(shard.pages),
                cell(shard.attempts),
                cell(shard.tier),
                cell(shard.outcome),
                cell(shard.cached),
            )
        console.print(shard_table)
    table = Table(
        "run",
        "#",
        "stage",
        "attempt",
        "tier",
        "pages",
        "memory",
        "outcome",
        "cached",
        "ms",
        "started",
        "reason",
    )
    for a in attempts:
        table.add_row(
            cell(a.run),
            cell(a.seq),
            cell(a.stage),
            cell(a.attempt),
            cell(a.tier),
            cell(a.pages),
            cell(a.memory_mb),
            cell(a.outcome),
            cell(a.cached),
            cell(a.duration_ms),
            cell(a.started_at),
            cell(a.reason, limit=80),
        )
    console.print(table)


def job_deleted(deleted: Deleted, *, with_source: bool, as_json: bool) -> None:
    job, purged = deleted.job, deleted.purged
    source = job.source
    source_deleted = with_source and source.version_id is not None
    if as_json:
        _print_json(
            {
                "job": job.to_dict(),
                "deleted": {
                    "run_outputs": purged.run_outputs,
                    "parse_artifacts": purged.parse_artifacts,
                    "parse_artifacts_kept": purged.shared_kept,
                    "source": source_deleted,
                },
            }
        )
        return
    where = f"s3://{source.bucket}/{source.key}"
    print(f"job {job.job_id} ({visible(where)}) is {job.status}")
    print(f"  run outputs deleted: {purged.run_outputs}")
    if purged.shared_kept:
        print("  parse artifacts kept: another job with the same bytes uses them")
    else:
        print(f"  parse artifacts deleted: {purged.parse_artifacts}")
    if source_deleted:
        print(f"  source version {visible(source.version_id)} deleted from the ingest bucket")


# ---- richdoc dlq ---------------------------------------------------------------------------


def dead_letters(letters: Sequence[DeadLetter], *, as_json: bool) -> None:
    if as_json:
        _print_json(
            [
                {
                    "message_id": d.message_id,
                    "job_id": d.job_id,
                    "run": d.run,
                    "kind": d.kind,
                    "feature": d.feature,
                    "reason": d.reason,
                    "receive_count": d.receive_count,
                    "body": d.body,
                }
                for d in letters
            ]
        )
        return
    table = Table(
        "message id",
        Column("job id", no_wrap=True, min_width=32),
        "run",
        "kind",
        "feature",
        "reason",
    )
    for d in letters:
        table.add_row(
            cell(d.message_id),
            cell(d.job_id),
            cell(d.run),
            cell(d.kind),
            cell(d.feature),
            cell(d.reason, limit=100),
        )
    Console().print(table)
    print(f"{len(letters)} message(s) on the dead-letter queue")


# ---- richdoc deploy --------------------------------------------------------------------------


def deploy_check(
    findings: Sequence[Finding], report: Mapping[str, object], *, as_json: bool
) -> None:
    """``richdoc deploy check``: ``report`` as JSON, or one line per finding and what
    fixes a failing one."""
    if as_json:
        _print_json(report)
        return
    marks = {"ok": "ok   ", "fail": "FAIL ", "check": "CHECK"}
    for finding in findings:
        print(f"{marks[finding.status]} {finding.check}: {visible(finding.says)}")
        if finding.fix and finding.status != "ok":
            print(f"      fix: {visible(finding.fix)}")
    if all(finding.status != "fail" for finding in findings):
        print("nothing found that would make the deploy fail")
    else:
        print("the deploy would fail: apply the fixes above, then run this check again")
