"""The small account profile end to end: the template deployed with
``AccountProfile=small`` (a new account's quotas: function memory capped at 3008 MB,
concurrency too low to reserve any) reserves nothing, keeps every function within
3008 MB, and a document that runs out of memory at tier 1 is dead-lettered as
``resource_limit`` without being parsed again at the same memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from richdoc.contracts import ParseInput
from richdoc.jobs import JobStatus
from richdoc.parse.settings import SHARD_PAGES_ENV
from richdoc.taxonomy import ResourceLimit
from tests.support import parse_inputs
from tests.support.parse_inputs import docx_bytes
from tests.support.stack_runs import dead_letters_for, execution, run_one, run_pdf
from tests.support.stack_settings import TEST_STACK

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


@pytest.fixture(scope="module")
def small_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    settings = replace(
        TEST_STACK,
        # Tier 1 at the cap too (whatever the parameter's default): every tier 3008 MB.
        parameters={"AccountProfile": "small", "ParseTier1MemoryMB": "3008"},
        log_path=log_path,
    )
    with EmbeddedStack(settings) as stack:
        yield stack


def _functions(stack: Any) -> dict[str, str]:
    """Deployed function name by the template's logical id."""
    assert stack.runtime is not None
    return {logical_id: name for name, logical_id in stack.runtime.functions.items()}


def test_nothing_reserves_concurrency_and_no_function_asks_for_more_than_3008_mb(
    small_stack: Any,
) -> None:
    client = small_stack.client("lambda")
    for logical_id, name in _functions(small_stack).items():
        assert "ReservedConcurrentExecutions" not in client.get_function_concurrency(
            FunctionName=name
        ), logical_id
        memory = client.get_function_configuration(FunctionName=name)["MemorySize"]
        assert memory <= 3008, (logical_id, memory)


def test_a_document_that_outgrows_3008_mb_is_not_parsed_again_at_3008_mb(
    small_stack: Any, patch_parse: Callable[..., None]
) -> None:
    parsed_at: list[int] = []

    def out_of_memory_at_tier_1(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        parsed_at.append(event.tier)
        if event.tier == 1:
            raise ResourceLimit("child exceeded mem_ceiling_mb=2346")
        return real(event, **kw)

    patch_parse(out_of_memory_at_tier_1)
    job = run_one(small_stack, "small/big.docx", docx_bytes(["too big for 3 GB"]))
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None and job.failure.kind == "resource_limit"
    assert parsed_at == [1]  # tiers 2 and 3 (3008 MB too) refused without parsing
    attempts = [a for a in small_stack.jobs.attempts.of_job(job.job_id) if a.stage == "parse"]
    assert [(a.tier, a.memory_mb, a.outcome) for a in attempts] == [
        (1, 3008, "ResourceLimit"),
        (2, 3008, "ResourceLimit"),
        (3, 3008, "ResourceLimit"),
    ]
    assert all("no more than an earlier tier" in (a.reason or "") for a in attempts[1:])
    assert execution(small_stack, job)["error"] == "resource_limit"
    assert dead_letters_for(small_stack, job.job_id)


def test_shards_are_25_pages_at_most_whatever_shard_pages_says(
    small_stack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ShardPages keeps its default (50): a 3,008 MB tier holds a 25-page shard of the
    # standard pipeline, not a 50-page one, so the profile caps it.
    monkeypatch.delenv(SHARD_PAGES_ENV, raising=False)
    body = parse_inputs.pdf(tmp_path / "long.pdf", pages=30).read_bytes()
    job = run_pdf(small_stack, "small/long.pdf", body)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.shards == 2
    pages = [a.pages for a in small_stack.jobs.attempts.of_job(job.job_id) if a.stage == "parse"]
    assert sorted(map(str, pages)) == ["1-15", "16-30"]
