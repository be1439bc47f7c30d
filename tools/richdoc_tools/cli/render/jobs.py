"""What ``richdoc jobs`` prints: the job list, one job with its shards and attempts, a
watched job's changes, cancels, redrives, the failure groups, the tier ladder, a
deletion; and the usage error for an ambiguous job id prefix."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import Col, count_text, print_json, print_table
from richdoc_tools.terminal import markup, visible

if TYPE_CHECKING:
    from richdoc.deletion import Deleted
    from richdoc.jobs import Attempt, Job
    from richdoc_tools.ops.backlog import BacklogPlace
    from richdoc_tools.ops.cancel import CancelResult
    from richdoc_tools.ops.failures import FailureGroup
    from richdoc_tools.ops.job_document import JobDocument
    from richdoc_tools.ops.jobs import AmbiguousJobId
    from richdoc_tools.ops.redrive import JobRedriveResult, RedriveFilter, RedriveReport
    from richdoc_tools.ops.tiers import Spread, TierReport

# An ambiguous job id prefix lists this many of the jobs it matches.
AMBIGUOUS_SHOWN = 10


# Whole job ids, never cut: they are what `richdoc jobs show` takes.
JOB_COLUMNS = (
    Col("job id", whole=True),
    "status",
    "run",
    "stage",
    "tier",
    "key",
    "failure",
    "queue",  # a waiting job's place in its backlog; the published header, kept
    "updated",
)


def jobs_list(
    jobs: Sequence[Job], *, as_json: bool, places: Mapping[str, BacklogPlace] | None = None
) -> None:
    """The jobs; those waiting in the backlog with their place there (``places``)."""
    from richdoc_tools.ops.backlog import place_label
    from richdoc_tools.ops.job_document import with_place

    found = places or {}
    if as_json:
        print_json([with_place(j.to_dict(), found.get(j.job_id)) for j in jobs])
        return
    rows: list[list[object]] = []
    for j in jobs:
        failure = j.failure
        kind = failure.kind if failure else None
        label = f"{kind} [{failure.feature}]" if failure and failure.feature else kind
        place = place_label(found.get(j.job_id), j.tenant)
        rows.append(
            [j.job_id, j.status, j.run, j.stage, j.tier, j.source.key, label, place, j.updated_at]
        )
    print_table(JOB_COLUMNS, rows, Console())


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


SHARD_COLUMNS = ("run", "shard pages", "attempts", "tier", "outcome", "cached")
ATTEMPT_COLUMNS = (
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
    Col("reason", limit=80),
)


def _attempt_row(a: Attempt) -> list[object]:
    return [
        a.run,
        a.seq,
        a.stage,
        a.attempt,
        a.tier,
        a.pages,
        a.memory_mb,
        a.outcome,
        a.cached,
        _memory(a),
        a.duration_ms,
        a.started_at,
        a.reason,
    ]


RECORD_COLUMNS = ("field", "value")


def record_rows(record: Mapping[str, object], within: str = "") -> list[list[object]]:
    """A job record as rows of a table: a field and its value, the fields of a nested
    object under dotted names (``failure.kind``), a list as its JSON."""
    rows: list[list[object]] = []
    for name, value in record.items():
        if isinstance(value, Mapping) and value:
            rows += record_rows(value, f"{within}{name}.")
        elif isinstance(value, list | tuple | Mapping):
            rows.append([f"{within}{name}", json.dumps(value, default=str)])
        else:
            rows.append([f"{within}{name}", value])
    return rows


def job_show(document: JobDocument, *, as_json: bool) -> None:
    """The job's public JSON (``--json``), or its record, its shards and its attempts: on
    a terminal the record as JSON and the tables; in a pipe all three as tab-separated
    rows (the record as field and value), each block ended by a blank line."""
    from richdoc_tools.ops.shards import shard_parses

    if as_json:
        print_json(document.model_dump(mode="json"))
        return
    job, attempts = document.job, document.attempts
    console = Console()
    tables: list[tuple[Sequence[Col | str], list[list[object]]]] = []
    if console.is_terminal:
        # JSON-encoded, so control characters in keys or reasons arrive escaped.
        console.print_json(json.dumps(job.to_dict(), default=str))
        console.print(f"progress: {markup(job.progress().describe())}")
    else:
        tables.append((RECORD_COLUMNS, record_rows(job.to_dict())))
    shards: list[list[object]] = [
        [s.run, s.pages, s.attempts, s.tier, s.outcome, s.cached]
        for s in shard_parses(list(attempts))
    ]
    if shards:
        tables.append((SHARD_COLUMNS, shards))
    tables.append((ATTEMPT_COLUMNS, [_attempt_row(a) for a in attempts]))
    for n, (columns, rows) in enumerate(tables):
        if n and not console.is_terminal:
            print()  # a blank line between two blocks of rows
        print_table(columns, rows, console)


def _memory(attempt: Attempt) -> str | None:
    if attempt.mem_ceiling_mb is None:
        return None
    return f"{count_text(attempt.peak_rss_mb)}/{attempt.mem_ceiling_mb}"


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
        print_json([r.model_dump(mode="json") for r in results])
        return
    print_table(
        (Col("job id", whole=True), "outcome", "status", "run", "execution"),
        [[r.job_id or r.requested, r.outcome, r.status, r.run, r.execution] for r in results],
        Console(),
    )
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


def redrive_line(result: JobRedriveResult) -> None:
    """One job of a redrive by filter, as it is done."""
    print(visible(f"{result.job_id}  {result.outcome}  {result.detail}"), flush=True)


def redrive_report(report: RedriveReport, *, as_json: bool) -> None:
    if as_json:
        print_json(report.model_dump(mode="json"))
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


FAILURE_GROUP_COLUMNS = (
    Col("signature", whole=True),
    "count",
    "kind",
    "feature",
    "error",
    Col("template", limit=100),
    "first seen",
    "last seen",
    Col("example job", whole=True),
)


def failure_groups(groups: Sequence[FailureGroup], *, as_json: bool) -> None:
    if as_json:
        print_json([g.model_dump(mode="json") for g in groups])
        return
    print_table(
        FAILURE_GROUP_COLUMNS,
        [
            [
                g.signature,
                g.count,
                g.kind,
                g.feature,
                g.error,
                g.template,
                g.first_seen,
                g.last_seen,
                g.examples[0] if g.examples else None,
            ]
            for g in groups
        ],
        Console(),
    )
    print(f"{sum(g.count for g in groups)} failed job(s) in {len(groups)} group(s)")


def _spread(spread: Spread | None) -> str | None:
    if spread is None:
        return None
    return f"{spread.min:g} / {spread.median:g} / {spread.max:g}"


TIER_COLUMNS = (
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


def tier_report(report: TierReport, *, as_json: bool) -> None:
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    rows: list[list[object]] = []
    for row in report.tiers:
        rate = None if row.escalation_rate is None else f"{row.escalation_rate:.1%}"
        rows.append(
            [
                row.tier,
                row.succeeded,
                _spread(row.pages),
                _spread(row.size_mb),
                row.attempts,
                row.resource_limits,
                rate,
                _spread(row.peak_rss_mb),
                ", ".join(str(c) for c in row.mem_ceiling_mb) or None,
            ]
        )
    print_table(TIER_COLUMNS, rows, Console())
    print(f"{report.jobs} job(s) read; {report.succeeded} succeeded with a known parse tier")


def job_deleted(deleted: Deleted, *, with_source: bool, as_json: bool) -> None:
    job, purged = deleted.job, deleted.purged
    source = job.source
    source_deleted = with_source and source.version_id is not None
    if as_json:
        print_json(
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
