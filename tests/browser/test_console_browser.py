"""The console in headless Chromium, against a real ``richdoc console`` process on the
embedded stack: files dropped into the page become jobs whose graph colours as they run,
the page view draws the graph's boxes over the PDF, the dead-letter workbench redrives,
a job's Redrive button and a failure group's redrive start the next run, the tier ladder
is drawn, hostile names and texts stay text, and no request leaves 127.0.0.1.

Every wait is on something the page shows (Playwright's expect, generous timeouts),
never a sleep: how fast this machine parses does not matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import ConsoleProcess, Watch, signed_in, twin, wait_for_twin
from tests.support.parse_inputs import pdf_with_lines
from tests.support.paths import SAMPLES

pytestmark = [pytest.mark.docling, pytest.mark.slow]

JOB_S = 240_000  # ms a job may take on a slow, shared machine (the first one warms docling)
# Hostile text, as names and as document text: markup, an attribute break-out, bidi controls.
HOSTILE_NAME = "<script>window.__pwned=1<img src=x onerror=window.__pwned=2>\u202efdp.pdf"
HOSTILE_LINES = [
    "<script>window.__pwned=3</script>",
    '"><img src=x onerror=window.__pwned=4>',
    "Signed \u202e2024-03-01\u202c by <b>nobody</b>",
]


def origin(url: str) -> str:
    """The console's address, whichever page (``/tiers/jobs`` too) a test left open."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    process = ConsoleProcess(log=tmp_path_factory.mktemp("console") / "functions.log").start()
    yield process
    assert process.stop() == 0, "".join(process.output)
    assert "stopped" in "".join(process.output)


@pytest.fixture(scope="module")
def session(console: ConsoleProcess, browser: Browser) -> Iterator[tuple[Page, Watch]]:
    with signed_in(browser, console) as signed:
        yield signed


def _job_url(page: Page, key: str) -> str:
    jobs = twin(page, "/jobs.json")["jobs"]
    [found] = [j["url"] for j in jobs if j["source"]["key"] == key]
    return str(found)


def test_a_file_dropped_into_the_page_runs_and_its_graph_colours(
    console: ConsoleProcess, session: tuple[Page, Watch]
) -> None:
    page, watch = session
    page.locator("#file-input").set_input_files(str(SAMPLES / "field-report.pdf"))
    uploaded = page.locator("#uploads a", has_text="field-report.pdf")
    expect(uploaded).to_be_visible()
    # The list updates itself from its JSON twin.
    row = page.locator("#jobs-body tr", has_text="field-report.pdf")
    expect(row).to_be_visible()
    uploaded.click()
    expect(page.locator("h1.key")).to_have_text("field-report.pdf")
    done = page.locator('#statechart g[data-state="RecordSuccess"]')
    expect(done).to_have_attribute("data-status", "succeeded", timeout=JOB_S)
    expect(page.locator("#job-status")).to_have_text("SUCCEEDED")
    for state in ("RecordStart", "Plan", "ParseTier1", "Project", "Detect"):
        expect(page.locator(f'#statechart g[data-state="{state}"]')).to_have_attribute(
            "data-status", "succeeded"
        )
    expect(page.locator('#statechart g[data-state="RecordFailure"]')).to_have_attribute(
        "data-status", "not-run"
    )
    expect(page.locator("#live-state")).to_have_text("up to date; nothing is running")
    # A state's input and output, a click away.
    page.locator('#statechart g[data-state="Plan"] a').click()
    detail = page.locator('section.state-detail[data-state="Plan"]')
    expect(detail).to_be_visible()
    expect(detail.locator(".state-input")).to_contain_text('"job_id"')
    expect(page.locator("#attempts-body tr")).to_have_count(4)
    expect(page.locator("#document-link")).to_be_visible()
    assert not watch.errors and not watch.dialogs


