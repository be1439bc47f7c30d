"""Merging page-range shards: the merged DoclingDocument is the whole document's.

The join is checked against docling-core's ``concatenate`` where that is right, and
what concatenate gets wrong for shards (page numbers after a failed page, name, origin)
on hand-built documents; what docling's standard pipeline decides across pages is
checked against docling's own reading-order assembly (``ReadingOrderModel``,
rule-based: it runs without model weights) fed the same page elements whole and per
shard. Real conversions are in tests/parse/test_parse_shards.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from docling_core.types.doc import (
    BoundingBox,
    ContentLayer,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    DocumentOrigin,
    ProvenanceItem,
    Size,
    TableCell,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from richdoc.contracts import PageSpan
from richdoc.parse.merge import Shard, dump_document, merge_shard_json, merge_shards
from richdoc.parse.ocr.mode import OcrMode
from richdoc.parse.ocr.record import OcrRecord, with_record_json
from richdoc.parse.settings import Pipeline
from richdoc.projection import project
from richdoc.taxonomy import CorruptInput, PipelineError, UnsupportedFeature
from richdoc_client.projection import ProjectionSource

ORIGIN = DocumentOrigin(mimetype="application/pdf", filename="document.pdf", binary_hash=42)
PAGE = Size(width=612.0, height=792.0)


def _native_shard(pages: PageSpan, converted: list[int], origin: DocumentOrigin = ORIGIN) -> Shard:
    """What the native pipeline makes of ``pages`` when only ``converted`` parse: one text
    item per line, under the body, with the source's page numbers."""
    doc = DoclingDocument(name="document", origin=origin)
    for page_no in converted:
        doc.add_page(page_no=page_no, size=PAGE)
        for line in range(2):
            text = f"page {page_no} line {line}"
            box = BoundingBox(l=72, t=700 - 14 * line, r=300, b=690 - 14 * line)
            doc.add_text(
                label=DocItemLabel.TEXT,
                text=text,
                prov=ProvenanceItem(page_no=page_no, bbox=box, charspan=(0, len(text))),
            )
    return Shard(pages, doc)


def _prov_pages(doc: DoclingDocument) -> list[int]:
    return [prov.page_no for text in doc.texts for prov in text.prov]


# What concatenate leaves to the merge ------------------------------------------------


def test_docling_core_concatenate_renumbers_pages_after_a_gap() -> None:
    """The fact the merge works around: concatenate numbers each document's pages on from
    the previous one's last page, so a failed first page of a shard shifts the rest."""
    shards = [
        _native_shard(PageSpan(start=1, end=2), [1, 2]),
        _native_shard(PageSpan(start=3, end=4), [4]),
    ]
    joined = DoclingDocument.concatenate([shard.document for shard in shards])
    assert sorted(joined.pages) == [1, 2, 3]
    assert (joined.name, joined.origin) == ("document", None)


def test_pages_keep_their_source_numbers_when_a_shard_lost_its_first_page() -> None:
    shards = [
        _native_shard(PageSpan(start=1, end=2), [1, 2]),
        _native_shard(PageSpan(start=3, end=5), [4, 5]),
        _native_shard(PageSpan(start=6, end=6), [6]),
    ]
    merged = merge_shards(shards, pipeline=Pipeline.NATIVE)
    assert list(merged.pages) == [1, 2, 4, 5, 6]
    assert _prov_pages(merged) == [1, 1, 2, 2, 4, 4, 5, 5, 6, 6]
    assert all(page.size == PAGE for page in merged.pages.values())


def test_the_merge_is_the_whole_document_with_the_source_name_and_origin() -> None:
    whole = _native_shard(PageSpan(start=1, end=5), [1, 2, 4, 5]).document
    shards = [
        _native_shard(PageSpan(start=1, end=3), [1, 2]),
        _native_shard(PageSpan(start=4, end=5), [4, 5]),
    ]
    merged = merge_shards(shards, pipeline=Pipeline.NATIVE)
    assert (merged.name, merged.origin) == ("document", ORIGIN)
    assert dump_document(merged) == dump_document(whole)


