"""Word lists as trie-shaped regular expressions.

An alternation of many words (``agreement|amendment|addendum|...``) is tried word by
word at every position of the text; the same words as a trie (``a(?:greement|mendment
|ddendum)|...``) are ruled out at a position by one comparison per letter of the longest
shared prefix. Detection searches such lists at every date mention
(docs/detection.md, "Performance").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# An atom is one regex piece that matches as a unit: a literal character, or a separator
# such as r"\s+".
Atoms = Sequence[str]
_END = ""


def literal(word: str) -> list[str]:
    """A word as atoms: each character literal, each run of spaces ``\\s+``."""
    atoms: list[str] = []
    for part in word.split(" "):
        if atoms:
            atoms.append(r"\s+")
        atoms.extend(re.escape(char) for char in part)
    return atoms


def pattern(entries: Iterable[Atoms]) -> str:
    """A regex source matching any of ``entries`` (each a sequence of atoms), the longest
    first where one is a prefix of another."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for atoms in entries:
        node = root
        for atom in atoms:
            node = node.setdefault(atom, {})
        node[_END] = {}
    return _emit(root)


def _emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
    branches = [atom + _emit(child) for atom, child in sorted(node.items()) if atom != _END]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if _END in node:  # an entry ends here: the longer ones are tried first
        return body + "?" if len(branches) == 1 and len(body) == 1 else f"(?:{body})?"
    return body
