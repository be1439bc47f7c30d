"""Pages that read right to left (Arabic, Hebrew, Persian): the light pipeline reads them
mirrored.

docling-parse gives a right-to-left line's words in reading order (its cells run from the
right, split where the direction changes), but the rules that group lines into paragraphs
and headings (``richdoc.parse.paragraphs``, ``richdoc.parse.light_rules``) and docling's
reading order (``ReadingOrderPredictor``: columns left to right, a row's regions left to
right) read a page from its left edge. A right-to-left paragraph is flush right and
ragged left, and its columns, and a form's label and value, run from the right. So on a
page whose text is mostly right to left, by docling-core's own test of a run's direction
(``get_text_direction``) weighed by the run's characters, the lines and regions are
mirrored (left and right edges swapped about the page's middle) before those rules and
docling's reading order read them, and the regions mirrored back after: the same rules,
read from the right.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar, cast

from docling.models.postprocessing.reading_order_rb import (
    PageElement,
    ReadingOrderNode,
    ReadingOrderPredictor,
    SeparatorElement,
)
from docling_core.types.doc import BoundingBox
from docling_core.types.doc.utils import get_text_direction

from richdoc.parse.paragraphs import Line


def reads_right_to_left(texts: Iterable[str]) -> bool:
    """Whether most of a page's text (its runs' characters, spaces aside) lies in runs
    that read right to left."""
    right_to_left = total = 0
    for text in texts:
        size = sum(1 for char in text if not char.isspace())
        total += size
        if size and get_text_direction(text.strip()) == "rtl":
            right_to_left += size
    return 2 * right_to_left > total


def mirrored_line(line: Line, width: float) -> Line:
    """A line with its left and right edges swapped about the middle of a page ``width``
    wide."""
    return Line(
        width - line.right, line.top, width - line.left, line.bottom, line.text, line.emphasis
    )


def mirrored_box(box: BoundingBox, width: float) -> BoundingBox:
    """A box mirrored about the middle of a page ``width`` wide."""
    return box.model_copy(update={"l": width - box.r, "r": width - box.l})


_Node = TypeVar("_Node", bound=PageElement | SeparatorElement)


def _mirrored_node(node: _Node) -> _Node:
    width = node.page_size.width
    return cast(_Node, node.model_copy(update={"l": width - node.r, "r": width - node.l}))


class RightToLeftReadingOrder(ReadingOrderPredictor):
    """docling's reading order, read from the right on a page whose text is mostly right
    to left."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # docling's is unannotated

    def _predict_page(
        self,
        page_elements: list[ReadingOrderNode],
        *,
        vertical_separators: list[SeparatorElement] | None = None,
    ) -> list[ReadingOrderNode]:
        if not reads_right_to_left(_texts(page_elements)):
            return super()._predict_page(page_elements, vertical_separators=vertical_separators)
        ordered = super()._predict_page(
            [_mirrored_node(node) for node in page_elements],
            vertical_separators=(
                None
                if vertical_separators is None
                else [_mirrored_node(separator) for separator in vertical_separators]
            ),
        )
        return [_mirrored_node(node) for node in ordered]


def _texts(nodes: Sequence[ReadingOrderNode]) -> list[str]:
    return [node.text for node in nodes if isinstance(node, PageElement)]