def test_a_shard_whose_every_page_failed_adds_nothing() -> None:
    empty = Shard(PageSpan(start=3, end=4), DoclingDocument(name="document"))
    shards = [
        _native_shard(PageSpan(start=1, end=2), [1, 2]),
        empty,
        _native_shard(PageSpan(start=5, end=5), [5]),
    ]
    merged = merge_shards(shards, pipeline=Pipeline.NATIVE)
    assert list(merged.pages) == [1, 2, 5] and merged.origin == ORIGIN
    assert _prov_pages(merged) == [1, 1, 2, 2, 5, 5]


def test_a_document_of_which_no_page_converted_is_corrupt_as_it_is_unsharded() -> None:
    shards = [
        Shard(PageSpan(start=1, end=2), DoclingDocument(name="document")),
        Shard(PageSpan(start=3, end=3), DoclingDocument(name="document")),
    ]
    with pytest.raises(CorruptInput, match="any page"):
        merge_shards(shards, pipeline=Pipeline.NATIVE)


def _blank_shard(pages: PageSpan) -> Shard:
    """A shard whose pages converted and held nothing: scans OCR found no text in."""
    doc = DoclingDocument(name="document", origin=ORIGIN)
    for page_no in range(pages.start, pages.end + 1):
        doc.add_page(page_no=page_no, size=PAGE)
    return Shard(pages, doc)


def _ocr_read(shard: Shard, pages: list[int]) -> tuple[PageSpan, bytes]:
    """A shard's artifact JSON whose ``pages`` OCR read (its record on the body)."""
    record = OcrRecord(engine="rapidocr", mode=OcrMode.AUTO, ocr_pages=pages, unread_pages=[])
    document = json.loads(dump_document(shard.document))
    document["body"] = with_record_json(document["body"], record)
    return shard.pages, json.dumps(document).encode()


def test_a_sharded_document_ocr_found_nothing_in_is_unsupported_as_it_is_unsharded() -> None:
    """Only the whole document decides: the merge refuses it, as a whole parse would."""
    blank_pages = [
        _ocr_read(_blank_shard(PageSpan(start=1, end=2)), [1, 2]),
        _ocr_read(_blank_shard(PageSpan(start=3, end=3)), [3]),
    ]
    with pytest.raises(UnsupportedFeature, match="nothing readable") as refused:
        merge_shard_json(blank_pages, pipeline=Pipeline.NATIVE)
    assert refused.value.feature == "pictures"
    # A shard OCR found nothing in, beside one with text, is part of a document with text.
    mixed = [blank_pages[0], _ocr_read(_native_shard(PageSpan(start=3, end=3), [3]), [3])]
    merged = DoclingDocument.model_validate_json(merge_shard_json(mixed, pipeline=Pipeline.NATIVE))
    assert [text.text for text in merged.texts] == ["page 3 line 0", "page 3 line 1"]


def test_merging_works_on_the_artifacts_json() -> None:
    shards = [
        _native_shard(PageSpan(start=1, end=1), [1]),
        _native_shard(PageSpan(start=2, end=3), [2, 3]),
    ]
    parts = [(shard.pages, dump_document(shard.document)) for shard in shards]
    merged = merge_shard_json(parts, pipeline=Pipeline.NATIVE)
    assert merged == dump_document(_native_shard(PageSpan(start=1, end=3), [1, 2, 3]).document)