def test_a_file_dropped_by_drag_and_drop_uploads_too(session: tuple[Page, Watch]) -> None:
    page, _ = session
    page.goto(origin(page.url) + "/jobs")
    page.evaluate(
        """() => {
            const transfer = new DataTransfer();
            transfer.items.add(new File(["# Dropped\\n\\nA note.\\n"], "dropped.md"));
            const zone = document.getElementById("drop-zone");
            const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
            zone.dispatchEvent(new DragEvent("dragover", init));
            zone.dispatchEvent(new DragEvent("drop", init));
        }"""
    )
    expect(page.locator("#uploads a", has_text="dropped.md")).to_be_visible()
    row = page.locator("#jobs-body tr", has_text="dropped.md")
    expect(row.locator(".status")).to_have_text("SUCCEEDED", timeout=JOB_S)
    # The backlog above the list: the slots of the capacity, the throughput measured on
    # the recent runs' slot cycles, and (as the page refreshes itself) nothing waiting.
    summary = page.locator("#backlog-summary")
    expect(summary).to_contain_text("of 20 slots held")
    expect(summary).to_contain_text("documents an hour")
    expect(summary).to_contain_text("Nothing waits.")
    expect(page.locator("#backlog-body tr.empty")).to_have_text("Nothing waits.")


def test_the_page_view_draws_a_known_paragraph_over_the_pdf(
    session: tuple[Page, Watch],
) -> None:
    page, watch = session
    job_url = _job_url(page, "field-report.pdf")
    page.goto(origin(page.url) + job_url + "/document")
    graph = twin(page, job_url + "/document.json")["graph"]
    text = (
        "All 14 loading bays were inspected; two need new seals before the summer peak, "
        "and the dock levellers passed their load test without remarks."
    )
    [node] = [n for n in graph["nodes"] if n["text"] == text]
    box = page.locator(f'figure[data-page="1"] rect[data-node-id="{node["id"]}"]')
    expect(box).to_have_class(re.compile(r"\bbox label-paragraph\b"))
    # The box sits where the bbox says on the rendered page (top-left origin, points).
    x0, y0, x1, _ = node["bbox"]
    assert float(box.get_attribute("x") or 0) == pytest.approx(x0)
    assert float(box.get_attribute("y") or 0) == pytest.approx(y0)
    assert float(box.get_attribute("width") or 0) == pytest.approx(x1 - x0)
    frame = page.locator('figure[data-page="1"] svg').bounding_box()
    drawn = box.bounding_box()
    assert frame is not None and drawn is not None
    scale = frame["width"] / graph["pages"][0]["width"]
    assert drawn["x"] - frame["x"] == pytest.approx(x0 * scale, abs=2)
    assert drawn["y"] - frame["y"] == pytest.approx(y0 * scale, abs=2)
    box.click()
    detail = page.locator(f"#node-{node['id']}")
    expect(detail).to_be_visible()
    expect(detail.locator(".node-text")).to_have_text(text)
    expect(detail).to_contain_text(f"bytes {node['span']['start_byte']}–{node['span']['end_byte']}")
    segment = page.locator(f'#canonical [data-node-id="{node["id"]}"]')
    expect(segment).to_have_class(re.compile(r"\bchosen\b"))
    expect(segment).to_have_text(text)
    images = [u for u in watch.requests if u.endswith("/document/pages/1.png")]
    assert images, "the page was not rendered"
    assert not watch.errors


def test_hostile_names_and_texts_render_inert(session: tuple[Page, Watch], tmp_path: Path) -> None:
    page, watch = session
    hostile_pdf = pdf_with_lines(tmp_path / HOSTILE_NAME, HOSTILE_LINES)
    unsupported = tmp_path / "<img src=x onerror=window.__pwned=5>.dwg"
    unsupported.write_bytes(b"AC1032 not a drawing")
    page.goto(origin(page.url) + "/jobs")
    page.locator("#clarify").check()
    page.locator("#file-input").set_input_files([str(hostile_pdf), str(unsupported)])
    hostile_row = page.locator("#jobs-body tr", has=page.get_by_text(HOSTILE_NAME, exact=True))
    expect(hostile_row.locator(".status")).to_have_text("SUCCEEDED", timeout=JOB_S)
    failed_row = page.locator("#jobs-body tr", has=page.get_by_text(unsupported.name, exact=True))
    expect(failed_row.locator(".status")).to_have_text("DEAD_LETTERED", timeout=JOB_S)
    expect(failed_row).to_contain_text("format:dwg")

    job_url = _job_url(page, HOSTILE_NAME)
    base = origin(page.url)
    for path in (
        "/jobs",
        job_url,
        job_url + "/document",
        _job_url(page, unsupported.name),
        "/dead-letters",
        "/failures",
        "/tiers",
    ):
        page.goto(base + path)
        expect(page.locator("main")).to_be_visible()
        assert page.evaluate("() => window.__pwned") is None, path
        assert page.locator("main script, main img, main b").count() == 0, path
    page.goto(base + job_url + "/document")
    canonical = page.locator("#canonical")
    for line in HOSTILE_LINES[:2]:
        expect(canonical).to_contain_text(line)  # shown, as text
    expect(page.locator("h1.key")).to_have_text(HOSTILE_NAME)
    assert not watch.dialogs and not watch.errors
    assert not [u for u in watch.requests if urlsplit(u).path.endswith("/x")]


