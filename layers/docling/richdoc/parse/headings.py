"""Heading levels for PDFs and images, where the layout model gives none.

docling's layout models (heron, CDLA) find headings but not their depth: every heading of
a PDF comes out at level 1. This module gives each one a level from what the page shows,
deterministically, for the whole document at once (the parse of an unsharded document,
and the merge of a sharded one's shards, so that sharding never changes the levels).
Only docling-core: the merge runs beside the layer.

What decides (docs/parse.md, "Heading levels"):

1. **Numbering.** A heading that starts with a marker has a kind of numbering: its
   family and depth. Families, outermost first: ``Part``/``Title``/``Book``,
   ``Chapter``, ``Article``, ``Section``/``Clause``/``§``, upper-case Roman (``IV.``),
   Arabic (``1.``, ``(1)``, ``1)``; dotted ``1.1``, ``2.3.4`` one level deeper per
   part), upper-case letters (``A.``), lower-case letters (``(a)``, ``a)``), lower-case
   Roman (``(iv)``). A keyword's number counts its parts too (``Section 2.3`` is below
   ``Section 2``). A bare number (``1 Introduction``) counts only when the document's
   bare numbers include both 1 and 2; a single letter that is also a Roman numeral
   (``I.``, ``C.``) is Roman where the document's other markers of its case are Roman and
   none are letters, a letter where they are letters and none Roman, else Roman only if
   it is ``I`` or ``i``.
2. **Type size.** Each heading's size is the median height of its text lines on the page,
   recorded by the parse (``record_size``); sizes within ``SIZE_TOLERANCE`` of the next
   larger one are one size class (largest first). Each kind of numbering takes the size
   class most of its headings have (ties: the larger).
3. **Rank.** Each heading's key is its size class, then its kind of numbering; a heading
   without a marker takes the outermost kind of numbering of its size class (before any,
   where the class has none). The distinct keys the document uses, in order, are levels
   1, 2, 3, ...: a larger type is a higher level, and within one size numbering decides
   (``ARTICLE I`` over ``Section 1.01`` set alike is 1 over 2).
4. A heading with neither a size nor a marker keeps docling's level.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from docling_core.types.doc import DoclingDocument, SectionHeaderItem

# docling-core's custom metadata fields are "<namespace>__<name>".
META_FIELD = "richdoc__heading"
SIZE_TOLERANCE = 0.05
SIZE_DECIMALS = 2

# Families of numbering, outermost first.
PART, CHAPTER, ARTICLE, SECTION, ROMAN_UPPER, ARABIC, ALPHA_UPPER, ALPHA_LOWER, ROMAN_LOWER = range(
    9
)
_KEYWORDS = (
    (PART, re.compile(r"^(?:part|title|book)\s+([0-9]+(?:\.[0-9]+)*|[ivxlcdm]+|[a-z])\b", re.I)),
    (CHAPTER, re.compile(r"^chapter\s+([0-9]+(?:\.[0-9]+)*|[ivxlcdm]+|[a-z])\b", re.I)),
    (ARTICLE, re.compile(r"^article\s+([0-9]+(?:\.[0-9]+)*|[ivxlcdm]+|[a-z])\b", re.I)),
    (
        SECTION,
        re.compile(r"^(?:section|clause|§+)\s*([0-9]+(?:\.[0-9]+)*|[ivxlcdm]+|[a-z])\b", re.I),
    ),
)
_DOTTED = re.compile(r"^\(?(\d+(?:\.\d+)+)\.?(?:\)|\s|$)")
_ARABIC = re.compile(r"^\(?(\d+)(?:\.|\))(?!\d)")
_BARE_ARABIC = re.compile(r"^(\d+)\s+\S")
_LETTERS = re.compile(r"^\(?([A-Za-z]{1,6})(?:\.|\))(?:\s|$)")
_ROMAN = re.compile(r"^M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$", re.I)
_ROMAN_LETTERS = frozenset("IVXLCDMivxlcdm")


class HeadingSize(BaseModel):
    """A heading's type size on its page: the median height of its text lines, points."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    size: float = Field(gt=0)


@dataclass(frozen=True)
class Marker:
    """A heading's numbering: its family and depth; ``letter`` for a single letter that
    may be a Roman numeral or a letter, decided over the whole document."""

    family: int
    depth: int = 1
    letter: str | None = None


def marker_of(text: str) -> Marker | None:
    """The numbering a heading's text starts with, if any (bare numbers are judged over
    the document: ``heading_levels``)."""
    s = text.strip()
    for family, pattern in _KEYWORDS:
        match = pattern.match(s)
        if match:
            return Marker(family, depth=match.group(1).count(".") + 1)
    match = _DOTTED.match(s)
    if match:
        return Marker(ARABIC, depth=match.group(1).count(".") + 1)
    if _ARABIC.match(s):
        return Marker(ARABIC)
    match = _LETTERS.match(s)
    if match:
        token = match.group(1)
        upper = token.isupper()
        if len(token) == 1:
            if token in _ROMAN_LETTERS:
                return Marker(ROMAN_UPPER if upper else ROMAN_LOWER, letter=token)
            return Marker(ALPHA_UPPER if upper else ALPHA_LOWER)
        if _ROMAN.match(token) and (token.isupper() or token.islower()):
            return Marker(ROMAN_UPPER if upper else ROMAN_LOWER)
    return None


