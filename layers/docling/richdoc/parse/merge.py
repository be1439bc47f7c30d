"""Joining the page-range shards of a document into its DoclingDocument.

Only docling-core is needed (the merge can run on the layer). A shard's DoclingDocument
is the source's pages ``start`` to ``end``, numbered as in the source (docling's
``page_range``), so the whole document is the shards' items one after the other:

* The join works on the shards' JSON: each shard's item lists (texts, groups, tables,
  ...) are appended to the merged ones and its references (``self_ref``, ``$ref``)
  shifted by the number of items before it; the body's children follow one another;
  pages, provenance, name and origin stay as docling wrote them. That is docling-core's
  ``DoclingDocument.concatenate`` (tests/parse/test_shard_merge.py compares the two) without
  what suits joining different documents but not the pages of one: concatenate
  renumbers each document's pages to follow on from the previous one's last page (a
  shard whose first page failed to parse would shift every later page), joins the
  names (" + ") and drops the origin; it also renumbers items in tree order where
  docling numbers them in creation order, and deep-copies every item. The shards' JSON
  is docling-core's own serialization, so the joined tree is serialized again as it is
  (pydantic-core's serializer, the one ``dump_document`` uses): the same bytes a
  validated DoclingDocument would dump, without validating 67,000 items for 1,000 pages
  again (12 of the 14 s the merge took that way; the project step validates the merged
  document when it loads it). Only the layout pipelines' rules below need the
  DoclingDocument, and get it; so does a document OCR read pages of, whose shards' OCR
  records (``richdoc.parse.ocr.record``, on the body) join into one.
* What docling's standard pipeline decides across pages (the standard and light
  pipelines, ``LAYOUT_PIPELINES``): its reading-order assembly joins a paragraph that
  runs over a page break into one text item, and keeps a list that runs over a page
  break in one list group. A shard boundary hides the next page from it, so the merge
  applies the same two rules at every boundary. The native pipeline has neither rule (no
  layout model, no groups). Heading levels are decided over the whole document
  (``richdoc.parse.headings``): the merge decides them again, from the type sizes the
  shards recorded on their headings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import pydantic_core
from docling_core.types.doc import (
    CodeItem,
    ContentLayer,
    DocItem,
    DocItemLabel,
    DoclingDocument,
    GroupItem,
    GroupLabel,
    ListGroup,
    NodeItem,
    PictureItem,
    ProvenanceItem,
    TableItem,
    TextItem,
)

from richdoc.contracts import PageSpan
from richdoc.parse.headings import assign_levels
from richdoc.parse.ocr.record import OcrRecord, record_of_json, require_text, with_record_json
from richdoc.parse.settings import LAYOUT_PIPELINES, Pipeline
from richdoc.parse.shard_plan import check_partition
from richdoc.taxonomy import CorruptInput

# A DoclingDocument's item lists: what "#/<list>/<index>" references point into.
ITEM_LISTS = (
    "groups",
    "texts",
    "pictures",
    "tables",
    "key_value_items",
    "form_items",
    "field_regions",
    "field_items",
)
_REFERENCE_KEYS = frozenset({"self_ref", "$ref"})


def dump_document(doc: DoclingDocument) -> bytes:
    """The bytes of compact ``json.dumps(doc.export_to_dict())``, serialized by
    pydantic-core directly in 60 % of the time: the one JSON form of a DoclingDocument
    that the parse step writes, whole or merged."""
    return doc.model_dump_json(by_alias=True, exclude_none=True).encode()


@dataclass(frozen=True)
class Shard:
    """One shard's DoclingDocument: pages ``pages`` of the source, numbered as there."""

    pages: PageSpan
    document: DoclingDocument


def merge_shard_json(parts: Sequence[tuple[PageSpan, bytes]], *, pipeline: Pipeline) -> bytes:
    """The whole document's DoclingDocument JSON from its shards' (the artifacts' form:
    ``dump_document``), in page order; raises as ``merge_shards``, and as a whole
    document's parse does when OCR found nothing readable in it (``require_text``)."""
    docs = [(pages, json.loads(data)) for pages, data in parts]
    # The same top-level fields in every shard (docling-core leaves some out when empty):
    # then the joined tree has the field order a DoclingDocument dumps in.
    same_fields = len({tuple(doc) for _, doc in docs}) == 1
    ocr = any(record_of_json(doc) is not None for _, doc in docs)
    # Validated and dumped again where the body changes (its OCR record joined): the
    # body's members then come in the order a DoclingDocument dumps them.
    if pipeline in LAYOUT_PIPELINES or not same_fields or ocr:
        document = _merge(docs, pipeline)
        require_text(document)  # the whole document, which no shard alone could judge
        return dump_document(document)
    return pydantic_core.to_json(_join(docs))


def merge_shards(shards: Sequence[Shard], *, pipeline: Pipeline) -> DoclingDocument:
    """The DoclingDocument of the whole source from its shards, in page order.

    Raises ``ValueError`` when the shards are not one document's consecutive page ranges
    from page 1 (a caller's bug), and ``CorruptInput`` when no page of the document
    converted (every shard empty), as the whole-document conversion would.
    """
    parts = [
        (shard.pages, shard.document.model_dump(mode="json", by_alias=True, exclude_none=True))
        for shard in shards
    ]
    return _merge(parts, pipeline)


