"""What the commands print: every table and JSON document of the command line.

This is the one module that reads the fields of job and attempt records (``Job``,
``Attempt``) for display. The JSON documents keep their keys and shapes: scripts read
them. Every user-controlled value reaches the terminal through ``richdoc_tools.terminal``.

Tables are rich tables on a terminal. Anywhere else (``| less``, ``| grep``, a CI log)
rich would fit them into 80 columns and cut the values, so they are printed as
tab-separated rows under a header line, every value whole.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Column, Table

from richdoc_tools.terminal import cell, markup, visible

if TYPE_CHECKING:
    from richdoc.deletion import Deleted
    from richdoc.jobs import Attempt, Job, Progress
    from richdoc_tools.ops.cancel import CancelResult
    from richdoc_tools.ops.dead_letter_queue.acting import Taken
    from richdoc_tools.ops.dead_letter_queue.reading import DeadLetterListing
    from richdoc_tools.ops.events import LoggedEvent, Republished
    from richdoc_tools.ops.failures import FailureGroup
    from richdoc_tools.ops.job_document import JobDocument
    from richdoc_tools.ops.jobs import AmbiguousJobId
    from richdoc_tools.ops.redrive import JobRedriveResult, RedriveFilter, RedriveReport
    from richdoc_tools.ops.tiers import Spread, TierReport
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


@dataclass(frozen=True)
class _Col:
    """A column: its header, and how a terminal shows it (values cut to ``limit``
    characters; ``whole``: never wrapped, as job ids that `richdoc jobs show` takes)."""

    header: str
    limit: int | None = None
    whole: bool = False


def _print_table(
    columns: Sequence[_Col | str], rows: Sequence[Sequence[object]], console: Console
) -> None:
    cols = [c if isinstance(c, _Col) else _Col(c) for c in columns]
    if not console.is_terminal:
        # visible() spells tabs and newlines out, so a value never splits a row.
        lines = [[c.header for c in cols]]
        lines += [["-" if v is None else visible(v) for v in row] for row in rows]
        print("".join("\t".join(line) + "\n" for line in lines), end="")
        return
    table = Table(
        *(Column(c.header, no_wrap=True, min_width=32) if c.whole else c.header for c in cols)
    )
    for row in rows:
        table.add_row(*(cell(v, limit=c.limit) for c, v in zip(cols, row, strict=True)))
    console.print(table)


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
    rows: list[list[object]] = []
    for r in results:
        c = r.counts
        rows.append(
            [
                r.key,
                r.job_id[:12],  # a prefix `richdoc jobs show` accepts
                r.status,
                r.failure_kind,
                r.feature,
                len(r.attempts),
                r.tier,
                r.shards,
                c.nodes,
                c.edges,
                c.spans,
                " ".join([_count(c.ambiguities), *r.ambiguity_kinds]),
                r.seconds,
            ]
        )
    _print_table(RUN_COLUMNS, rows, Console())


# ---- richdoc jobs --------------------------------------------------------------------------


# Whole job ids, never cut: they are what `richdoc jobs show` takes.
JOB_COLUMNS = (
    _Col("job id", whole=True),
    "status",
    "run",
    "stage",
    "tier",
    "key",
    "failure",
    "updated",
)


def jobs_list(jobs: Sequence[Job], *, as_json: bool) -> None:
    if as_json:
        _print_json([j.to_dict() for j in jobs])
        return
    rows: list[list[object]] = []
    for j in jobs:
        failure = j.failure
        kind = failure.kind if failure else None
        label = f"{kind} [{failure.feature}]" if failure and failure.feature else kind
        rows.append([j.job_id, j.status, j.run, j.stage, j.tier, j.source.key, label, j.updated_at])
    _print_table(JOB_COLUMNS, rows, Console())


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
    _Col("reason", limit=80),
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


def job_show(document: JobDocument, *, as_json: bool) -> None:
    """The job's public JSON (``--json``), or its record, its shards and its attempts."""
    from richdoc_tools.ops.shards import shard_parses

    if as_json:
        _print_json(document.model_dump(mode="json"))
        return
    job, attempts = document.job, document.attempts
    console = Console()
    # JSON-encoded, so control characters in keys or reasons arrive escaped.
    console.print_json(json.dumps(job.to_dict(), default=str))
    if console.is_terminal:
        # In a pipe the JSON record above already says the phase and shard counts.
        console.print(f"progress: {markup(job.progress().describe())}")
    shards: list[list[object]] = [
        [s.run, s.pages, s.attempts, s.tier, s.outcome, s.cached]
        for s in shard_parses(list(attempts))
    ]
    tables: list[tuple[Sequence[_Col | str], list[list[object]]]] = []
    if shards:
        tables.append((SHARD_COLUMNS, shards))
    tables.append((ATTEMPT_COLUMNS, [_attempt_row(a) for a in attempts]))
    for columns, rows in tables:
        if not console.is_terminal:
            print()  # a blank line ends the JSON and each block of rows
        _print_table(columns, rows, console)


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
    _print_table(
        (_Col("job id", whole=True), "outcome", "status", "run", "execution"),
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


FAILURE_GROUP_COLUMNS = (
    _Col("signature", whole=True),
    "count",
    "kind",
    "feature",
    "error",
    _Col("template", limit=100),
    "first seen",
    "last seen",
    _Col("example job", whole=True),
)


def failure_groups(groups: Sequence[FailureGroup], *, as_json: bool) -> None:
    if as_json:
        _print_json([g.model_dump(mode="json") for g in groups])
        return
    _print_table(
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
        _print_json(report.model_dump(mode="json"))
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
    _print_table(TIER_COLUMNS, rows, Console())
    print(f"{report.jobs} job(s) read; {report.succeeded} succeeded with a known parse tier")


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


DEAD_LETTER_COLUMNS = (
    "message id",
    _Col("job id", whole=True),
    "run",
    "kind",
    "feature",
    _Col("reason", limit=100),
)


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
    rows = [[d.message_id, d.job_id, d.run, d.kind, d.feature, d.reason] for d in letters]
    _print_table(DEAD_LETTER_COLUMNS, rows, Console())
    if listing.received:
        print(f"{len(letters)} message(s) on the dead-letter queue")
    else:
        print(f"{len(letters)} dead-lettered run(s) waiting on the dead-letter queue")
    if others:
        print(others)


def discarded(chosen: Sequence[str], reason: str, taken: Taken | None, *, as_json: bool) -> None:
    """``richdoc dlq discard``: what was chosen and, unless it was a dry run (``taken``
    None), what became of each message."""
    if as_json:
        _print_json(
            {
                "reason": reason,
                "dry_run": taken is None,
                "chosen": list(chosen),
                "discarded": taken.done if taken else [],
                "declined": taken.declined if taken else [],
                "missing": taken.missing if taken else [],
            }
        )
        return
    if taken is None:
        print(f"dry run: {len(chosen)} message(s) would be discarded, nothing is deleted")
        for message_id in chosen:
            print(f"  {visible(message_id)}")
        return
    for outcome, ids in (
        ("discarded", taken.done),
        ("declined: its job has moved on (a newer run)", taken.declined),
        ("missing: not on the queue (gone already?)", taken.missing),
    ):
        for message_id in ids:
            print(visible(f"{message_id}  {outcome}"))
    print(
        f"{len(chosen)} message(s): {len(taken.done)} discarded, {len(taken.declined)} "
        f"declined, {len(taken.missing)} missing"
    )


# ---- richdoc deploy --------------------------------------------------------------------------


def deploy_check(
    findings: Sequence[Finding], report: Mapping[str, object], *, as_json: bool
) -> None:
    """``richdoc deploy check``: ``report`` as JSON, or one line per finding and what
    fixes a failing one."""
    if as_json:
        _print_json(report)
        return
    marks = {"ok": "ok   ", "fail": "FAIL ", "check": "CHECK", "warn": "WARN "}
    for finding in findings:
        print(f"{marks[finding.status]} {finding.check}: {visible(finding.says)}")
        if finding.fix and finding.status != "ok":
            print(f"      fix: {visible(finding.fix)}")
    if all(finding.status != "fail" for finding in findings):
        print("nothing found that would make the deploy fail")
    else:
        print("the deploy would fail: apply the fixes above, then run this check again")


# ---- richdoc events ------------------------------------------------------------------------


class EventTail:
    """``richdoc events tail``: each event as it comes, a line of its own (JSON, or the
    time, status, job, run, object key, failure and chunks), and a count at the end."""

    def __init__(self, *, as_json: bool) -> None:
        self.as_json = as_json
        self.shown = 0

    def add(self, logged: LoggedEvent) -> None:
        event = logged.event
        if event is None:
            print(
                "richdoc events tail: a line of the event log that is not a completion "
                f"event: {visible(logged.unreadable or '')}",
                file=sys.stderr,
                flush=True,
            )
            return
        self.shown += 1
        if self.as_json:
            print(json.dumps(event.model_dump(mode="json", by_alias=True), sort_keys=True))
            sys.stdout.flush()
            return
        detail = event.detail
        parts = [
            event.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            str(detail.status),
            f"job {detail.job_id[:12]} run {detail.run}",
            visible(detail.source.key),
        ]
        if detail.failure is not None:
            parts.append(str(detail.failure.kind))
            if detail.failure.feature:
                parts.append(visible(detail.failure.feature))
        if detail.counts is not None and detail.counts.chunks is not None:
            parts.append(f"{detail.counts.chunks} chunks")
        print("  ".join(parts), flush=True)

    def close(self) -> None:
        if not self.as_json:
            print(f"{self.shown} completion event(s)")


REPUBLISHED_COLUMNS = (_Col("job id", whole=True), "outcome", "status", "run", "event id")


def republished(results: Sequence[Republished], *, as_json: bool) -> None:
    if as_json:
        _print_json(
            [
                {
                    "job_id": r.job_id,
                    "outcome": r.outcome,
                    "event": r.detail.model_dump(mode="json", by_alias=True) if r.detail else None,
                }
                for r in results
            ]
        )
        return
    rows = [
        [
            r.job_id,
            r.outcome,
            r.detail.status if r.detail else None,
            r.detail.run if r.detail else None,
            r.detail.event_id if r.detail else None,
        ]
        for r in results
    ]
    _print_table(REPUBLISHED_COLUMNS, rows, Console())
