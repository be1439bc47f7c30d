"""Tables as CSV: one file per TABLE node of a projection, pure and deterministic
(docs/consumers.md, "Tables as CSV").

A table's CSV holds the same cells as the projection: its header row is the TABLE's
``columns`` (the keys of every row's ``cells``), then one line per TABLE_ROW, in the order
of the TABLE's ``CONTAINS`` edges, with each row's ``cells`` value under each key. RFC 4180
quoting (CRLF line ends, a field quoted only when it holds a comma, a quote, CR or LF, a
quote doubled inside), UTF-8 without a byte order mark. A table whose rows were all
empty (dropped by the projection) is its header line alone.

The project step writes ``<tables prefix>table-<node id>.csv`` for each TABLE node beside
``projection.json``; the run's outputs name the prefix (``ResultKeys.tables_prefix``) and
count the files (``ResultCounts.tables``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from richdoc_client.projection import Projection, TableNode, TableRowNode

#: The folder of a run's CSVs, beside its projection.json.
TABLES_FOLDER: Final = "tables/"
_NAME = re.compile(r"table-(0|[1-9][0-9]*)\.csv")


def table_csv_name(node: int) -> str:
    """The file name of a TABLE node's CSV."""
    return f"table-{node}.csv"


def table_node_of(name: str) -> int | None:
    """The TABLE node a CSV's file name (or key) names; None for any other name."""
    match = _NAME.fullmatch(name.rsplit("/", 1)[-1])
    return int(match[1]) if match else None


@dataclass(frozen=True)
class CsvTable:
    """A table as its CSV holds it: the column keys, and each row's values under them."""

    columns: list[str]
    rows: list[list[str]]

    def records(self) -> list[dict[str, str]]:
        """Each row as ``{column key: value}``: what the projection's row ``cells`` hold."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def table_csv(columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> bytes:
    """The CSV of one table: the header line, then each row's values in column order."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(columns)
    writer.writerows([row[key] for key in columns] for row in rows)
    return out.getvalue().encode("utf-8")


def table_csvs(projection: Projection) -> dict[int, bytes]:
    """Every TABLE node's CSV, by node id, in node order."""
    nodes = {node.id: node for node in projection.nodes}
    children: dict[int, list[tuple[int, int]]] = {}
    for edge in projection.edges:
        children.setdefault(edge.src, []).append((edge.ord, edge.dst))
    csvs = {}
    for node in projection.nodes:
        if not isinstance(node, TableNode):
            continue
        rows = [
            child.props.cells
            for _, dst in sorted(children.get(node.id, []))
            if isinstance(child := nodes[dst], TableRowNode)
        ]
        csvs[node.id] = table_csv(node.props.columns, rows)
    return csvs


def read_table_csv(data: bytes) -> CsvTable:
    """A table CSV read back: its header line and its rows (each as long as the header)."""
    lines = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    if not lines:
        raise ValueError("a table CSV has at least its header line")
    columns, *rows = lines
    for number, row in enumerate(rows, start=2):
        if len(row) != len(columns):
            raise ValueError(f"line {number} has {len(row)} fields, the header {len(columns)}")
    return CsvTable(columns=columns, rows=rows)
