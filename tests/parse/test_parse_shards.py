"""Page-range shards through the real parse worker: a shard converts only its pages,
numbered as in the source, and the merged shards are the whole document: the same
DoclingDocument JSON (native pipeline), projection.json and detection.json."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest
from docling_core.types.doc import DoclingDocument
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from richdoc.artifacts import ArtifactStore, docling_key, merged_key
from richdoc.contracts import PageSpan, PlanOutput, ShardParsed, SourceObject
from richdoc.detection import detect
from richdoc.formats import DocFormat
from richdoc.parse.merge import merge_shard_json
from richdoc.parse.merge_step import merge_objects
from richdoc.parse.ocr.mode import OcrMode
from richdoc.parse.ocr.pages import OCR_PAGE_COST
from richdoc.parse.plan_step import PLAN_RESERVE_S, plan_limits, plan_object
from richdoc.parse.reports import ParseReport
from richdoc.parse.settings import Conversion, ParseLimits, ParserSettings, Pipeline
from richdoc.parse.shard_plan import plan_shards
from richdoc.parse.step import (
    PARSE_RESERVE_S,
    ParseWorker,
    parse_file,
    parse_object,
    shared_worker,
)
from richdoc.projection import load_docling, project
from richdoc.taxonomy import CorruptInput, ResourceLimit, UnsupportedFeature
from richdoc_client.projection import ProjectionSource
from tests.support import damaged_inputs, parse_inputs

# One zygote per test process: keep the docling tests in one xdist worker.
pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

LIMITS = ParseLimits(max_pages=2000, timeout_s=120, mem_ceiling_mb=4096)
PAGES = 60


@pytest.fixture(scope="session")
def worker() -> ParseWorker:
    return shared_worker(ParserSettings(Pipeline.NATIVE), quiet=True)


def _pdf(worker: ParseWorker) -> Conversion:
    """How ``worker`` converts a PDF: what the plan of a PDF decides with its settings."""
    return worker.settings.conversion(DocFormat.PDF)


def _planned(plan: PlanOutput) -> Conversion:
    """The plan's conversion, as the state machine hands it to every parse."""
    return Conversion(DocFormat(plan.format), Pipeline(plan.pipeline), plan.contract)


class Parses:
    """Conversions of one file through the worker, each page range converted once."""

    def __init__(self, worker: ParseWorker, source: Path, out: Path) -> None:
        self.worker, self.source, self.out = worker, source, out
        self.done: dict[PageSpan | None, bytes] = {}

    def json(self, pages: PageSpan | None = None, *, accept_partial: bool = True) -> bytes:
        if pages not in self.done:
            target = self.out / f"{pages or 'whole'}.json"
            parse_file(
                self.source,
                target,
                LIMITS,
                worker=self.worker,
                pages=pages,
                accept_partial=accept_partial,
            )
            self.done[pages] = target.read_bytes()
        return self.done[pages]

    def merged(self, ranges: list[PageSpan] | tuple[PageSpan, ...]) -> bytes:
        # Two shards at a time, as two Map iterations would share this machine's cores.
        with ThreadPoolExecutor(2) as pool:
            parts = list(zip(ranges, pool.map(self.json, ranges), strict=True))
        return merge_shard_json(parts, pipeline=Pipeline.NATIVE)


@pytest.fixture(scope="module")
def agreement(worker: ParseWorker, tmp_path_factory: pytest.TempPathFactory) -> Parses:
    folder = tmp_path_factory.mktemp("agreement")
    source = parse_inputs.long_pdf(folder / "agreement.pdf", pages=PAGES, seed=7)
    return Parses(worker, source, folder)


def _outputs(docling_json: bytes) -> tuple[bytes, bytes]:
    """projection.json and detection.json, as the project and detect steps write them."""
    doc = load_docling(docling_json)
    projection = project(doc, ProjectionSource(name="in/agreement.pdf", pipeline="native"))
    return projection.to_json_bytes(), detect(projection, clarify=True).to_json_bytes()


def test_a_shard_converts_only_its_pages_numbered_as_in_the_source(worker, tmp_path) -> None:
    source = parse_inputs.long_pdf(tmp_path / "a.pdf", pages=6, seed=1)
    report = parse_file(
        source, tmp_path / "s.json", LIMITS, worker=worker, pages=PageSpan(start=3, end=5)
    )
    doc = DoclingDocument.model_validate_json((tmp_path / "s.json").read_bytes())
    assert list(doc.pages) == [3, 4, 5]
    assert {prov.page_no for text in doc.texts for prov in text.prov} == {3, 4, 5}
    assert (report.page_count, report.page_range, report.partial) == (
        6,
        PageSpan(start=3, end=5),
        False,
    )
    assert doc.origin is not None and doc.origin.filename == "document.pdf"