def heading_levels(headings: Sequence[tuple[str, float | None]]) -> list[int | None]:
    """The level of each heading (its text and type size, in reading order) by the rule
    in this module's docstring; None where neither numbering nor size decides."""
    markers = [marker_of(text) for text, _ in headings]
    _resolve_letters(markers)
    _accept_bare_numbers(headings, markers)
    classes = _size_classes([size for _, size in headings if size is not None])
    sized = [None if size is None else classes[size] for _, size in headings]
    # One type size per kind of numbering: the one most of its headings have.
    votes: dict[tuple[int, int], Counter[int]] = {}
    for marker, size_class in zip(markers, sized, strict=True):
        if marker is not None:
            votes.setdefault((marker.family, marker.depth), Counter())[
                0 if size_class is None else size_class
            ] += 1
    kind_class = {kind: min(found, key=lambda c: (-found[c], c)) for kind, found in votes.items()}
    outermost: dict[int, tuple[int, int]] = {}
    for kind, size_class in sorted(kind_class.items()):
        outermost.setdefault(size_class, kind)
    keys: list[tuple[int, tuple[int, int]] | None] = []
    for marker, size_class in zip(markers, sized, strict=True):
        if marker is not None:
            kind = (marker.family, marker.depth)
            keys.append((kind_class[kind], kind))
        elif size_class is not None:
            keys.append((size_class, outermost.get(size_class, (-1, 0))))
        else:
            keys.append(None)
    ranks = {key: level for level, key in enumerate(sorted({k for k in keys if k}), start=1)}
    return [None if key is None else ranks[key] for key in keys]


def _resolve_letters(markers: list[Marker | None]) -> None:
    """``I.``, ``C.``, ``v.``: a Roman numeral where the document's other markers of that
    case are Roman and none are letters, a letter where they are letters and none Roman;
    else ``I``/``i`` is Roman and any other letter a letter."""
    for upper in (True, False):
        roman, alpha = (ROMAN_UPPER, ALPHA_UPPER) if upper else (ROMAN_LOWER, ALPHA_LOWER)
        has_roman = any(m is not None and m.family == roman and m.letter is None for m in markers)
        has_alpha = any(m is not None and m.family == alpha for m in markers)
        for index, m in enumerate(markers):
            if m is None or m.letter is None or m.family != roman:
                continue
            is_roman = has_roman if has_roman != has_alpha else m.letter in "Ii"
            if not is_roman:
                markers[index] = Marker(alpha)


def _accept_bare_numbers(
    headings: Sequence[tuple[str, float | None]], markers: list[Marker | None]
) -> None:
    bare = {
        index: int(match.group(1))
        for index, (text, _) in enumerate(headings)
        if markers[index] is None and (match := _BARE_ARABIC.match(text.strip()))
    }
    if {1, 2} <= set(bare.values()):
        for index in bare:
            markers[index] = Marker(ARABIC)


def _size_classes(sizes: Sequence[float]) -> dict[float, int]:
    """Each size's class, 0 for the largest; a size within ``SIZE_TOLERANCE`` of the
    next larger one is in its class."""
    classes: dict[float, int] = {}
    index, previous = 0, None
    for size in sorted(set(sizes), reverse=True):
        if previous is not None and previous - size > SIZE_TOLERANCE * previous:
            index += 1
        classes[size] = index
        previous = size
    return classes


def record_size(item: SectionHeaderItem, line_heights: Sequence[float]) -> None:
    """Write a heading's type size (the median of its lines' heights) onto it, in
    docling-core's place for node metadata."""
    from docling_core.types.doc.common.meta import BaseMeta

    heights = [h for h in line_heights if h > 0]
    if not heights:
        return
    size = HeadingSize(size=round(statistics.median(heights), SIZE_DECIMALS))
    meta = item.meta if item.meta is not None else BaseMeta()
    setattr(meta, META_FIELD, size.model_dump(mode="json"))
    item.meta = meta


def size_of(item: SectionHeaderItem) -> float | None:
    """The type size ``record_size`` wrote onto a heading; None where it wrote none."""
    value: Any = None if item.meta is None else item.meta.get_custom_part().get(META_FIELD)
    return None if value is None else HeadingSize.model_validate(value).size


def assign_levels(document: DoclingDocument) -> None:
    """Give every heading of the document's body its level (in place), by the rule above."""
    from docling_core.types.doc import SectionHeaderItem

    found = [item for item, _ in document.iterate_items() if isinstance(item, SectionHeaderItem)]
    levels = heading_levels([(item.text, size_of(item)) for item in found])
    for item, level in zip(found, levels, strict=True):
        if level is not None:
            item.level = level
