"""OcrMode off through the real state machine on the embedded stack: a mixed PDF names
the page it left unread in projection.json's stats, the job record, the completion event
and the document's manifest; a scan and an image are dead-lettered as unsupported_feature
``ocr``. (Its own module: one embedded stack per module, deployed with ``OcrMode=off``.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from richdoc.jobs import JobStatus
from tests.support import scans
from tests.support.ocr_runs import (
    NATIVE_LINE,
    SCANNED_LINES,
    Subscription,
    ended,
    manifest_of,
    projection_of,
    words,
)
from tests.support.stack_runs import upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


@pytest.fixture(scope="module")
def ocr_off_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    with EmbeddedStack(
        parameters={"OcrMode": "off"},
        retry_delay_scale=0.0,
        retry_visibility_s=0,
        log_path=log_path,
        schedules=False,
    ) as stack:
        yield stack


def test_with_ocr_off_a_mixed_pdf_names_its_unread_page_everywhere(ocr_off_stack: Any) -> None:
    stack = ocr_off_stack
    subscription = Subscription(stack, "ocr-off-e2e")
    body = scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)])
    [job] = ended(stack, [upload(stack, "off/mixed.pdf", body)]).values()
    assert job.status is JobStatus.SUCCEEDED, job.failure
    assert job.counts is not None
    assert (job.counts.ocr_page_count, job.counts.unread_pages) == (0, [2])
    projection = projection_of(stack, job)
    assert projection.stats.ocr is not None
    assert (projection.stats.ocr.mode, projection.stats.ocr.unread_pages) == ("off", [2])
    assert words(projection.canonical_text) == words(NATIVE_LINE)
    [event] = subscription.of(job.job_id)
    subscription.close()
    assert event.detail.counts is not None and event.detail.counts.unread_pages == [2]
    manifest = manifest_of(stack, job)
    assert manifest.result is not None and manifest.result.counts == event.detail.counts


def test_with_ocr_off_a_scan_is_dead_lettered_as_needing_ocr(ocr_off_stack: Any) -> None:
    stack = ocr_off_stack
    scan = upload(stack, "off/scan.pdf", scans.scanned_pdf([SCANNED_LINES]))
    image = upload(stack, "off/scan.png", scans.image_file([SCANNED_LINES], "PNG"))
    for job in ended(stack, [scan, image]).values():
        assert job.status is JobStatus.DEAD_LETTERED
        assert job.failure is not None
        assert (job.failure.kind, job.failure.feature) == ("unsupported_feature", "ocr")


def test_richdoc_run_says_which_pages_of_a_mixed_pdf_it_left_unread(
    ocr_off_stack: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With OCR off, a mixed PDF succeeds without its scanned page's text: the table's
    row and a note say so, and --json's counts have the pages OCR read and left unread."""
    from richdoc_tools.cli.render.run import RUN_COLUMNS, run_results, unread_notes
    from richdoc_tools.run import run_files

    path = tmp_path / "mixed.pdf"
    path.write_bytes(scans.mixed_pdf([("text", [NATIVE_LINE]), ("scan", SCANNED_LINES)]))
    [result] = run_files(ocr_off_stack, [path], clarify=False, timeout_s=600)
    assert result.status == "SUCCEEDED"

    # The stack's functions print to the same stdout meanwhile: the table is the line
    # under its header (printed in one write), the JSON the array printed whole.
    run_results([result], as_json=False)  # not a terminal: tab-separated rows
    lines = capsys.readouterr().out.splitlines()
    header = "\t".join(RUN_COLUMNS)
    row = lines[lines.index(header) + 1]
    cells = dict(zip(RUN_COLUMNS, row.split("\t"), strict=True))
    assert (cells["status"], cells["ocr pages"]) == ("SUCCEEDED", "unread 2")
    assert unread_notes([result]) == [
        "mixed.pdf: page(s) 2 have no text layer and were not read (OcrMode off): "
        "their text is not in the results"
    ]

    run_results([result], as_json=True)
    out = capsys.readouterr().out
    [record], _ = json.JSONDecoder().raw_decode(out, out.index("[\n  {"))
    assert (record["counts"]["ocr_page_count"], record["counts"]["unread_pages"]) == (0, [2])
