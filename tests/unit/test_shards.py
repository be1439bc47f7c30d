"""Shard planning: which documents are split, into which page ranges, under which keys,
and the RICHDOC_SHARD_PAGES setting; the page range's one type and its forms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from richdoc.artifacts import docling_key, merged_key
from richdoc.contracts import PageSpan, PageSpanText
from richdoc.formats import DocFormat
from richdoc.jobs import Attempt
from richdoc.parse.settings import DEFAULT_SHARD_PAGES, shard_pages_setting
from richdoc.parse.shard_plan import MAX_SHARDS, ShardPlan, check_partition, plan_shards

# Planning ---------------------------------------------------------------------------------


@given(
    pages=st.integers(1, 5000),
    shard_pages=st.integers(1, 300),
    max_shards=st.integers(1, MAX_SHARDS),
)
def test_a_plan_covers_every_page_once_in_order_with_balanced_shards(
    pages: int, shard_pages: int, max_shards: int
) -> None:
    plan = plan_shards(DocFormat.PDF, pages, shard_pages, max_shards=max_shards)
    assert plan.page_count == pages
    if not plan.sharded:
        assert plan.ranges == () and plan.shard_count == 1
        assert pages <= shard_pages or max_shards == 1
        return
    check_partition(plan.ranges, pages)
    sizes = [r.page_count for r in plan.ranges]
    assert max(sizes) - min(sizes) <= 1
    assert plan.shard_count == len(plan.ranges) == min(math.ceil(pages / shard_pages), max_shards)
    # Shards stay within the configured size unless that would need too many of them.
    assert max(sizes) <= shard_pages or len(sizes) == max_shards


def test_a_document_no_longer_than_one_shard_is_parsed_whole() -> None:
    assert plan_shards(DocFormat.PDF, 50, 50) == ShardPlan(page_count=50)
    halves = (PageSpan(start=1, end=26), PageSpan(start=27, end=51))
    assert plan_shards(DocFormat.PDF, 51, 50).ranges == halves


def test_zero_shard_pages_turns_sharding_off() -> None:
    assert not plan_shards(DocFormat.PDF, 2000, 0).sharded


@pytest.mark.parametrize("fmt", [f for f in DocFormat if f not in (DocFormat.PDF, DocFormat.IMAGE)])
def test_only_pdfs_and_images_are_sharded(fmt: DocFormat) -> None:
    plan = plan_shards(fmt, 400, 50)
    assert (plan.sharded, plan.shard_count) == (False, 1)


def test_the_largest_document_stays_within_the_shard_count_limit() -> None:
    plan = plan_shards(DocFormat.PDF, 2000, 1)
    assert plan.shard_count == MAX_SHARDS
    assert {r.page_count for r in plan.ranges} == {25}  # bigger shards past MAX_SHARDS, not more
    default = plan_shards(DocFormat.PDF, 2000, DEFAULT_SHARD_PAGES)
    assert default.shard_count == 40 and {r.page_count for r in default.ranges} == {50}


def test_negative_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="shard_pages"):
        plan_shards(DocFormat.PDF, 10, -1)


# Page ranges ------------------------------------------------------------------------------


def test_a_page_range_is_one_based_and_inclusive() -> None:
    pages = PageSpan(start=51, end=100)
    assert (pages.page_count, 51 in pages, 100 in pages, 101 in pages, 50 in pages) == (
        50,
        True,
        True,
        False,
        False,
    )


@pytest.mark.parametrize(("start", "end"), [(0, 5), (6, 5), (-1, 3)])
def test_an_empty_or_zero_based_range_is_refused(start: int, end: int) -> None:
    with pytest.raises(ValueError, match=r"greater than or equal to 1|ends at or after"):
        PageSpan(start=start, end=end)


def test_a_page_range_has_one_form_in_payloads_one_in_records_and_one_in_keys() -> None:
    pages = PageSpan(start=51, end=100)
    # State payloads and worker tasks: the object, as every stored execution has it.
    assert pages.model_dump(mode="json") == {"start": 51, "end": 100}
    assert PageSpan.model_validate_json('{"start": 51, "end": 100}') == pages
    # Job records: the text, read back.
    assert str(pages) == "51-100" and PageSpan.parse("51-100") == pages
    # Artifact keys.
    assert pages.key_name == "pages-51-100"


@pytest.mark.parametrize("text", ["", "51", "51-", "-100", "51-100-3", "a-b", "51 - 100", "0-3"])
def test_text_that_is_not_a_page_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        PageSpan.parse(text)


@given(st.integers(1, 10_000), st.integers(0, 10_000))
def test_the_text_form_reads_back_as_the_same_range(start: int, extra: int) -> None:
    pages = PageSpan(start=start, end=start + extra)
    assert PageSpan.parse(str(pages)) == pages


class _Stored(BaseModel):
    pages: PageSpanText | None = None
    done: frozenset[PageSpanText] = frozenset()


def test_records_store_a_page_range_as_its_text_and_read_it_back() -> None:
    # The attribute values written before the type existed, and still written.
    stored = {"pages": "51-100", "done": {"1-50", "51-100"}}
    record = _Stored.model_validate(stored)
    assert record.pages == PageSpan(start=51, end=100)
    assert record.done == {PageSpan(start=1, end=50), PageSpan(start=51, end=100)}
    assert record.model_dump(mode="json")["pages"] == "51-100"
    assert sorted(record.model_dump(mode="json")["done"]) == ["1-50", "51-100"]
    attempt = Attempt(
        job_id="j",
        run=1,
        seq=1,
        stage="parse",
        attempt=1,
        outcome="ok",
        started_at="t",
        pages=PageSpan(start=51, end=100),
    )
    assert attempt.to_item()["pages"] == "51-100" and attempt.to_dict()["pages"] == "51-100"
    assert Attempt.from_item(attempt.to_item()) == attempt


@pytest.mark.parametrize(
    ("ranges", "pages", "message"),
    [
        ([], None, "no shards"),
        ([PageSpan.parse("2-5")], None, "pages 2-5 where page 1 should start"),
        ([PageSpan.parse("1-5"), PageSpan.parse("7-9")], None, "7-9 where page 6 should start"),
        ([PageSpan.parse("1-5"), PageSpan.parse("5-9")], None, "5-9 where page 6 should start"),
        ([PageSpan.parse("1-5"), PageSpan.parse("6-9")], 10, "pages 1-9 of a 10-page"),
    ],
)
def test_shards_must_partition_the_pages_from_the_first(
    ranges: list[PageSpan], pages: int | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_partition(ranges, pages)


# Keys -------------------------------------------------------------------------------------


def test_a_shard_is_cached_under_its_page_range_beside_the_whole_document() -> None:
    assert docling_key("ab12", "c0ffee") == "docling/ab12/c0ffee.json"
    assert docling_key("ab12", "c0ffee", PageSpan(start=51, end=100)) == (
        "docling/ab12/c0ffee/pages-51-100.json"
    )
    assert merged_key("ab12", "c0ffee", 40) == "docling/ab12/c0ffee/shards-40.json"


# The setting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({}, 50), ({"RICHDOC_SHARD_PAGES": ""}, 50), ({"RICHDOC_SHARD_PAGES": "0"}, 0)],
)
def test_shard_pages_default_to_fifty_and_zero_means_off(
    environ: dict[str, str], expected: int
) -> None:
    assert DEFAULT_SHARD_PAGES == 50
    assert shard_pages_setting(environ) == expected
    assert shard_pages_setting({"RICHDOC_SHARD_PAGES": " 7 "}) == 7


@pytest.mark.parametrize("raw", ["-1", "fifty", "2.5"])
def test_a_shard_size_that_is_not_a_page_count_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="RICHDOC_SHARD_PAGES"):
        shard_pages_setting({"RICHDOC_SHARD_PAGES": raw})


@pytest.mark.parametrize(("shard_pages", "expected"), [("", 25), ("50", 25), ("10", 10), ("0", 0)])
def test_the_small_profile_s_cap_shrinks_shards_but_never_turns_sharding_on(
    shard_pages: str, expected: int
) -> None:
    # A 3,008 MB tier holds a 25-page standard-pipeline shard, not a 50-page one.
    environ = {"RICHDOC_SHARD_PAGES": shard_pages, "RICHDOC_MAX_SHARD_PAGES": "25"}
    assert shard_pages_setting(environ) == expected
    with pytest.raises(ValueError, match="RICHDOC_MAX_SHARD_PAGES"):
        shard_pages_setting({"RICHDOC_MAX_SHARD_PAGES": "many"})
