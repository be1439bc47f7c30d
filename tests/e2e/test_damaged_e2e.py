"""Damaged real-world files through the real state machine on the embedded stack: each
ends dead-lettered with the kind that says what to do about it, and none is internal."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from richdoc.jobs import JobStatus
from tests.support import damaged_inputs, parse_inputs
from tests.support.stack_runs import dead_letters_for, execution, outcomes, run_one

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]


def _workbook_with_two_sheet1(folder: Path) -> Path:
    book = parse_inputs.xlsx(folder / "plain.xlsx")
    with zipfile.ZipFile(book) as archive:
        hidden = archive.read("xl/worksheets/sheet1.xml").replace(b"item 1", b"HIDDEN")
    return damaged_inputs.with_duplicate_entry(
        folder / "book.xlsx", book, "xl/worksheets/sheet1.xml", hidden
    )


# key -> (make the file in a folder, kind, feature, the stage that refuses it, reason)
CASES: dict[str, tuple[Callable[[Path], Path], str, str | None, tuple[str, int | None], str]] = {
    # pdfium's "Failed to load page." in the plan was an internal failure.
    "damaged/loop.pdf": (
        lambda p: damaged_inputs.recursive_page_tree(p / "loop.pdf"),
        "corrupt_input",
        None,
        ("plan", None),
        "pdfium cannot load pages 1, 2",
    ),
    # A download cut short was told to get OCR.
    "damaged/cut.pdf": (
        lambda p: damaged_inputs.cut_short_pdf(p / "cut.pdf"),
        "corrupt_input",
        None,
        ("plan", None),
        "cross-reference table is missing or broken",
    ),
    # A fax: OCR finds no line in its CCITT image, so nothing readable is in the document:
    # its parse says so, as for a picture or a drawing (tests/e2e/test_ocr_e2e.py).
    "damaged/fax.pdf": (
        lambda p: damaged_inputs.ccitt_pdf(p / "fax.pdf"),
        "unsupported_feature",
        "pictures",
        ("parse", 1),
        "nothing readable: OCR read page(s) 1 and found no text",
    ),
    # Which sheet1.xml docling read depended on the library: it succeeded.
    "damaged/book.xlsx": (
        _workbook_with_two_sheet1,
        "corrupt_input",
        None,
        ("parse", 1),
        "two entries named 'xl/worksheets/sheet1.xml'",
    ),
}
ERRORS = {"corrupt_input": "CorruptInput", "unsupported_feature": "UnsupportedFeature"}


@pytest.mark.parametrize("key", CASES)
def test_a_damaged_file_is_dead_lettered_with_its_kind_never_internal(
    stack: Any, tmp_path: Path, key: str
) -> None:
    make, kind, feature, (stage, tier), reason = CASES[key]
    job = run_one(stack, key, make(tmp_path).read_bytes())
    assert job.status is JobStatus.DEAD_LETTERED
    assert job.failure is not None
    assert (job.failure.kind, job.failure.feature) == (kind, feature)
    assert reason in job.failure.reason
    assert execution(stack, job)["error"] == kind
    assert outcomes(stack, job)[-1] == (stage, tier, ERRORS[kind])
    [letter] = dead_letters_for(stack, job.job_id)
    assert letter["MessageAttributes"]["richdoc.kind"]["StringValue"] == kind
