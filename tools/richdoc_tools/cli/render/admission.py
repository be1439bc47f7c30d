"""What ``richdoc jobs backlog`` prints. JSON keeps its keys, tables become tab-separated
rows in a pipe (``tables``), user-controlled values (tenants) reach the terminal through
``richdoc_tools.terminal``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from richdoc_tools.cli.render.tables import print_json, print_table
from richdoc_tools.ops.backlog import duration
from richdoc_tools.terminal import markup

if TYPE_CHECKING:
    from richdoc_tools.ops.backlog import BacklogOutlook
    from richdoc_tools.ops.drain import DrainEstimate

# "queue": which of the tenant's backlogs; the header scripts read from a pipe, kept as
# published, as the JSON member is.
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
        if outlook.drain is not None:
            lines += drain_lines(outlook.drain)
    for line in lines:
        if console.is_terminal:
            console.print(markup(line), highlight=False)
        else:
            print(line)


def drain_lines(drain: DrainEstimate) -> list[str]:
    """The throughput and the drain, as ``richdoc jobs backlog`` ends."""
    window = duration(drain.window_s)
    if drain.median_cycle_s is None:
        throughput = f"throughput: no slot cycle in the last {window} to measure on"
    else:
        throughput = (
            f"throughput: {drain.throughput_per_hour:g} documents an hour ({drain.slots} "
            f"slots, each turned over every {drain.median_cycle_s:g} s: the median of "
            f"{drain.cycles} slot cycles in the last {window})"
        )
    if drain.drain_s == 0:
        drains = "drains in: nothing waits"
    elif drain.drain_s is None:
        drains = "drains in: not known until a slot cycle is measured"
    else:
        drains = f"drains in: about {duration(drain.drain_s)} at that rate"
    return [throughput, drains]
