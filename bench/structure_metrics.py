"""How close a PDF's DoclingDocument comes to a reference one: headings, tables, body text.

Pure functions of two DoclingDocuments (docling-core; TEDS from docling-metrics-table,
word distances from RapidFuzz, both dev dependencies). Item ``structure``
(``bench/structure_bench.py``) runs them against docling's own reference outputs.

* **Headings**: the reference's and the candidate's section headers and titles (body
  only), matched one to one on their normalised words (case and punctuation ignored, and
  numbers standing alone: a section number in a badge beside a heading; else a RapidFuzz
  ratio of at least ``HEADING_MATCH``): recall and precision.
* **Tables**: matched one to one on page and box (intersection over union at least
  ``TABLE_IOU``). TEDS (tree edit distance similarity, structure only: rows, cells and
  spans, not the text) on each matched pair; cell-text recall: the share of the
  reference's non-empty cell texts found among its matched table's cells (an unmatched
  reference table finds none).
* **Body text**: the words (lower-case runs of letters and digits) of the body's text
  items in reading order (headings, paragraphs, list items, captions; not table cells, not
  text inside pictures, not page headers or footers): the Levenshtein distance between
  the two word sequences over the longer one. A document whose candidate body has fewer
  than ``LOST_SHARE`` of the reference's words has **lost** its text (to a figure, the
  known failure of a layout model that reads text as a picture).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from docling_core.types.doc import (
    DocItemLabel,
    DoclingDocument,
    PictureItem,
    SectionHeaderItem,
    TableItem,
    TextItem,
    TitleItem,
)
from docling_core.types.doc.base import BoundingBox

HEADING_MATCH = 90.0
TABLE_IOU = 0.5
LOST_SHARE = 0.5

_WORD = re.compile(r"\w+")
_BODY_TEXT = frozenset(
    {
        DocItemLabel.TEXT,
        DocItemLabel.PARAGRAPH,
        DocItemLabel.SECTION_HEADER,
        DocItemLabel.TITLE,
        DocItemLabel.LIST_ITEM,
        DocItemLabel.CAPTION,
        DocItemLabel.CODE,
        DocItemLabel.REFERENCE,
        DocItemLabel.FOOTNOTE,
    }
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _norm(text: str) -> str:
    return " ".join(words(text))


def _same_words(a: str, b: str) -> bool:
    """Equal once numbers standing alone are set aside: a section number or a page
    number in a badge beside a heading is not part of its text."""
    return a == b or [w for w in a.split() if not w.isdigit()] == [
        w for w in b.split() if not w.isdigit()
    ]


def headings(doc: DoclingDocument) -> list[str]:
    return [
        item.text
        for item, _ in doc.iterate_items(traverse_pictures=False)
        if isinstance(item, SectionHeaderItem | TitleItem) and item.text.strip()
    ]


def body_words(doc: DoclingDocument) -> list[str]:
    found: list[str] = []
    for item, _ in doc.iterate_items(traverse_pictures=False):
        if isinstance(item, TextItem) and item.label in _BODY_TEXT:
            found.extend(words(item.text))
    return found


def tables(doc: DoclingDocument) -> list[TableItem]:
    return [
        item
        for item, _ in doc.iterate_items(traverse_pictures=False)
        if isinstance(item, TableItem) and item.label is DocItemLabel.TABLE
    ]


@dataclass
class Scores:
    """Counts over one or more documents; the ratios are taken from the sums."""

    ref_headings: int = 0
    found_headings: int = 0
    matched_headings: int = 0
    ref_tables: int = 0
    found_tables: int = 0
    matched_tables: int = 0
    teds: list[float] = field(default_factory=list)
    ref_cells: int = 0
    found_cells: int = 0
    word_distances: list[float] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)

    def add(self, other: Scores) -> None:
        for name in (
            "ref_headings",
            "found_headings",
            "matched_headings",
            "ref_tables",
            "found_tables",
            "matched_tables",
            "ref_cells",
            "found_cells",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.teds.extend(other.teds)
        self.word_distances.extend(other.word_distances)
        self.lost.extend(other.lost)

    @property
    def heading_recall(self) -> float | None:
        return _share(self.matched_headings, self.ref_headings)

    @property
    def heading_precision(self) -> float | None:
        return _share(self.matched_headings, self.found_headings)

    @property
    def tables_matched(self) -> float | None:
        return _share(self.matched_tables, self.ref_tables)

    @property
    def mean_teds(self) -> float | None:
        return sum(self.teds) / len(self.teds) if self.teds else None

    @property
    def cell_recall(self) -> float | None:
        return _share(self.found_cells, self.ref_cells)

    @property
    def word_distance(self) -> float | None:
        """The mean over documents of each one's word edit distance."""
        if not self.word_distances:
            return None
        return sum(self.word_distances) / len(self.word_distances)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def match_headings(reference: Sequence[str], candidate: Sequence[str]) -> int:
    """How many reference headings find a candidate heading of the same text (each
    candidate used once)."""
    from rapidfuzz import fuzz

    left = [_norm(text) for text in candidate]
    used = [False] * len(left)
    matched = 0
    for text in (_norm(t) for t in reference):
        best, best_score = None, HEADING_MATCH
        for index, other in enumerate(left):
            if used[index]:
                continue
            score = 100.0 if _same_words(text, other) else fuzz.ratio(text, other)
            if score >= best_score:
                best, best_score = index, score
                if score == 100.0:
                    break
        if best is not None:
            used[best] = True
            matched += 1
    return matched


