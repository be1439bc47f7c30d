"""What the commands print: every table and JSON document of the command line.

This is the one module that reads the fields of job and attempt records (``Job``,
``Attempt``) for display. The JSON documents keep their keys and shapes: scripts read
them. Every user-controlled value reaches the terminal through ``richdoc_tools.terminal``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Column, Table

from richdoc_tools.terminal import cell, markup, visible

if TYPE_CHECKING:
    from richdoc.jobs import Attempt, Job, Progress
    from richdoc_tools.cancel import CancelResult
    from richdoc_tools.dlq import DeadLetterListing
    from richdoc_tools.failures import FailureGroup
    from richdoc_tools.operator import AmbiguousJobId
    from richdoc_tools.redrive import RedriveFilter, RedriveReport, RedriveResult
    from richdoc_tools.run import RunResult
    from richdoc_tools.tiers import Spread, TierReport

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


def open_jobs_label(progress: Sequence[Progress]) -> str:
    """What the jobs still open are doing, on `richdoc run`'s progress bar: how many in
    each phase (the shards finished of a sharded parse, when one is)."""
    counts: dict[str, int] = {}
    for seen in progress:
        label = seen.describe()
        counts[label] = counts.get(label, 0) + 1
    return " · ".join(label if n == 1 else f"{n} {label}" for label, n in sorted(counts.items()))


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
    console.print(f"progress: {markup(job.progress().describe())}")
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
        "peak/ceiling MB",
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
            cell(_memory(a)),
            cell(a.duration_ms),
            cell(a.started_at),
            cell(a.reason, limit=80),
        )
    console.print(table)


def _memory(attempt: Attempt) -> str | None:
    if attempt.mem_ceiling_mb is None:
        return None
    return f"{_count(attempt.peak_rss_mb)}/{attempt.mem_ceiling_mb}"


def watch_line(job: Job, *, as_json: bool) -> None:
    """One change of a watched job: a JSON line, or the time, status and progress."""
    if as_json:
        print(json.dumps(job.to_dict(), sort_keys=True, default=str), flush=True)
        return
    line = f"{job.updated_at or '-'}  {job.status}  run {job.run}  {job.progress().describe()}"
    failure = job.failure
    if failure is not None:
        line += f"  {failure.kind}: {failure.reason}"
    if job.cancel is not None:
        line += f"  by {job.cancel.by}" + (f": {job.cancel.reason}" if job.cancel.reason else "")
    print(visible(line), flush=True)


def cancel_results(results: Sequence[CancelResult], *, as_json: bool) -> None:
    if as_json:
        _print_json([r.model_dump(mode="json") for r in results])
        return
    table = Table(
        Column("job id", no_wrap=True, min_width=32), "outcome", "status", "run", "execution"
    )
    for r in results:
        table.add_row(
            cell(r.job_id or r.requested),
            cell(r.outcome),
            cell(r.status),
            cell(r.run),
            cell(r.execution),
        )
    Console().print(table)
    for r in results:
        print(visible(f"{r.job_id or r.requested}: {r.detail}"))


# ---- richdoc jobs redrive ------------------------------------------------------------------


def redrive_count(
    matched: int, wanted: RedriveFilter, rate_per_s: float, *, dry_run: bool, as_json: bool
) -> None:
    """The count, printed before anything is sent (on stderr with --json)."""
    described = ", ".join(
        f"{name} {value}"
        for name, value in wanted.model_dump(mode="json").items()
        if value is not None
    )
    action = "dry run: nothing is sent" if dry_run else f"sending at most {rate_per_s:g}/s"
    print(
        visible(f"{matched} job(s) match {described}; {action}"),
        file=sys.stderr if as_json else sys.stdout,
        flush=True,
    )


def redrive_line(result: RedriveResult) -> None:
    """One job of a redrive by filter, as it is done."""
    print(visible(f"{result.job_id}  {result.outcome}  {result.detail}"), flush=True)


def redrive_report(report: RedriveReport, *, as_json: bool) -> None:
    if as_json:
        _print_json(report.model_dump(mode="json"))
        return
    if report.rate_per_s is None:  # by id: a line each (by filter: printed as they went)
        for result in report.results:
            redrive_line(result)
    counts: dict[str, int] = {}
    for result in report.results:
        counts[result.outcome] = counts.get(result.outcome, 0) + 1
    summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    print(f"{report.matched} job(s): {summary or 'nothing to do'}")


# ---- richdoc jobs failures, tiers ----------------------------------------------------------


def failure_groups(groups: Sequence[FailureGroup], *, as_json: bool) -> None:
    if as_json:
        _print_json([g.model_dump(mode="json") for g in groups])
        return
    table = Table(
        Column("signature", no_wrap=True),
        "count",
        "kind",
        "feature",
        "error",
        "template",
        "first seen",
        "last seen",
        Column("example job", no_wrap=True, min_width=32),
    )
    for g in groups:
        table.add_row(
            cell(g.signature),
            cell(g.count),
            cell(g.kind),
            cell(g.feature),
            cell(g.error),
            cell(g.template, limit=100),
            cell(g.first_seen),
            cell(g.last_seen),
            cell(g.examples[0] if g.examples else None),
        )
    Console().print(table)
    print(f"{sum(g.count for g in groups)} failed job(s) in {len(groups)} group(s)")


def _spread(spread: Spread | None) -> str | None:
    if spread is None:
        return None
    return f"{spread.min:g} / {spread.median:g} / {spread.max:g}"


def tier_report(report: TierReport, *, as_json: bool) -> None:
    if as_json:
        _print_json(report.model_dump(mode="json"))
        return
    table = Table(
        "tier",
        "succeeded here",
        "pages min/median/max",
        "size MB min/median/max",
        "parse attempts",
        "resource limits",
        "escalation rate",
        "peak RSS MB min/median/max",
        "ceiling MB",
    )
    for row in report.tiers:
        rate = None if row.escalation_rate is None else f"{row.escalation_rate:.1%}"
        table.add_row(
            cell(row.tier),
            cell(row.succeeded),
            cell(_spread(row.pages)),
            cell(_spread(row.size_mb)),
            cell(row.attempts),
            cell(row.resource_limits),
            cell(rate),
            cell(_spread(row.peak_rss_mb)),
            cell(", ".join(str(c) for c in row.mem_ceiling_mb) or None),
        )
    Console().print(table)
    print(f"{report.jobs} job(s) read; {report.succeeded} succeeded with a known parse tier")


# ---- richdoc dlq ---------------------------------------------------------------------------


def dead_letters(listing: DeadLetterListing, *, as_json: bool) -> None:
    letters = listing.letters
    others = (
        f"{listing.others} other message(s) wait on the dead-letter queue that no job "
        "record names (SQS moved them after the starter failed on every delivery, or "
        "they are malformed): richdoc dlq list --peek receives them to show them"
        if listing.others
        else None
    )
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
                    "received": d.received,
                }
                for d in letters
            ]
        )
        if others:
            print(f"richdoc dlq list: {others}", file=sys.stderr)
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
    if listing.received:
        print(f"{len(letters)} message(s) on the dead-letter queue")
    else:
        print(f"{len(letters)} dead-lettered run(s) waiting on the dead-letter queue")
    if others:
        print(others)
