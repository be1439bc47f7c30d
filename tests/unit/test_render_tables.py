"""Tables on a terminal and in a pipe: a rich table where a person looks at it,
tab-separated rows with every value whole where a pager, grep or a CI log reads it."""

from __future__ import annotations

import pytest
from richdoc_tools.cli.render import dlq as render
from richdoc_tools.ops.dead_letter_queue.reading import DeadLetter, DeadLetterListing, ListedLetter
from richdoc_tools.terminal import visible

from richdoc.deadletter import ATTR_FEATURE, ATTR_JOB_ID, ATTR_KIND, ATTR_REASON, ATTR_RUN
from tests.support.cli_process import readable

REASON = "'drawing.dwg': supported formats are " + ", ".join(["docx"] * 40) + "\tand\nmore"


def _peeked() -> DeadLetterListing:
    """One message as `richdoc dlq list --peek` shows it."""
    return DeadLetterListing(letters=[ListedLetter.of_received(_letter())], others=0, received=True)


def _letter() -> DeadLetter:
    return DeadLetter(
        message_id="m-1",
        body="{}",
        attributes={
            ATTR_JOB_ID: "4c7b41c722e6" + "0" * 20,
            ATTR_RUN: "1",
            ATTR_KIND: "unsupported_feature",
            ATTR_FEATURE: "format:dwg",
            ATTR_REASON: REASON,
        },
    )


def test_in_a_pipe_a_table_is_tab_separated_rows_under_a_header_every_value_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    render.dead_letters(_peeked(), as_json=False)
    header, row, count = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["message id", "job id", "run", "kind", "feature", "reason"]
    assert row.split("\t") == [
        "m-1",
        "4c7b41c722e6" + "0" * 20,
        "1",
        "unsupported_feature",
        "format:dwg",
        visible(REASON),  # whole; its tab and newline spelled out, so the row stays one
    ]
    assert count == "1 message(s) on the dead-letter queue"


def test_on_a_terminal_the_table_is_rich_and_long_reasons_are_cut(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # what rich takes for a terminal
    monkeypatch.setenv("COLUMNS", "200")
    render.dead_letters(_peeked(), as_json=False)
    out = readable(capsys.readouterr().out)
    assert "┃ message id" in out and "\t" not in out
    assert REASON[:40] in out and "…" in out and "more" not in out


def test_run_says_what_ocr_did_to_a_documents_pages_without_a_text_layer() -> None:
    from richdoc_tools.cli.render.run import ocr_pages_text
    from richdoc_tools.run import Counts

    assert ocr_pages_text(Counts(nodes=3)) == "-"  # no such pages
    assert ocr_pages_text(Counts(ocr_page_count=2, unread_pages=[])) == "2 read"
    assert ocr_pages_text(Counts(ocr_page_count=0, unread_pages=[2, 5])) == "unread 2,5"
    # In --json the counts name both, as the job's counts do, only where there were such pages.
    assert Counts(nodes=3).model_dump(mode="json") == {
        "nodes": 3,
        "edges": None,
        "spans": None,
        "ambiguities": None,
        "chunks": None,
        "tables": None,
    }
    assert Counts(ocr_page_count=0, unread_pages=[2]).model_dump(mode="json")["unread_pages"] == [2]


def test_in_a_pipe_a_job_record_is_rows_of_a_field_and_its_value() -> None:
    from richdoc_tools.cli.render.jobs import record_rows

    record = {
        "job_id": "4c7b41c722e6",
        "status": "DEAD_LETTERED",
        "failure": {"kind": "unsupported_feature", "feature": "format:dwg"},
        "counts": {"unread_pages": [2]},
        "outputs": None,
        "metadata": {},
    }
    assert record_rows(record) == [
        ["job_id", "4c7b41c722e6"],
        ["status", "DEAD_LETTERED"],
        ["failure.kind", "unsupported_feature"],
        ["failure.feature", "format:dwg"],
        ["counts.unread_pages", "[2]"],
        ["outputs", None],
        ["metadata", "{}"],
    ]