@pytest.mark.parametrize("shard_pages", [1, 7, 50, PAGES - 1])
def test_the_merged_shards_are_the_whole_document(agreement: Parses, shard_pages: int) -> None:
    plan = plan_shards(DocFormat.PDF, PAGES, shard_pages)
    assert plan.sharded
    merged = agreement.merged(plan.ranges)
    whole = agreement.json()
    assert merged == whole
    projection, detection = _outputs(merged)
    assert (projection, detection) == _outputs(whole)
    assert json.loads(detection)["stats"]["ambiguities"] == 1  # the text's dates are found


@st.composite
def _partitions(draw: st.DrawFn, pages: int) -> list[PageSpan]:
    cuts = sorted(draw(st.sets(st.integers(2, pages), max_size=pages - 1)))
    starts = [1, *cuts]
    ends = [*(c - 1 for c in cuts), pages]
    return [PageSpan(start=a, end=b) for a, b in zip(starts, ends, strict=True)]


@pytest.fixture(scope="module")
def short(worker: ParseWorker, tmp_path_factory: pytest.TempPathFactory) -> Parses:
    folder = tmp_path_factory.mktemp("short")
    return Parses(worker, parse_inputs.long_pdf(folder / "short.pdf", pages=8, seed=3), folder)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(ranges=_partitions(8))
def test_any_page_ranges_merge_to_the_whole_document(short: Parses, ranges: list[PageSpan]) -> None:
    assert short.merged(ranges) == short.json()


@pytest.fixture(scope="module")
def broken(worker: ParseWorker, tmp_path_factory: pytest.TempPathFactory) -> Parses:
    folder = tmp_path_factory.mktemp("broken")
    source = parse_inputs.pdf_with_broken_page(folder / "broken.pdf", pages=6, broken=4)
    return Parses(worker, source, folder)


@pytest.mark.parametrize("shard_pages", [1, 2, 3, 5])
def test_a_page_that_fails_fails_alike_sharded_and_whole(broken: Parses, shard_pages: int) -> None:
    """At the biggest tier (partial results accepted) the merge of a document with a
    broken page 4 is the whole document's partial conversion, whichever shard held it,
    including a one-page shard whose only page failed."""
    ranges = plan_shards(DocFormat.PDF, 6, shard_pages).ranges
    merged = broken.merged(ranges)
    assert merged == broken.json()
    assert list(DoclingDocument.model_validate_json(merged).pages) == [1, 2, 3, 5, 6]


@pytest.mark.parametrize("pages", [PageSpan(start=3, end=4), PageSpan(start=4, end=4)], ids=str)
def test_below_the_biggest_tier_a_shard_with_a_failed_page_asks_for_a_bigger_tier(
    broken: Parses, pages: PageSpan, tmp_path: Path
) -> None:
    with pytest.raises(ResourceLimit, match="bigger tier"):
        parse_file(
            broken.source,
            tmp_path / "x.json",
            LIMITS,
            worker=broken.worker,
            pages=pages,
            accept_partial=False,
        )


def test_only_paginated_formats_convert_by_page_range(worker, tmp_path) -> None:
    source = parse_inputs.docx(tmp_path / "c.docx")
    with pytest.raises(ValueError, match="no pages"):
        parse_file(
            source, tmp_path / "x.json", LIMITS, worker=worker, pages=PageSpan(start=1, end=1)
        )


def test_a_page_range_past_the_last_page_is_refused(worker, tmp_path) -> None:
    source = parse_inputs.pdf(tmp_path / "a.pdf", pages=3)
    with pytest.raises(Exception, match=r"pages 3-4 are beyond the document's 3 pages"):
        parse_file(
            source, tmp_path / "x.json", LIMITS, worker=worker, pages=PageSpan(start=3, end=4)
        )


@pytest.mark.parametrize("pages", [PageSpan(start=1, end=1), PageSpan(start=2, end=2)], ids=str)
def test_a_shard_of_a_pdf_with_a_page_pdfium_cannot_load_is_corrupt(
    worker, tmp_path, pages
) -> None:
    # Past the inspection (its first page has text), docling-parse cannot load the
    # document in any shard: the document's fault, never internal.
    source = damaged_inputs.later_page_unloadable(tmp_path / "half.pdf")
    with pytest.raises(CorruptInput, match="docling could not convert the document"):
        parse_file(source, tmp_path / "x.json", LIMITS, worker=worker, pages=pages)