def _box(doc: DoclingDocument, table: TableItem) -> tuple[int, BoundingBox] | None:
    if not table.prov:
        return None
    prov = table.prov[0]
    page = doc.pages.get(prov.page_no)
    if page is None:
        return None
    return prov.page_no, prov.bbox.to_top_left_origin(page.size.height)


def _iou(a: BoundingBox, b: BoundingBox) -> float:
    inter = a.intersection_area_with(b)
    union = a.area() + b.area() - inter
    return inter / union if union > 0 else 0.0


def match_tables(
    reference: DoclingDocument, candidate: DoclingDocument
) -> list[tuple[TableItem, TableItem | None]]:
    """Each reference table with the candidate table on its page whose box overlaps it
    most (intersection over union at least ``TABLE_IOU``; each candidate used once)."""
    found = [(table, _box(candidate, table)) for table in tables(candidate)]
    used: set[int] = set()
    pairs: list[tuple[TableItem, TableItem | None]] = []
    for table in tables(reference):
        where = _box(reference, table)
        best, best_iou = None, TABLE_IOU
        for index, (_, other_where) in enumerate(found):
            if index in used or where is None or other_where is None:
                continue
            if other_where[0] != where[0]:
                continue
            overlap = _iou(where[1], other_where[1])
            if overlap >= best_iou:
                best, best_iou = index, overlap
        if best is not None:
            used.add(best)
        pairs.append((table, None if best is None else found[best][0]))
    return pairs


def teds(
    reference: DoclingDocument, a: TableItem, candidate: DoclingDocument, b: TableItem
) -> float:
    """Structure-only TEDS of two tables (docling-metrics-table)."""
    from docling_metrics_table import TableMetric, TableMetricHTMLInputSample

    sample = TableMetricHTMLInputSample(
        id="table",
        html_a=a.export_to_html(doc=reference),
        html_b=b.export_to_html(doc=candidate),
        structure_only=True,
    )
    result = TableMetric().evaluate_sample(sample)
    assert result.teds is not None
    return float(result.teds.teds)


def _cell_texts(table: TableItem) -> Counter[str]:
    return Counter(text for cell in table.data.table_cells if (text := _norm(cell.text)))


def score(name: str, reference: DoclingDocument, candidate: DoclingDocument) -> Scores:
    """The scores of one document's candidate against its reference."""
    ref_headings, found_headings = headings(reference), headings(candidate)
    result = Scores(
        ref_headings=len(ref_headings),
        found_headings=len(found_headings),
        matched_headings=match_headings(ref_headings, found_headings),
        found_tables=len(tables(candidate)),
    )
    for ref_table, found in match_tables(reference, candidate):
        result.ref_tables += 1
        expected = _cell_texts(ref_table)
        result.ref_cells += sum(expected.values())
        if found is None:
            continue
        result.matched_tables += 1
        result.teds.append(teds(reference, ref_table, candidate, found))
        result.found_cells += sum((expected & _cell_texts(found)).values())
    from rapidfuzz.distance import Levenshtein

    ref_words, found_words = body_words(reference), body_words(candidate)
    longest = max(len(ref_words), len(found_words))
    result.word_distances.append(
        Levenshtein.distance(ref_words, found_words) / longest if longest else 0.0
    )
    if ref_words and len(found_words) < LOST_SHARE * len(ref_words):
        result.lost.append(name)
    return result


def pictures(doc: DoclingDocument) -> int:
    return sum(1 for item, _ in doc.iterate_items() if isinstance(item, PictureItem))
