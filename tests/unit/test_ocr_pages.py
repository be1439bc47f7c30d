"""Which pages OCR reads in each mode, what they cost the plan, what the parse records and
what the job record says of it: pure rules (richdoc.parse.ocr.pages, richdoc.parse.ocr.mode,
richdoc.parse.ocr.record, richdoc.parse.shard_plan, richdoc.contracts.JobCounts)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.contracts import JobCounts, PageSpan, SourceObject
from richdoc.formats import DocFormat, Inspection
from richdoc.graph import SkippedFeature
from richdoc.jobs import Job, JobStatus
from richdoc.parse.ocr.mode import OcrMode, ocr_mode_setting
from richdoc.parse.ocr.pages import OCR_PAGE_COST, OcrPages, page_costs, pages_to_read
from richdoc.parse.ocr.record import (
    META_FIELD,
    NOTHING_READ_FEATURE,
    OcrRecord,
    record_of_json,
    require_text,
    with_record_json,
)
from richdoc.parse.settings import ParserSettings, Pipeline
from richdoc.parse.shard_plan import MAX_SHARDS, check_partition, plan_shards
from richdoc.taxonomy import UnsupportedFeature

MIXED = Inspection(page_count=5, image_only=(2, 4))
SCAN = Inspection(page_count=3, image_only=(1, 2, 3))


def test_auto_reads_the_pages_without_a_text_layer_and_keeps_the_others() -> None:
    assert pages_to_read(OcrMode.AUTO, DocFormat.PDF, MIXED) == OcrPages(read=(2, 4))
    assert pages_to_read(OcrMode.AUTO, DocFormat.PDF, SCAN) == OcrPages(read=(1, 2, 3))


def test_force_reads_every_page() -> None:
    assert pages_to_read(OcrMode.FORCE, DocFormat.PDF, MIXED).read == (1, 2, 3, 4, 5)


def test_off_names_the_unread_pages_of_a_mixed_document() -> None:
    assert pages_to_read(OcrMode.OFF, DocFormat.PDF, MIXED) == OcrPages(unread=(2, 4))


@pytest.mark.parametrize(
    ("fmt", "inspection"),
    [(DocFormat.PDF, SCAN), (DocFormat.IMAGE, Inspection(page_count=2, image_only=(1, 2)))],
    ids=["scanned pdf", "image"],
)
def test_off_refuses_a_document_only_ocr_could_read(fmt: DocFormat, inspection: Inspection) -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        pages_to_read(OcrMode.OFF, fmt, inspection)
    assert refused.value.feature == "ocr"


def test_a_shard_reads_only_its_own_pages() -> None:
    shard = PageSpan(start=3, end=5)
    assert pages_to_read(OcrMode.AUTO, DocFormat.PDF, MIXED, shard).read == (4,)
    assert pages_to_read(OcrMode.FORCE, DocFormat.PDF, MIXED, shard).read == (3, 4, 5)
    assert pages_to_read(OcrMode.OFF, DocFormat.PDF, MIXED, shard).unread == (4,)


@pytest.mark.parametrize("fmt", [DocFormat.DOCX, DocFormat.HTML, DocFormat.XLSX])
def test_formats_with_a_text_layer_are_never_ocr_read(fmt: DocFormat) -> None:
    assert pages_to_read(OcrMode.FORCE, fmt, Inspection(page_count=3)) == OcrPages()


@pytest.mark.parametrize(
    ("raw", "mode"), [("", OcrMode.AUTO), ("off", OcrMode.OFF), ("force", OcrMode.FORCE)]
)
def test_the_mode_setting(raw: str, mode: OcrMode) -> None:
    assert ocr_mode_setting({"RICHDOC_OCR_MODE": raw}) is mode


@pytest.mark.parametrize("raw", ["sometimes", "OFF"])
def test_an_unknown_mode_is_a_configuration_error(raw: str) -> None:
    # Exactly the template's AllowedValues: the shell's value becomes OcrMode locally.
    with pytest.raises(ValueError, match="auto, off or force"):
        ocr_mode_setting({"RICHDOC_OCR_MODE": raw})


# The processor contract -----------------------------------------------------------------


@pytest.mark.docling
@pytest.mark.parametrize("fmt", [DocFormat.PDF, DocFormat.IMAGE])
def test_the_ocr_mode_is_part_of_the_contract_of_formats_ocr_reads(fmt: DocFormat) -> None:
    contracts = {
        ParserSettings(Pipeline.NATIVE, ocr_mode=mode).conversion(fmt).contract for mode in OcrMode
    }
    assert len(contracts) == len(OcrMode)


@pytest.mark.docling
def test_the_ocr_mode_leaves_other_formats_contracts_alone() -> None:
    contracts = {
        ParserSettings(Pipeline.NATIVE, ocr_mode=mode).conversion(DocFormat.DOCX).contract
        for mode in OcrMode
    }
    assert len(contracts) == 1


def test_images_are_converted_by_the_pdf_pipeline() -> None:
    settings = ParserSettings(Pipeline.NATIVE)
    assert settings.pipeline_for(DocFormat.IMAGE) is Pipeline.NATIVE
    assert settings.may_ocr(DocFormat.IMAGE) and not settings.may_ocr(DocFormat.DOCX)
    assert not ParserSettings(Pipeline.NATIVE, ocr_mode=OcrMode.OFF).may_ocr(DocFormat.PDF)


# Page cost and shards -------------------------------------------------------------------


def test_a_page_ocr_reads_costs_more_than_a_text_page() -> None:
    assert page_costs(4, [2, 3]) == [1, OCR_PAGE_COST, OCR_PAGE_COST, 1]


def test_a_scan_shorter_than_a_shard_is_sharded_by_its_cost() -> None:
    pages = 40
    text = plan_shards(DocFormat.PDF, pages, 50)
    scanned = plan_shards(DocFormat.PDF, pages, 50, costs=page_costs(pages, range(1, pages + 1)))
    assert not text.sharded
    assert scanned.shard_count == -(-pages * OCR_PAGE_COST // 50)
    check_partition(scanned.ranges, pages)


def test_the_scanned_part_of_a_mixed_document_gets_the_smaller_shards() -> None:
    # 60 text pages, then 60 scanned ones: the shards over the scans hold fewer pages.
    costs = page_costs(120, range(61, 121))
    plan = plan_shards(DocFormat.PDF, 120, 50, costs=costs)
    check_partition(plan.ranges, 120)
    sizes = [r.page_count for r in plan.ranges]
    assert sizes[0] > sizes[-1]


def test_uniform_costs_plan_as_page_counts_do() -> None:
    for pages in (51, 77, 130, 999):
        assert plan_shards(DocFormat.PDF, pages, 50, costs=[1] * pages) == plan_shards(
            DocFormat.PDF, pages, 50
        )


@given(
    costs=st.lists(st.sampled_from([1, OCR_PAGE_COST]), min_size=1, max_size=400),
    shard_pages=st.integers(1, 120),
    max_shards=st.integers(1, MAX_SHARDS),
)
def test_cost_balanced_shards_cover_every_page_once_and_stay_within_their_share(
    costs: list[int], shard_pages: int, max_shards: int
) -> None:
    pages = len(costs)
    plan = plan_shards(DocFormat.PDF, pages, shard_pages, costs=costs, max_shards=max_shards)
    if not plan.sharded:
        assert sum(costs) <= shard_pages or max_shards == 1 or pages == 1
        return
    check_partition(plan.ranges, pages)
    shares = [sum(costs[r.start - 1 : r.end]) for r in plan.ranges]
    # Each shard ends at the first page that reaches its share of the total, so none goes
    # past its share by more than one page's cost (the last takes what is left).
    fair = sum(costs) / len(shares)
    assert all(share <= fair + 2 * OCR_PAGE_COST for share in shares[:-1])


def test_images_shard_like_pdfs() -> None:
    assert plan_shards(DocFormat.IMAGE, 100, 50, costs=page_costs(100, range(1, 101))).sharded


# The record ------------------------------------------------------------------------------


def test_the_shards_records_join_into_the_documents() -> None:
    first = OcrRecord(engine="e", mode=OcrMode.OFF, ocr_pages=[], unread_pages=[2])
    second = OcrRecord(engine="e", mode=OcrMode.OFF, ocr_pages=[], unread_pages=[7, 9])
    assert OcrRecord.join([first, second]) == OcrRecord(
        engine="e", mode=OcrMode.OFF, ocr_pages=[], unread_pages=[2, 7, 9]
    )
    assert OcrRecord.join([]) is None


def test_a_body_carries_the_record_next_to_other_metadata() -> None:
    record = OcrRecord(engine="e", mode=OcrMode.AUTO, ocr_pages=[1], unread_pages=[])
    body = with_record_json({"self_ref": "#/body", "meta": {"other__x": 1}}, record)
    assert body["meta"]["other__x"] == 1
    assert record_of_json({"body": body}) == record
    assert "meta" not in with_record_json({"self_ref": "#/body"}, None)


# The job record ----------------------------------------------------------------------------

_COUNTS = {
    "nodes": 3,
    "edges": 2,
    "spans": 2,
    "ambiguities": 0,
    "ambiguities_suppressed": 0,
    "chunks": 1,
    "tables": 0,
}
_NATIVE = JobCounts.model_validate(_COUNTS)


def _printed_counts(counts: JobCounts) -> dict[str, object]:
    source = SourceObject(bucket="b", key="scan.pdf")
    job = Job(job_id="j", status=JobStatus.SUCCEEDED, run=1, source=source, counts=counts)
    stored = Job.from_item(job.to_item())
    assert stored.counts == counts
    printed = stored.to_dict()["counts"]
    assert isinstance(printed, dict)
    return printed


def test_a_job_names_its_ocr_and_unread_pages_and_says_nothing_of_ocr_without_them() -> None:
    off = _NATIVE.model_copy(update={"ocr_page_count": 0, "unread_pages": [2]})
    assert _printed_counts(off) == {
        **_COUNTS,
        "ocr_page_count": 0,
        "unread_pages": [2],
    }
    assert _printed_counts(_NATIVE) == _COUNTS


def _document(texts: list[str], *, ocr_pages: list[int] | None) -> Any:
    from docling_core.types.doc import DocItemLabel, DoclingDocument
    from docling_core.types.doc.common.meta import BaseMeta

    doc = DoclingDocument(name="scan")
    for text in texts:
        doc.add_text(label=DocItemLabel.TEXT, text=text)
    if ocr_pages is not None:
        record = OcrRecord(engine="e", mode=OcrMode.AUTO, ocr_pages=ocr_pages, unread_pages=[])
        doc.body.meta = BaseMeta()
        setattr(doc.body.meta, META_FIELD, record.model_dump(mode="json"))
    return doc


def test_a_document_ocr_found_no_text_in_is_unsupported_as_pictures() -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        require_text(_document([" "], ocr_pages=[1, 2]))
    assert refused.value.feature == NOTHING_READ_FEATURE == SkippedFeature.PICTURES.value
    assert "OCR read page(s) 1, 2 and found no text" in refused.value.reason


def test_a_document_with_text_or_without_ocr_passes() -> None:
    require_text(_document(["Signed on 14 May 2024."], ocr_pages=[1]))
    require_text(_document([], ocr_pages=None))  # an empty document OCR never touched
    require_text(_document([], ocr_pages=[]))  # OCR off: its unread pages are named apart
