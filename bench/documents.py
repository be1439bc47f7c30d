"""Small, deterministic, distinct documents for the end-to-end runs (DOCX, HTML, Markdown).

Document ``i`` of a seed always has the same bytes (OOXML zip entries carry a fixed date,
as python-docx would otherwise stamp the clock), and no two documents share content, so
the parse step's artifact cache (keyed by the file's SHA-256) never answers for another
document of the same run.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

from tests.support.gen_fixtures import pinned_zip

FORMATS = ("docx", "html", "md")

_SUBJECTS = ["The Supplier", "The Customer", "Each party", "The Licensee", "The landlord"]
_ACTIONS = [
    "shall deliver the goods listed in Schedule 2",
    "must notify the other party in writing",
    "will invoice the agreed service fees",
    "may terminate this agreement for convenience",
    "agrees to maintain the premises in good repair",
]
_DATED = [
    "This agreement is effective {date}.",
    "Signed by both parties on {date}.",
    "The amendment takes effect on {date}.",
    "Invoices issued before {date} remain payable.",
]
_MONTHS = ["January", "March", "May", "July", "September", "November"]


def _sentences(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        if rng.random() < 0.35:
            date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2020, 2026)}"
            out.append(rng.choice(_DATED).format(date=date))
        else:
            out.append(f"{rng.choice(_SUBJECTS)} {rng.choice(_ACTIONS)}.")
    return out


def _content(index: int, seed: int) -> tuple[str, list[str], list[list[str]]]:
    rng = random.Random(seed * 1_000_003 + index)
    title = f"Agreement {seed}-{index:04d}"
    paragraphs = [
        f"Clause {n + 1}. " + " ".join(_sentences(rng, rng.randint(2, 5)))
        for n in range(rng.randint(3, 8))
    ]
    rows = [["Item", "Quantity", "Due"]] + [
        [f"item {index}-{r}", str(rng.randint(1, 99)), f"2025-{rng.randint(1, 12):02d}-01"]
        for r in range(rng.randint(1, 4))
    ]
    return title, paragraphs, rows


def _docx(title: str, paragraphs: list[str], rows: list[list[str]]) -> bytes:
    from docx import Document

    document = Document()
    document.add_heading(title, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return pinned_zip(buffer.getvalue())


def _html(title: str, paragraphs: list[str], rows: list[list[str]]) -> bytes:
    cells = "".join(
        "<tr>"
        + "".join(f"<{'th' if r == 0 else 'td'}>{c}</{'th' if r == 0 else 'td'}>" for c in row)
        + "</tr>"
        for r, row in enumerate(rows)
    )
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
        f"{body}<table>{cells}</table></body></html>"
    ).encode()


def _markdown(title: str, paragraphs: list[str], rows: list[list[str]]) -> bytes:
    table = [
        "| " + " | ".join(rows[0]) + " |",
        "|" + "---|" * len(rows[0]),
        *("| " + " | ".join(row) + " |" for row in rows[1:]),
    ]
    return "\n\n".join([f"# {title}", *paragraphs, "\n".join(table)]).encode() + b"\n"


def write_documents(directory: Path, count: int, *, seed: int) -> list[Path]:
    """``count`` documents, formats in rotation, named ``doc-<seed>-<i>.<ext>``."""
    directory.mkdir(parents=True, exist_ok=True)
    makers = {"docx": _docx, "html": _html, "md": _markdown}
    paths = []
    for index in range(count):
        fmt = FORMATS[index % len(FORMATS)]
        path = directory / f"doc-{seed}-{index:04d}.{fmt}"
        path.write_bytes(makers[fmt](*_content(index, seed)))
        paths.append(path)
    return paths