def test_the_artifacts_json_joined_without_validation_is_what_validation_would_dump() -> None:
    shards = [
        _native_shard(PageSpan(start=1, end=1), [1]),
        _native_shard(PageSpan(start=2, end=3), [2, 3]),
    ]
    parts = [(shard.pages, dump_document(shard.document)) for shard in shards]
    validated = dump_document(merge_shards(shards, pipeline=Pipeline.NATIVE))
    assert merge_shard_json(parts, pipeline=Pipeline.NATIVE) == validated
    # A shard with a top-level field the others leave out (docling-core drops some when
    # empty) is validated first: the merged JSON keeps docling-core's field order.
    extra = json.loads(parts[1][1])
    extra["field_regions"] = []
    odd = [parts[0], (parts[1][0], json.dumps(extra).encode())]
    assert merge_shard_json(odd, pipeline=Pipeline.NATIVE) == validated


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        (
            [
                _native_shard(PageSpan(start=1, end=2), [1, 2]),
                _native_shard(PageSpan(start=4, end=4), [4]),
            ],
            "page 3",
        ),
        ([_native_shard(PageSpan(start=1, end=2), [1, 2, 3])], r"holds pages \[3\]"),
        (
            [
                _native_shard(PageSpan(start=1, end=1), [1]),
                _native_shard(
                    PageSpan(start=2, end=2), [2], ORIGIN.model_copy(update={"binary_hash": 7})
                ),
            ],
            "origins differ",
        ),
    ],
    ids=["gap", "page outside its range", "another document"],
)
def test_shards_that_are_not_one_documents_pages_in_order_are_refused(
    shards: list[Shard], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        merge_shards(shards, pipeline=Pipeline.NATIVE)


# The standard pipeline's cross-page decisions, against docling's own assembly --------


def _element(page: int, cid: int, label: DocItemLabel, text: str, y: float) -> Any:
    from docling.datamodel.base_models import Cluster, FigureElement, Table, TextElement

    box = BoundingBox(l=72, t=y, r=500, b=y + 12, coord_origin=CoordOrigin.TOPLEFT)
    cluster = Cluster(id=cid, label=label, bbox=box)
    if label is DocItemLabel.TABLE:
        cells = [
            TableCell(
                text=value,
                start_row_offset_idx=row,
                end_row_offset_idx=row + 1,
                start_col_offset_idx=0,
                end_col_offset_idx=1,
                column_header=row == 0,
            )
            for row, value in enumerate(("Item", text))
        ]
        return Table(
            label=label,
            id=cid,
            page_no=page,
            cluster=cluster,
            otsl_seq=[],
            num_rows=2,
            num_cols=1,
            table_cells=cells,
        )
    if label is DocItemLabel.PICTURE:
        return FigureElement(label=label, id=cid, page_no=page, cluster=cluster)
    return TextElement(label=label, id=cid, page_no=page, text=text, cluster=cluster)


def _assemble(pages: range, elements: list[Any]) -> DoclingDocument:
    """docling's reading-order assembly (the standard pipeline's last stage) of the page
    elements on ``pages``: what a conversion with ``page_range`` would assemble."""
    from docling.datamodel.base_models import AssembledUnit, Page
    from docling.datamodel.document import ConversionResult
    from docling.models.stages.reading_order.readingorder_model import (
        ReadingOrderModel,
        ReadingOrderOptions,
    )

    result = ConversionResult.model_construct(
        input=SimpleNamespace(file=Path("document.pdf"), document_hash="42"),
        pages=[Page(page_no=no, size=PAGE) for no in pages],
        assembled=AssembledUnit(elements=[e for e in elements if e.page_no in pages]),
        errors=[],
    )
    return ReadingOrderModel(ReadingOrderOptions())(result)


def _tree(doc: DoclingDocument) -> list[tuple[Any, ...]]:
    """Everything of a document but its self-refs: the walk, with text and provenance."""
    return [
        (
            level,
            type(item).__name__,
            str(getattr(item, "label", "")),
            getattr(item, "text", None),
            getattr(item, "orig", None),
            [(p.page_no, p.charspan, p.bbox) for p in getattr(item, "prov", [])],
        )
        for item, level in doc.iterate_items(
            with_groups=True, traverse_pictures=True, included_content_layers=set(ContentLayer)
        )
    ]


def _projected(doc: DoclingDocument) -> bytes | str:
    try:
        return project(doc, ProjectionSource(name="large.pdf")).to_json_bytes()
    except PipelineError as exc:  # e.g. a document of footnotes only: the same refusal
        return repr(exc)


def _sharded(
    pages: int, cuts: list[int], elements: list[Any], pipeline: Pipeline
) -> DoclingDocument:
    starts = [1, *cuts]
    ends = [*(c - 1 for c in cuts), pages]
    shards = [
        Shard(PageSpan(start=a, end=b), _assemble(range(a, b + 1), elements))
        for a, b in zip(starts, ends, strict=True)
    ]
    return merge_shards(shards, pipeline=pipeline)


L = DocItemLabel
ACROSS_PAGES = {
    "a paragraph over a page break, past the footer and header": (
        [
            (1, L.SECTION_HEADER, "Terms"),
            (1, L.TEXT, "The agreement runs until the"),
            (1, L.PAGE_FOOTER, "page 1"),
            (2, L.PAGE_HEADER, "ACME"),
            (2, L.TEXT, "end of the year unless renewed,"),
            (2, L.TEXT, "and it then renews for one year."),
        ],
        [2],
    ),
    "a word hyphenated over a page break": (
        [(1, L.TEXT, "The agreement is renew-"), (2, L.TEXT, "able every year.")],
        [2],
    ),
    "a paragraph over three one-page shards": (
        [
            (1, L.TEXT, "It starts on page one and"),
            (2, L.TABLE, "42"),
            (2, L.TEXT, "goes on over page two and"),
            (3, L.TEXT, "ends on page three."),
        ],
        [2, 3],
    ),
    "a list over a page break": (
        [
            (1, L.LIST_ITEM, "first item"),
            (2, L.LIST_ITEM, "second item"),
            (2, L.TEXT, "Closing words."),
        ],
        [2],
    ),
    "a list over a table at the top of the next page": (
        [(1, L.LIST_ITEM, "first item"), (2, L.TABLE, "7"), (2, L.LIST_ITEM, "second item")],
        [2],
    ),
}


def _elements(spec: list[tuple[int, DocItemLabel, str]]) -> list[Any]:
    per_page: dict[int, int] = {}
    elements = []
    for page, label, text in spec:
        index = per_page[page] = per_page.get(page, -1) + 1
        y = (
            20.0
            if label is L.PAGE_HEADER
            else 760.0
            if label is L.PAGE_FOOTER
            else 60.0 + 40 * index
        )
        elements.append(_element(page, index, label, text, y))
    return elements


@pytest.mark.docling
@pytest.mark.parametrize("case", list(ACROSS_PAGES))
def test_what_the_standard_pipeline_joins_across_pages_is_joined_across_shards(case: str) -> None:
    spec, cuts = ACROSS_PAGES[case]
    elements = _elements(spec)
    pages = max(page for page, _, _ in spec)
    whole = _assemble(range(1, pages + 1), elements)
    merged = _sharded(pages, cuts, elements, Pipeline.STANDARD)
    assert _tree(merged) == _tree(whole)
    assert _projected(merged) == _projected(whole)
    # Without the rules the shard boundary shows: docling joined these across pages.
    assert _tree(_sharded(pages, cuts, elements, Pipeline.NATIVE)) != _tree(whole)


@pytest.mark.docling
def test_a_list_is_not_continued_past_a_page_header() -> None:
    elements = _elements(
        [(1, L.LIST_ITEM, "first item"), (2, L.PAGE_HEADER, "ACME"), (2, L.LIST_ITEM, "second")]
    )
    whole = _assemble(range(1, 3), elements)
    merged = _sharded(2, [2], elements, Pipeline.STANDARD)
    assert _tree(merged) == _tree(whole)
    assert (
        sum(
            1
            for item, _ in whole.iterate_items(with_groups=True)
            if getattr(item, "label", None) == "list"
        )
        == 2
    )


LABELS = [L.TEXT, L.TEXT, L.TEXT, L.LIST_ITEM, L.LIST_ITEM, L.SECTION_HEADER, L.PAGE_HEADER]
LABELS += [L.PAGE_FOOTER, L.CAPTION, L.FOOTNOTE, L.TABLE, L.PICTURE, L.CODE]
TEXTS = ["runs on and", "ends here.", "continued-", "soft\u00ad", "lower start", "Upper Start"]
TEXTS += ["x", "12 numbers", "a, b,", "zed"]


@st.composite
def _documents(draw: st.DrawFn) -> tuple[int, list[Any], list[int]]:
    pages = draw(st.integers(2, 7))
    spec = [
        (page, label, text)
        for page in range(1, pages + 1)
        for label, text in draw(
            st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(TEXTS)), max_size=6)
        )
    ]
    cuts = sorted(draw(st.sets(st.integers(2, pages), min_size=1)))
    return pages, _elements(spec), cuts