# In the artifact bucket ------------------------------------------------------------------


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        client = boto3.client("s3")
        client.create_bucket(Bucket="ingest")
        client.create_bucket(Bucket="artifacts")
        yield client


def test_each_shard_is_cached_under_its_page_range_and_reused(worker, s3, tmp_path) -> None:
    s3.put_object(
        Bucket="ingest",
        Key="big.pdf",
        Body=parse_inputs.pdf(tmp_path / "b.pdf", pages=4).read_bytes(),
    )
    store = ArtifactStore(s3, "artifacts")
    source = SourceObject(bucket="ingest", key="big.pdf")

    def parse(pages: PageSpan | None) -> ParseReport:
        return parse_object(
            store, source, _pdf(worker), LIMITS, accept_partial=False, worker=worker, pages=pages
        )

    three_four = PageSpan(start=3, end=4)
    first, again, other = parse(three_four), parse(three_four), parse(PageSpan(start=1, end=2))
    assert first.docling_key == docling_key(first.sha256, first.contract, three_four)
    assert (first.cached, again.cached, other.cached) == (False, True, False)
    assert again.docling_key == first.docling_key != other.docling_key
    assert again.page_range == three_four and again.page_count == 4
    stored = sorted(item["Key"] for item in s3.list_objects_v2(Bucket="artifacts")["Contents"])
    assert first.docling_key and other.docling_key
    assert stored == sorted([first.docling_key, other.docling_key])
    whole = parse(None)
    assert whole.docling_key == docling_key(first.sha256, first.contract)
    assert whole.page_range is None


def test_a_partial_shard_is_stored_apart_and_never_reused(worker, s3, tmp_path) -> None:
    path = parse_inputs.pdf_with_broken_page(tmp_path / "broken.pdf", pages=6, broken=4)
    s3.put_object(Bucket="ingest", Key="broken.pdf", Body=path.read_bytes())
    store = ArtifactStore(s3, "artifacts")
    source = SourceObject(bucket="ingest", key="broken.pdf")
    four_six = PageSpan(start=4, end=6)

    def parse() -> ParseReport:
        return parse_object(
            store, source, _pdf(worker), LIMITS, accept_partial=True, worker=worker, pages=four_six
        )

    report = parse()
    assert (report.partial, report.failed_pages) == (True, [4])
    assert report.docling_key == docling_key(report.sha256, f"{report.contract}-partial", four_six)
    assert parse().cached is False


# Plan, shards, merge: the library calls the state machine makes -----------------------


def _store_with(s3, key: str, path: Path) -> tuple[ArtifactStore, SourceObject]:
    s3.put_object(Bucket="ingest", Key=key, Body=path.read_bytes())
    return ArtifactStore(s3, "artifacts"), SourceObject(bucket="ingest", key=key)


def _plan(store, source, shard_pages, worker, limits=LIMITS) -> PlanOutput:
    return plan_object(
        store, source, limits, shard_pages=shard_pages, max_concurrency=10, worker=worker
    )


def _parse_shards(store, source, plan, worker, *, accept_partial=True) -> list[ShardParsed]:
    """What the Map state keeps of each shard's parse (the ResultSelector's fields)."""
    results = []
    for span in plan.shards:
        report = parse_object(
            store,
            source,
            _planned(plan),
            LIMITS,
            accept_partial=accept_partial,
            worker=worker,
            pages=span,
        )
        output = report.to_output()
        assert output.page_range == span
        results.append(ShardParsed.model_validate(output.model_dump()))
    return results


def test_a_large_pdf_is_planned_parsed_by_shard_and_merged_into_the_whole(
    worker, s3, tmp_path
) -> None:
    store, source = _store_with(
        s3, "in/big.pdf", parse_inputs.long_pdf(tmp_path / "big.pdf", pages=12, seed=5)
    )
    plan = _plan(store, source, 5, worker)
    assert (plan.page_count, plan.sharded, plan.shard_count, plan.pipeline) == (
        12,
        True,
        3,
        "native",
    )
    assert plan.shards == [
        PageSpan(start=1, end=4),
        PageSpan(start=5, end=8),
        PageSpan(start=9, end=12),
    ]
    assert plan.max_concurrency == 10
    shards = _parse_shards(store, source, plan, worker)
    assert [s.cached for s in shards] == [False] * 3
    merged = merge_objects(store, plan, shards)
    assert plan.sha256 is not None
    assert merged.docling_key == merged_key(plan.sha256, plan.contract, 3)
    assert (merged.page_count, merged.partial, merged.cached) == (12, False, False)
    whole = parse_object(store, source, _pdf(worker), LIMITS, accept_partial=False, worker=worker)
    assert whole.docling_key is not None
    assert store.get_bytes(merged.docling_key) == store.get_bytes(whole.docling_key)
    # A redrive finds every shard and the merge cached.
    again = _parse_shards(store, source, plan, worker)
    assert [s.cached for s in again] == [True] * 3
    assert merge_objects(store, plan, again).cached is True