def _merge(parts: list[tuple[PageSpan, dict[str, Any]]], pipeline: Pipeline) -> DoclingDocument:
    merged = _join(parts)
    document = DoclingDocument.model_validate(merged)
    if pipeline in LAYOUT_PIPELINES:
        children_per_shard = [len(doc["body"].get("children", [])) for _, doc in parts]
        _Boundaries(document, children_per_shard).rejoin()
        assign_levels(document)
    return document


def _join(parts: list[tuple[PageSpan, dict[str, Any]]]) -> dict[str, Any]:
    """The shards' DoclingDocument trees (JSON) joined into the document's, in place: the
    shards' item lists are reused, their references shifted."""
    check_partition([pages for pages, _ in parts])
    for pages, doc in parts:
        _check_pages_inside(pages, doc)
    converted = [doc for _, doc in parts if doc.get("pages")]
    if not converted:
        raise CorruptInput("docling could not convert any page of the document")
    first = converted[0]
    for field in ("name", "origin", "version"):
        if any(doc.get(field) != first.get(field) for doc in converted[1:]):
            raise ValueError(f"the shards are not of one document: their {field}s differ")
    lists = [name for name in ITEM_LISTS if any(name in doc for _, doc in parts)]
    merged: dict[str, Any] = {**first, "pages": {}, **{name: [] for name in lists}}
    records = [record for _, doc in parts if (record := record_of_json(doc)) is not None]
    merged["body"] = with_record_json({**first["body"], "children": []}, OcrRecord.join(records))
    for _, doc in parts:
        offsets = {name: len(merged[name]) for name in lists}
        for name in lists:
            items = doc.get(name, [])
            _shift_references(items, offsets)
            merged[name].extend(items)
        children = doc["body"].get("children", [])
        _shift_references(children, offsets)
        merged["body"]["children"].extend(children)
        merged["pages"].update(doc.get("pages", {}))
    return merged


def _check_pages_inside(pages: PageSpan, doc: dict[str, Any]) -> None:
    outside = {int(no) for no in doc.get("pages", {}) if int(no) not in pages}
    for name in ITEM_LISTS:
        for item in doc.get(name, []):
            outside.update(p["page_no"] for p in item.get("prov", ()) if p["page_no"] not in pages)
    if outside:
        raise ValueError(f"the shard of pages {pages} holds pages {sorted(outside)}")
    if doc.get("furniture", {}).get("children"):
        raise ValueError(f"the shard of pages {pages} uses the deprecated furniture tree")


def _shift_references(node: Any, offsets: dict[str, int]) -> None:
    """Renumber every item reference (``self_ref`` and ``$ref`` values of the form
    ``#/<list>/<index>``) below ``node`` in place; ``#/body`` stays."""
    if isinstance(node, list):
        for value in node:
            if isinstance(value, dict | list):
                _shift_references(value, offsets)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _REFERENCE_KEYS and isinstance(value, str):
            _, _, rest = value.partition("#/")
            name, _, index = rest.partition("/")
            if index and offsets.get(name):
                node[key] = f"#/{name}/{int(index) + offsets[name]}"
        elif isinstance(value, dict | list):
            _shift_references(value, offsets)


# The standard pipeline's cross-page rules ------------------------------------------------
#
# docling 2.143, docling/models/stages/reading_order/readingorder_model.py and
# docling/models/postprocessing/reading_order_rb.py (``predict_merges``,
# ``_merge_elements``, ``_handle_text_element``). Reading order, captions and footnotes
# are decided per page and need nothing here. Tested against docling's own
# ReadingOrderModel in tests/parse/test_shard_merge.py.

# Elements a paragraph continues across (``predict_merges``' skip labels).
_CONTINUES_ACROSS = frozenset(
    {
        DocItemLabel.PAGE_HEADER,
        DocItemLabel.PAGE_FOOTER,
        DocItemLabel.TABLE,
        DocItemLabel.PICTURE,
        DocItemLabel.CAPTION,
        DocItemLabel.FOOTNOTE,
    }
)
_OPEN_END = re.compile(r".+([a-z,\-\u00AD])(\s*)")
_WORD_START = re.compile(r"(\s*[a-zA-Z\u00C0-\u024F])(.+)")
# Containers a list continues across: only a text block (or a form field) ends a list.
_CONTAINER_GROUPS = frozenset({GroupLabel.FORM_AREA, GroupLabel.KEY_VALUE_AREA})