@pytest.mark.docling
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_any_sharding_of_a_standard_assembly_merges_to_the_whole(
    document: tuple[int, list[Any], list[int]],
) -> None:
    pages, elements, cuts = document
    whole = _assemble(range(1, pages + 1), elements)
    merged = _sharded(pages, cuts, elements, Pipeline.STANDARD)
    assert _tree(merged) == _tree(whole)
    assert _projected(merged) == _projected(whole)


@pytest.mark.docling
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_the_join_is_docling_cores_concatenate_where_that_keeps_the_pages(
    document: tuple[int, list[Any], list[int]],
) -> None:
    """Groups, tables with their captions, pictures, furniture: every reference is
    renumbered as concatenate renumbers it (shards of an assembly have every page)."""
    pages, elements, cuts = document
    starts, ends = [1, *cuts], [*(c - 1 for c in cuts), pages]
    shards = [
        Shard(PageSpan(start=a, end=b), _assemble(range(a, b + 1), elements))
        for a, b in zip(starts, ends, strict=True)
    ]
    merged = merge_shards(shards, pipeline=Pipeline.NATIVE)
    assert _tree(merged) == _tree(DoclingDocument.concatenate([s.document for s in shards]))
    assert merged.validate_tree(merged.body, raise_on_error=True)


# Heading levels over the whole document ----------------------------------------------


