"""User-controlled text on a terminal: shown literally, never as markup or control codes."""

from __future__ import annotations

from io import StringIO

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from richdoc_tools.terminal import cell, markup, visible


def test_control_and_invisible_characters_are_spelled_out_like_repr() -> None:
    assert visible("\x1b[31mred\x1b[0m.md") == "\\x1b[31mred\\x1b[0m.md"
    assert visible("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert visible("evil\u202egnp.md") == "evil\\u202egnp.md"  # a bidi override
    assert visible("zero\u200bwidth") == "zero\\u200bwidth"
    assert visible("Überblick 2024 – plan.pdf") == "Überblick 2024 – plan.pdf"
    assert visible("non\xa0breaking") == "non\xa0breaking"


def _rendered(*renderables: object) -> str:
    out = StringIO()
    console = Console(file=out, width=200, force_terminal=True, color_system=None)
    console.print(*renderables)
    return out.getvalue()


def test_markup_like_names_are_shown_as_they_are() -> None:
    table = Table("key", "failure")
    table.add_row(cell("oops[/x].md"), cell("unsupported_feature [format:dwg]"))
    table.add_row(cell("[draft] plan.md"), cell(None))
    text = _rendered(table)
    for shown in ("oops[/x].md", "unsupported_feature [format:dwg]", "[draft] plan.md"):
        assert shown in text
    assert _rendered(f"[dim]uploading {markup('[bold]x[/bold] [/y]')}[/]").strip() == (
        "uploading [bold]x[/bold] [/y]"
    )


def test_long_values_are_cut_with_an_ellipsis() -> None:
    assert cell("x" * 100, limit=10).plain == "x" * 9 + "…"


@given(st.text())
def test_no_text_reaches_the_terminal_with_a_control_character(text: str) -> None:
    shown = _rendered(cell(text), markup(text))
    assert not any(ord(c) < 0x20 and c != "\n" for c in shown)
    assert "\x7f" not in shown and "\x9b" not in shown