class _Boundaries:
    """Applies the cross-page rules at each boundary between two shards' body children."""

    def __init__(self, doc: DoclingDocument, children_per_shard: list[int]) -> None:
        self.doc = doc
        self.children: list[NodeItem] = [ref.resolve(doc) for ref in doc.body.children]
        self.starts: list[int] = []  # index in ``children`` of each later shard's first child
        position = 0
        for count in children_per_shard[:-1]:
            position += count
            self.starts.append(position)
        self.removed: set[str] = set()

    def rejoin(self) -> None:
        for k, start in enumerate(self.starts):
            stop = self.starts[k + 1] if k + 1 < len(self.starts) else len(self.children)
            self.continue_paragraph(start, stop)
            self.continue_list(start, stop)
        if self.removed:
            gone = [item for item in self.children if item.self_ref in self.removed]
            self.doc.delete_items(node_items=gone)

    # -- walking ---------------------------------------------------------------------

    def _before(self, start: int, passes: frozenset[DocItemLabel] | None) -> NodeItem | None:
        """The last body child before ``start`` that the rule does not look past."""
        for index in range(start - 1, -1, -1):
            item = self.children[index]
            if item.self_ref not in self.removed and not self._passes(item, passes):
                return item
        return None

    def _after(
        self, start: int, stop: int, passes: frozenset[DocItemLabel] | None
    ) -> tuple[NodeItem, int] | None:
        """The first child of this shard (``start`` to ``stop``) the rule does not look
        past, and its index; a later shard's boundary handles what lies beyond."""
        for index in range(start, stop):
            item = self.children[index]
            if item.self_ref not in self.removed and not self._passes(item, passes):
                return item, index
        return None

    @staticmethod
    def _passes(item: NodeItem, labels: frozenset[DocItemLabel] | None) -> bool:
        """Whether the rule looks past ``item``: by label for paragraphs, by kind (tables,
        pictures, code, containers) for lists (``labels`` None)."""
        if labels is not None:
            return isinstance(item, DocItem) and item.label in labels
        if isinstance(item, TableItem | PictureItem | CodeItem):
            return True
        return isinstance(item, GroupItem) and item.label in _CONTAINER_GROUPS

    # -- a paragraph over a page break -------------------------------------------------

    def continue_paragraph(self, start: int, stop: int) -> None:
        """docling runs a paragraph's chain on over every text block of a later page that
        continues it (the chain's first block is on an earlier page, so later blocks
        need not be in a second column): the last paragraph before the boundary takes
        each continuing paragraph of this shard in turn, until one does not continue it."""
        head = self._before(start, _CONTINUES_ACROSS)
        if not _is_paragraph(head):
            return
        index = start
        while (found := self._after(index, stop, _CONTINUES_ACROSS)) is not None:
            tail, at = found
            if not _is_paragraph(tail) or tail.children:
                return
            if not (
                _OPEN_END.fullmatch(_last_part(head)) and _WORD_START.fullmatch(_first_part(tail))
            ):
                return
            _append_paragraph(head, tail)
            self.removed.add(tail.self_ref)
            index = at + 1

    # -- a list over a page break ----------------------------------------------------

    def continue_list(self, start: int, stop: int) -> None:
        open_list = self._before(start, None)
        found = self._after(start, stop, None)
        tail = found[0] if found else None
        if not (isinstance(open_list, ListGroup) and isinstance(tail, ListGroup)):
            return
        target = open_list.get_ref()
        for ref in tail.children:
            ref.resolve(self.doc).parent = target
            open_list.children.append(ref)
        tail.children = []
        self.removed.add(tail.self_ref)


def _is_paragraph(item: NodeItem | None) -> TypeGuard[TextItem]:
    return (
        isinstance(item, TextItem)
        and item.label is DocItemLabel.TEXT
        and item.content_layer is ContentLayer.BODY
    )


def _part_length(prov: ProvenanceItem) -> int:
    start, end = prov.charspan
    return end - start


def _last_part(item: TextItem) -> str:
    """The text of the last page element joined into ``item`` (the whole text when it is
    one element): docling tests that element's text, which ends the item's text, and its
    provenance charspan has its length."""
    length = _part_length(item.prov[-1]) if item.prov else 0
    return item.text[-length:] if length > 0 else item.text


def _first_part(item: TextItem) -> str:
    length = _part_length(item.prov[0]) if item.prov else 0
    return item.text[:length] if length > 0 else item.text


def _append_paragraph(head: TextItem, tail: TextItem) -> None:
    """Join ``tail`` onto ``head`` as docling's ``_merge_elements`` does: a split word
    (soft hyphen, or a hyphen before a lowercase letter) is rejoined, anything else gets a
    space; the tail's provenance follows, its first entry's charspan counted from the
    head's old length as docling counts it."""
    before = len(head.text)
    continuation = tail.text.lstrip()
    split_word = head.text.endswith("\u00ad") or (
        head.text.endswith("-") and bool(continuation) and continuation[0].islower()
    )
    if split_word:
        head.text = head.text[:-1] + tail.text
        head.orig = head.orig[:-1] + tail.text
    else:
        head.text += f" {tail.text}"
        head.orig += f" {tail.text}"
    offset_first = before + 1
    offset_rest = len(head.text) - len(tail.text)  # where the tail's text now starts
    for index, prov in enumerate(tail.prov):
        offset = offset_first if index == 0 else offset_rest
        start, end = prov.charspan
        head.prov.append(prov.model_copy(update={"charspan": (start + offset, end + offset)}))
    if head.hyperlink != tail.hyperlink:
        head.hyperlink = None
