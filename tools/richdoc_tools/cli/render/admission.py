"""What the admission commands print: the backlog (``richdoc jobs backlog``), a waiting
job's place, and ``richdoc reprocess``'s report. JSON keeps its keys, tables become
tab-separated rows in a pipe (``tables``), user-controlled values (tenants, keys) reach
the terminal through ``richdoc_tools.terminal``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import print_json, print_table
from richdoc_tools.ops.backlog import duration
from richdoc_tools.terminal import markup

if TYPE_CHECKING:
    from richdoc_tools.ops.backlog import BacklogOutlook
    from richdoc_tools.ops.reprocess import ReprocessReport, ReprocessResult

TENANT_COLUMNS = ("tenant", "queue", "waiting", "oldest waiting", "slots held")


def backlog_outlook(outlook: BacklogOutlook, *, as_json: bool) -> None:
    if as_json:
        print_json(outlook.model_dump(mode="json"))
        return
    console = Console()
    rows: list[list[object]] = [
        [t.tenant, t.queue, t.waiting, duration(t.oldest_waiting_s), t.slots]
        for t in outlook.tenants
    ]
    print_table(TENANT_COLUMNS, rows, console)
    if outlook.capacity is None:
        lines = ["the stack predates admission: no capacity, every upload runs at once"]
    else:
        share = "" if outlook.per_tenant == outlook.capacity else f", {outlook.per_tenant} a tenant"
        lines = [
            f"slots: {outlook.slots_held} of {outlook.capacity} held{share}; "
            f"{outlook.waiting} job(s) waiting",
        ]
        if outlook.mean_run_s is None:
            lines.append("throughput: no successful run to measure yet")
        else:
            lines.append(
                f"throughput: {outlook.throughput_per_hour:g} documents an hour "
                f"({outlook.capacity} slots, {outlook.mean_run_s:g} s a run, mean of the "
                f"last {outlook.recent_runs} successes)"
            )
            lines.append(f"drains in: about {duration(outlook.drain_s)} at that rate")
    for line in lines:
        if console.is_terminal:
            console.print(markup(line), highlight=False)
        else:
            print(line)


REPROCESS_COLUMNS = ("job id", "key", "tenant", "outcome", "run", "detail")


def reprocess_line(result: ReprocessResult) -> None:
    """One job as ``reprocess`` goes (a line each, so a long one shows progress)."""
    console = Console(stderr=True)
    console.print(
        f"{result.job_id[:12]} {markup(result.key)}: {result.outcome} ({markup(result.detail)})",
        highlight=False,
    )


def reprocess_report(report: ReprocessReport, *, as_json: bool) -> None:
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    rows: list[list[object]] = [
        [r.job_id, r.key, r.tenant, r.outcome, r.run, r.detail] for r in report.results
    ]
    print_table(REPROCESS_COLUMNS, rows, Console())
    verb = "would queue" if report.dry_run else "queued"
    print(f"{report.matched} matched; {verb} {report.queued}; skipped {report.skipped}")