def test_a_pdf_within_one_shard_or_with_sharding_off_is_planned_whole(worker, s3, tmp_path) -> None:
    store, source = _store_with(s3, "a.pdf", parse_inputs.pdf(tmp_path / "a.pdf", pages=3))
    within = _plan(store, source, 3, worker)
    off = _plan(store, source, 0, worker)
    assert (within.sharded, within.shard_count, within.shards, within.page_count) == (
        False,
        1,
        [],
        3,
    )
    assert (off.sharded, off.page_count, off.sha256) == (False, None, None)  # not even downloaded


def test_other_formats_are_planned_whole_without_inspection(worker, s3, tmp_path) -> None:
    store, source = _store_with(s3, "deck.pptx", parse_inputs.pptx(tmp_path / "d.pptx", slides=60))
    plan = _plan(store, source, 5, worker)
    assert (plan.sharded, plan.page_count, plan.pipeline, plan.sha256) == (
        False,
        None,
        "simple",
        None,
    )


@pytest.mark.parametrize(
    ("make", "error", "feature"),
    [
        (lambda p: parse_inputs.encrypted_pdf(p / "x.pdf"), UnsupportedFeature, "encrypted"),
        (lambda p: parse_inputs.random_bytes(p / "x.pdf"), CorruptInput, None),
        # pdfium raised "Failed to load page." here, and the plan failed as internal.
        (lambda p: damaged_inputs.recursive_page_tree(p / "x.pdf"), CorruptInput, None),
        (lambda p: damaged_inputs.cut_short_pdf(p / "x.pdf"), CorruptInput, None),
    ],
    ids=["encrypted", "not a pdf", "recursive page tree", "cut short"],
)
def test_a_pdf_the_inspection_refuses_fails_at_the_plan_once(
    worker, s3, tmp_path, make, error, feature
) -> None:
    store, source = _store_with(s3, "x.pdf", make(tmp_path))
    with pytest.raises(error) as info:
        _plan(store, source, 1, worker)
    assert getattr(info.value, "feature", None) == feature


def test_a_scan_is_planned_by_the_cost_of_the_pages_ocr_reads(worker, s3, tmp_path) -> None:
    # 3 pages OCR reads cost 9 text pages: two shards where 5 text pages a shard are allowed.
    scan = parse_inputs.pdf(tmp_path / "scan.pdf", pages=3, text=False, image=True)
    store, source = _store_with(s3, "scan.pdf", scan)
    plan = _plan(store, source, 5, worker)
    assert (plan.page_count, plan.ocr_page_count, plan.page_cost) == (3, 3, 3 * OCR_PAGE_COST)
    assert plan.shards == [PageSpan(start=1, end=2), PageSpan(start=3, end=3)]
    text = _store_with(s3, "text.pdf", parse_inputs.pdf(tmp_path / "t.pdf", pages=3))
    assert _plan(*text, 5, worker).sharded is False


def test_with_ocr_off_a_scan_fails_at_the_plan_once(s3, tmp_path) -> None:
    off = shared_worker(ParserSettings(Pipeline.NATIVE, ocr_mode=OcrMode.OFF), quiet=True)
    scan = parse_inputs.pdf(tmp_path / "scan.pdf", pages=3, text=False, image=True)
    with pytest.raises(UnsupportedFeature) as refused:
        _plan(*_store_with(s3, "scan.pdf", scan), 1, off)
    assert refused.value.feature == "ocr"


