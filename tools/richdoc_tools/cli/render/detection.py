"""``richdoc detect --explain``: every date mention of a document, and why it counts."""

from __future__ import annotations

from rich.console import Console

from richdoc.detection.explain import Explanation
from richdoc_tools.cli.render.tables import Col, print_json, print_table

MENTION_COLUMNS = [
    Col("block"),
    Col("written", limit=32),
    Col("date"),
    Col("form"),
    Col("role"),
    Col("why", limit=72),
    Col("kept"),
    Col("note", limit=48),
]
EVENT_COLUMNS = [Col("block"), Col("event"), Col("clause", limit=96)]


def explanation(explained: Explanation, *, as_json: bool) -> None:
    if as_json:
        print_json(explained.model_dump(mode="json"))
        return
    console = Console()
    fired = ", ".join(explained.fired) or "nothing"
    console.print(f"rules {explained.rules}: {fired} fired", markup=False, highlight=False)
    if explained.slash_dates:
        console.print(f"slash dates: {explained.slash_dates}", markup=False, highlight=False)
    rows = [
        [m.span_ref, m.written, m.value, m.form, m.role, m.why, "yes" if m.kept else "no", m.note]
        for m in explained.mentions
    ]
    print_table(MENTION_COLUMNS, rows, console)
    if explained.events:
        events = [[e.span_ref, e.event, e.clause] for e in explained.events]
        print_table(EVENT_COLUMNS, events, console)
