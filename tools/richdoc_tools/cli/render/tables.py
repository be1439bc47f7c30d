"""Tables and JSON documents as every command prints them.

Tables are rich tables on a terminal. Anywhere else (``| less``, ``| grep``, a CI log)
rich would fit them into 80 columns and cut the values, so they are printed as
tab-separated rows under a header line, every value whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Column, Table

from richdoc_tools.terminal import cell, visible


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


@dataclass(frozen=True)
class Col:
    """A column: its header, and how a terminal shows it (values cut to ``limit``
    characters; ``whole``: never wrapped, as job ids that `richdoc jobs show` takes)."""

    header: str
    limit: int | None = None
    whole: bool = False


def print_table(
    columns: Sequence[Col | str], rows: Sequence[Sequence[object]], console: Console
) -> None:
    cols = [c if isinstance(c, Col) else Col(c) for c in columns]
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


def count_text(value: int | None) -> str:
    """A count, or "-" for none."""
    return "-" if value is None else str(value)
