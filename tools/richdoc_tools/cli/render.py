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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Column, Table

from richdoc_tools.terminal import cell, markup, visible

if TYPE_CHECKING:
    from richdoc.jobs import Attempt, Job
    from richdoc_tools.dlq import DeadLetter
    from richdoc_tools.operator import AmbiguousJobId
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
        a.duration_ms,
        a.started_at,
        a.reason,
    ]


def job_show(job: Job, attempts: Sequence[Attempt], *, as_json: bool) -> None:
    from richdoc_tools.operator import shard_parses

    if as_json:
        _print_json({**job.to_dict(), "attempts": [a.to_dict() for a in attempts]})
        return
    console = Console()
    # JSON-encoded, so control characters in keys or reasons arrive escaped.
    console.print_json(json.dumps(job.to_dict(), default=str))
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


# ---- richdoc dlq ---------------------------------------------------------------------------


DEAD_LETTER_COLUMNS = (
    "message id",
    _Col("job id", whole=True),
    "run",
    "kind",
    "feature",
    _Col("reason", limit=100),
)


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
    rows = [[d.message_id, d.job_id, d.run, d.kind, d.feature, d.reason] for d in letters]
    _print_table(DEAD_LETTER_COLUMNS, rows, Console())
    print(f"{len(letters)} message(s) on the dead-letter queue")