def test_an_inspection_longer_than_the_plan_invocation_is_a_typed_resource_limit(
    blocking_parse_worker, s3, tmp_path
) -> None:
    # The plan function's timeout (300 s) is below the worker's RICHDOC_TIMEOUT_S (600 s
    # by default): the inspection gets the invocation's remaining time when it starts,
    # less the reserve, so it ends as the worker's ResourceLimit, never as the platform's
    # Sandbox.Timedout. The blocking worker's inspection never finishes: only that cut
    # can end it.
    store, source = _store_with(s3, "in/slow.pdf", parse_inputs.pdf(tmp_path / "slow.pdf"))
    assert plan_limits(LIMITS, remaining_s=PLAN_RESERVE_S + 0.5).timeout_s == 0.5
    read: list[float] = []

    def remaining() -> float:  # the invocation's clock, read once the download is done
        read.append(PLAN_RESERVE_S + 0.5)
        return read[-1]

    with pytest.raises(ResourceLimit, match=r"timeout_s=0\.5"):
        plan_object(
            store,
            source,
            LIMITS,
            shard_pages=1,
            max_concurrency=10,
            worker=blocking_parse_worker,
            remaining_s=remaining,
        )
    assert len(read) == 1


def test_a_conversion_longer_than_the_parse_invocation_is_a_typed_resource_limit(
    blocking_parse_worker, s3, tmp_path
) -> None:
    # ParseTimeoutSeconds goes up to 840 s in a 900 s function: a conversion that starts
    # late would outlast the invocation. Its wall clock is what the invocation has left
    # when it starts, less the reserve for storing and recording, so it ends as the
    # worker's ResourceLimit (the next tier takes it), never as Sandbox.Timedout.
    store, source = _store_with(s3, "in/slow.pdf", parse_inputs.pdf(tmp_path / "slow.pdf"))

    def parse_with(left_s: float) -> None:
        parse_object(
            store,
            source,
            _pdf(blocking_parse_worker),
            LIMITS,
            accept_partial=False,
            worker=blocking_parse_worker,
            remaining_s=lambda: left_s,
        )

    with pytest.raises(ResourceLimit, match=r"timeout_s=0\.5"):
        parse_with(PARSE_RESERVE_S + 0.5)
    # Nothing left beyond the reserve: refused before a child starts.
    with pytest.raises(ResourceLimit, match="no time for the worker"):
        parse_with(PARSE_RESERVE_S - 1)


def test_a_pdf_over_max_pages_fails_at_the_plan(worker, s3, tmp_path) -> None:
    store, source = _store_with(s3, "x.pdf", parse_inputs.pdf(tmp_path / "x.pdf", pages=4))
    limits = ParseLimits(max_pages=3, timeout_s=120, mem_ceiling_mb=4096)
    with pytest.raises(UnsupportedFeature) as info:
        _plan(store, source, 2, worker, limits)
    assert info.value.feature == "max_pages"


def test_a_pdf_over_max_object_mb_fails_at_the_plan_before_it_is_read(worker, s3, tmp_path) -> None:
    store, source = _store_with(s3, "x.pdf", parse_inputs.pdf(tmp_path / "x.pdf", pages=4))
    s3.put_object(Bucket="ingest", Key="x.pdf", Body=b"%PDF-1.7" + bytes(2 << 20))
    limits = ParseLimits(max_pages=3, timeout_s=120, mem_ceiling_mb=4096, max_object_mb=1)
    with pytest.raises(UnsupportedFeature) as info:
        _plan(store, source, 2, worker, limits)
    assert info.value.feature == "max_size"


def test_a_merge_with_a_partial_shard_is_partial_stored_apart_and_never_reused(
    worker, s3, tmp_path
) -> None:
    path = parse_inputs.pdf_with_broken_page(tmp_path / "broken.pdf", pages=6, broken=4)
    store, source = _store_with(s3, "broken.pdf", path)
    plan = _plan(store, source, 2, worker)
    shards = _parse_shards(store, source, plan, worker)
    assert [s.partial for s in shards] == [False, True, False]
    merged = merge_objects(store, plan, shards)
    assert (merged.partial, merged.failed_pages) == (True, [4])
    assert plan.sha256 is not None
    assert merged.docling_key == merged_key(plan.sha256, f"{plan.contract}-partial", 3)
    assert merge_objects(store, plan, shards).cached is False
    whole = parse_object(store, source, _pdf(worker), LIMITS, accept_partial=True, worker=worker)
    assert whole.docling_key is not None
    assert store.get_bytes(merged.docling_key) == store.get_bytes(whole.docling_key)


def test_shards_that_are_not_the_plans_are_refused(worker, s3, tmp_path) -> None:
    store, source = _store_with(s3, "a.pdf", parse_inputs.pdf(tmp_path / "a.pdf", pages=4))
    plan = _plan(store, source, 2, worker)
    shards = _parse_shards(store, source, plan, worker)
    with pytest.raises(ValueError, match="not the plan's"):
        merge_objects(store, plan, shards[::-1])