CONTRACT = """# LEASE AGREEMENT

This Lease is made this 5th day of May, 2004 by <b>Landlord</b> and Tenant.

"Effective Date" means June 1, 2004.

The Term ends on May 31, 2009 <img src=x onerror=window.__pwned=7>.
"""


def test_the_document_page_explains_the_ambiguity_with_every_date_it_read(
    session: tuple[Page, Watch], tmp_path: Path
) -> None:
    page, watch = session
    contract = tmp_path / "lease-explained.md"
    contract.write_text(CONTRACT)
    page.goto(origin(page.url) + "/jobs")
    page.locator("#clarify").check()
    page.locator("#file-input").set_input_files(str(contract))
    row = page.locator("#jobs-body tr", has_text=contract.name)
    expect(row.locator(".status")).to_have_text("SUCCEEDED", timeout=JOB_S)
    job_url = _job_url(page, contract.name)
    page.goto(origin(page.url) + job_url + "/document")
    ambiguity = page.locator("section.ambiguities")
    expect(ambiguity).to_contain_text("conflicting_dates")
    expect(ambiguity).to_contain_text("2004-06-01 (effective date)")
    why = page.locator("#explanation")
    expect(why.locator("#rules")).to_have_text("contracts-v2")
    rows = why.locator("#explanation-mentions tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator(".role")).to_have_text("agreement date")
    expect(rows.nth(0).locator(".kept")).to_have_text("yes")
    expect(rows.nth(2).locator(".role")).to_have_text("term or deadline")
    expect(rows.nth(2).locator(".kept")).to_have_text("no")
    expect(rows.nth(2).locator(".why")).to_contain_text("ends on")
    # The link of a date's block leads to its node, as the ambiguity's own links do.
    link = rows.nth(1).locator("a")
    target = link.get_attribute("href")
    link.click()
    expect(page.locator(f"section{target}")).to_be_visible()
    expect(page.locator(f"section{target} .node-text")).to_contain_text("Effective Date")
    explained = twin(page, job_url + "/document.json")["explanation"]
    assert [r["mention"]["written"] for r in explained["mentions"]] == [
        "5th day of May, 2004",
        "June 1, 2004",
        "May 31, 2009",
    ]
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("main img, main b").count() == 0
    assert not watch.errors and not watch.dialogs


def test_the_dead_letter_workbench_counts_then_redrives(session: tuple[Page, Watch]) -> None:
    page, watch = session
    base = origin(page.url)
    page.goto(base + "/dead-letters")
    row = page.locator("tr[data-job-id]", has_text=".dwg")
    expect(row).to_have_count(1)
    job_id = row.get_attribute("data-job-id")
    row.locator('input[name="message_id"]').check()
    page.locator("#redrive-chosen").click()
    expect(page.locator("#outcome-message")).to_contain_text("1 message(s) would be redriven")
    page.locator("#confirm").click()
    expect(page.locator("#outcome-message")).to_have_text("1 message(s) redriven")
    # The redriven message starts run 2 of the job, which fails the same way again.
    wait_for_twin(
        page,
        f"/jobs/{job_id}.json",
        lambda shown: shown["job"]["run"] == 2 and shown["job"]["status"] == "DEAD_LETTERED",
    )
    page.goto(f"{base}/jobs/{job_id}")
    expect(page.locator(".runs strong")).to_have_text("2")
    expect(page.locator("#job-status")).to_have_text("DEAD_LETTERED")
    expect(page.locator('#statechart g[data-state="UnsupportedFeature"]')).to_have_attribute(
        "data-status", "failed"
    )
    assert not watch.errors and not watch.dialogs


def test_the_job_pages_buttons_cancel_only_open_runs_and_redrive(
    session: tuple[Page, Watch],
) -> None:
    page, watch = session
    base = origin(page.url)
    job_url = _job_url(page, "<img src=x onerror=window.__pwned=5>.dwg")
    run = twin(page, job_url + ".json")["job"]["run"]
    page.goto(base + job_url)
    cancel = page.locator('form[data-action="cancel"] button')
    expect(cancel).to_be_disabled()
    expect(cancel).to_have_attribute("title", re.compile("had already finished: DEAD_LETTERED"))
    page.locator('form[data-action="redrive"] button').click()
    result = page.locator("#action-result")
    expect(result).to_have_attribute("data-outcome", "sent")
    expect(result).to_contain_text(f"run {run + 1} requested")
    expect(page.locator("h1.key")).to_have_text("<img src=x onerror=window.__pwned=5>.dwg")
    # The page follows the next run from its twin until it has ended.
    wait_for_twin(
        page,
        job_url + ".json",
        lambda shown: shown["job"]["run"] == run + 1 and shown["job"]["terminal"],
    )
    expect(page.locator("#live-state")).to_have_text("up to date; nothing is running")
    expect(page.locator("#attempts-body tr", has_text="UnsupportedFeature")).to_have_count(run + 1)
    assert page.evaluate("() => window.__pwned") is None
    assert not watch.errors and not watch.dialogs


def test_a_failure_group_is_redriven_and_the_tier_ladder_drawn(
    session: tuple[Page, Watch],
) -> None:
    page, watch = session
    base = origin(page.url)
    job_url = _job_url(page, "<img src=x onerror=window.__pwned=5>.dwg")
    run = twin(page, job_url + ".json")["job"]["run"]
    page.goto(base + "/failures")
    group = page.locator("#groups tr[data-signature]", has_text="unsupported_feature")
    expect(group).to_have_count(1)
    expect(group.locator(".count")).to_have_text("1")
    group.locator('button[data-action="redrive-group"]').click()
    expect(page.locator("#outcome-message")).to_contain_text("1 job(s) match")
    page.locator("#confirm").click()
    expect(page.locator("#outcome-message")).to_have_text("1 of 1 job(s) sent to run again")
    wait_for_twin(
        page,
        job_url + ".json",
        lambda shown: shown["job"]["run"] == run + 1 and shown["job"]["terminal"],
    )

    page.goto(base + "/tiers")
    bar = page.locator('#tier-chart g.tier-bar[data-tier="1"]')
    expect(bar).to_be_visible()
    expect(bar).to_contain_text("succeeded")
    expect(page.locator('#tiers tr[data-tier="1"]')).to_be_visible()
    assert page.evaluate("() => window.__pwned") is None
    assert not watch.errors and not watch.dialogs


def test_the_markdown_and_each_table_download_from_the_job_page(
    session: tuple[Page, Watch],
) -> None:
    page, watch = session
    base = origin(page.url)
    page.goto(base + "/jobs")
    page.locator("#file-input").set_input_files(str(SAMPLES / "inventory.xlsx"))
    expect(page.locator("#jobs-body tr", has_text="inventory.xlsx")).to_be_visible()
    page.locator("#uploads a", has_text="inventory.xlsx").click()
    expect(page.locator("#job-status")).to_have_text("SUCCEEDED", timeout=JOB_S)
    downloads = page.locator("#downloads a")
    expect(downloads.filter(has_text="document.md")).to_have_count(1)
    table = downloads.filter(has_text=re.compile(r"^tables/table-\d+\.csv$"))
    expect(table).to_have_count(1)
    with page.expect_download() as download:
        table.click()
    saved = download.value.path().read_bytes()
    assert saved.endswith(b"\r\n")
    projection = twin(page, urlsplit(page.url).path + "/artifacts/projection.json")
    [columns] = [n["props"]["columns"] for n in projection["nodes"] if n["label"] == "TABLE"]
    assert saved.decode().split("\r\n")[0] == ",".join(columns)
    with page.expect_download() as markdown:
        downloads.filter(has_text="document.md").click()
    assert markdown.value.suggested_filename.endswith("-document.md")
    assert not watch.errors and not watch.dialogs


def test_every_request_stayed_on_the_console(
    console: ConsoleProcess, session: tuple[Page, Watch]
) -> None:
    _, watch = session
    assert watch.requests
    assert watch.strangers(console.base) == []
