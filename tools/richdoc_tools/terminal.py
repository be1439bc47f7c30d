"""User-controlled text on the operator's terminal: always data, never markup or control.

File names, object keys, failure reasons and message bodies come from whoever uploaded the
file. On a terminal they must neither be read as rich markup (``[draft] plan.md`` vanishes,
``oops[/x].md`` crashes a table) nor reach it as control sequences (an ANSI escape in a
key recolours or rewrites the operator's screen). ``visible`` spells control and format
characters out the way Python's ``repr`` does (``\\x1b``, ``\\n``, ``\\u202e``);
``cell`` and ``markup`` wrap that for rich tables and markup strings.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from rich.markup import escape
from rich.text import Text

# Control (Cc), format (Cf: bidi overrides, zero-width), surrogate, private-use and
# unassigned characters, and the Unicode line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _spelled(char: str) -> str:
    if unicodedata.category(char) not in _HIDDEN_CATEGORIES:
        return char
    spelled = repr(char)[1:-1]
    if spelled == char:  # repr keeps some printable-looking ones as they are
        code = ord(char)
        spelled = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return spelled


def visible(value: Any) -> str:
    """``str(value)`` with every control or invisible character spelled out."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(_spelled(char) for char in text)


def markup(value: Any) -> str:
    """``value`` for use inside a rich markup string (``console.print(f"... {markup(x)}")``)."""
    return escape(visible(value))


def cell(value: Any, *, limit: int | None = None, style: str = "") -> Text:
    """A table cell showing ``value`` literally ("-" for None), cut to ``limit`` characters."""
    if value is None:
        return Text("-", style=style)
    text = visible(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text, style=style)
