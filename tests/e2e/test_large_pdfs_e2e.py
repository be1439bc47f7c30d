"""Long PDFs end to end, the slow ones: a 300-page PDF through ``richdoc run`` (fresh
processes, as a person runs it) is the same sharded or whole, and a 2,000-page PDF
succeeds within the default limits. Apart from tests/e2e/test_shards_e2e.py so that the two
files run side by side."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from richdoc.jobs import JobStatus
from richdoc.parse.settings import SHARD_PAGES_ENV
from tests.support import parse_inputs
from tests.support.cli_process import RICHDOC, ROOT
from tests.support.stack_runs import (
    execution,
    history,
    largest_payload,
    module_stack,
    run_pdf,
    shard_attempts,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.docling,
    pytest.mark.slow,
    pytest.mark.xdist_group("large-pdfs"),
]


@pytest.fixture(scope="module")
def embedded_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """This module's stack reads PDFs with the native pipeline: the 2,000-page test is about
    the default limits and the shards, not structure, and the native pipeline's 0.05 CPU
    seconds a page keep it to about 100 s of CPU where the light pipeline's 0.22 s would
    spend 450 (it timed out at 900 s on a loaded 2-core machine)."""
    with module_stack(tmp_path_factory, {"PdfPipeline": "native"}) as stack:
        yield stack


def test_a_300_page_pdf_through_richdoc_run_is_the_same_sharded_or_whole(
    tmp_path: Path,
) -> None:
    pdf = parse_inputs.long_pdf(tmp_path / "long.pdf", pages=300, seed=2)
    runs = {}
    for name, environment in (("sharded", {}), ("whole", {SHARD_PAGES_ENV: "0"})):
        env = {k: v for k, v in os.environ.items() if k != SHARD_PAGES_ENV}
        out = tmp_path / name
        done = subprocess.run(
            [*RICHDOC, "run", str(pdf), "--clarify", "--json", "--out", str(out)],
            env={**env, **environment},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        [result] = json.loads(done.stdout)
        runs[name] = (result, out / "long.pdf")
    (sharded, sharded_dir), (whole, whole_dir) = runs["sharded"], runs["whole"]
    assert sharded["status"] == whole["status"] == "SUCCEEDED"
    assert sharded["shards"] >= 6 and whole["shards"] == 1
    for artifact in ("projection.json", "detection.json"):
        assert (sharded_dir / artifact).read_bytes() == (whole_dir / artifact).read_bytes()
    # The merge is the whole conversion, byte for byte: the light pipeline's (the local
    # default), headings' levels given over the whole document included.
    assert (sharded_dir / "docling.json").read_bytes() == (whole_dir / "docling.json").read_bytes()
    assert json.loads((sharded_dir / "detection.json").read_bytes())["ambiguities"]
    pages = sorted(a["pages"] for a in sharded["attempts"] if a["stage"] == "parse")
    assert len(pages) == sharded["shards"]
    # Unsharded, every parse reads the whole document (a tier the light pipeline's memory
    # outgrows on 300 pages escalates to the next, as on Lambda).
    whole_parses = [a for a in whole["attempts"] if a["stage"] == "parse"]
    assert {a["pages"] for a in whole_parses} == {None}
    assert [a["outcome"] for a in whole_parses][-1] == "ok"


def test_a_2000_page_pdf_succeeds_within_the_default_limits(
    stack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARD_PAGES_ENV, raising=False)  # the template's default, 50
    body = parse_inputs.long_pdf(tmp_path / "long.pdf", pages=2000, seed=7).read_bytes()
    job = run_pdf(stack, "shards/2000-pages.pdf", body, timeout_s=900)
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.shards == 40
    shards = shard_attempts(stack, job)
    # Every shard fits tier 1 (its child's memory ceiling and timeout are enforced here
    # as in Lambda): nothing escalated, nothing retried.
    assert {pages: [(a.tier, a.outcome) for a in tried] for pages, tried in shards.items()} == {
        pages: [(1, "ok")] for pages in shards
    }
    # Every page projected: paragraphs, not lines, about 48 blocks a page (20 pages of the
    # same document through the native pipeline: 970).
    assert job.counts is not None and job.counts.nodes > 2000 * 40
    events = history(stack, execution(stack, job)["executionArn"])
    assert len(events) < 25_000 // 10  # Standard's history limit, with room to spare
    assert largest_payload(events) < 2048 + 300 * 40