def _headed_shard(pages: PageSpan, headings: list[tuple[int, str, float]]) -> Shard:
    """A layout pipeline's shard: each heading with the type size the parse recorded on
    it (``richdoc.parse.headings``), at level 1 as docling gives it."""
    from richdoc.parse.headings import record_size

    doc = DoclingDocument(name="document", origin=ORIGIN)
    for page_no in range(pages.start, pages.end + 1):
        doc.add_page(page_no=page_no, size=PAGE)
    for page_no, text, size in headings:
        box = BoundingBox(l=72, t=700, r=300, b=700 - size)
        prov = ProvenanceItem(page_no=page_no, bbox=box, charspan=(0, len(text)))
        record_size(doc.add_heading(text, prov=prov), [size])
        doc.add_text(DocItemLabel.TEXT, f"Body of {text}.", prov=prov)
    return Shard(pages, doc)


@pytest.mark.parametrize("pipeline", [Pipeline.LIGHT, Pipeline.STANDARD])
def test_a_merged_document_s_headings_get_the_whole_document_s_levels(pipeline) -> None:
    from docling_core.types.doc import SectionHeaderItem

    from richdoc.parse.headings import assign_levels

    headings = [(1, "Report", 18.0), (1, "1. Scope", 14.0), (2, "1.1 Bays", 12.0)]
    headings += [(3, "2. Findings", 14.0), (3, "2.1 Cold storage", 12.0)]
    whole = _headed_shard(PageSpan(start=1, end=3), headings).document
    assign_levels(whole)
    # Shard 2 alone would make "1.1 Bays" level 1: it is its only heading.
    shards = [
        _headed_shard(PageSpan(start=1, end=1), headings[:2]),
        _headed_shard(PageSpan(start=2, end=2), headings[2:3]),
        _headed_shard(PageSpan(start=3, end=3), headings[3:]),
    ]
    merged = merge_shards(shards, pipeline=pipeline)
    levels = [(h.text, h.level) for h in merged.texts if isinstance(h, SectionHeaderItem)]
    assert levels == [(h.text, h.level) for h in whole.texts if isinstance(h, SectionHeaderItem)]
    assert levels == [
        ("Report", 1),
        ("1. Scope", 2),
        ("1.1 Bays", 3),
        ("2. Findings", 2),
        ("2.1 Cold storage", 3),
    ]
