"""Regenerate the console's screenshots in docs/ (and the one the README shows).

Runs ``richdoc console samples/ --clarify`` (the embedded stack), waits until every sample's
job has finished, and photographs the main views in Debian's Chromium (``make chromium``):

    .venv/bin/python scripts/console_screenshots.py      # or: make screenshots

It takes about a minute; job ids and times differ from one run to the next.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support: the same console process and browser as the tests

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.support.browser import ConsoleProcess, launch, twin, wait_for_twin  # noqa: E402

DOCS = ROOT / "docs"
SHOTS = {
    "console-jobs.png": "the task center: jobs, filters, the drop zone",
    "console-job.png": "one job: the state machine coloured by the execution, a state's input",
    "console-document.png": "a PDF with the graph's boxes drawn over its page",
    "console-dead-letters.png": "the dead-letter workbench",
    "console-failures.png": "failures grouped by signature, each group redriven at once",
    "console-tiers.png": "the parse tier ladder over the fleet",
}
WAIT_S = 600


def main() -> int:
    samples = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
    console = ConsoleProcess(arguments=["--clarify", str(ROOT / "samples")]).start()
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.goto(console.url)
            wait_for_twin(
                page,
                "/jobs.json",
                lambda listed: (
                    len(listed["jobs"]) == len(samples)
                    and all(job["terminal"] for job in listed["jobs"])
                ),
                timeout_s=WAIT_S,
            )
            page.reload()
            page.screenshot(path=DOCS / "console-jobs.png")
            urls = {job["source"]["key"]: job["url"] for job in twin(page, "/jobs.json")["jobs"]}
            page.goto(console.base + urls["broken.docx"])
            page.locator('#statechart g[data-state="ParseTier1"] a').click()
            page.screenshot(path=DOCS / "console-job.png", full_page=True)
            page.goto(console.base + urls["field-report.pdf"] + "/document")
            page.wait_for_load_state("networkidle")
            page.locator('rect[data-node-id="3"]').click()
            page.screenshot(path=DOCS / "console-document.png")
            page.goto(console.base + "/dead-letters")
            page.screenshot(path=DOCS / "console-dead-letters.png")
            page.goto(console.base + "/failures")
            page.screenshot(path=DOCS / "console-failures.png", full_page=True)
            page.goto(console.base + "/tiers")
            page.locator("#tier-chart").wait_for()
            page.screenshot(path=DOCS / "console-tiers.png", full_page=True)
            browser.close()
    finally:
        console.stop()
    for name, what in SHOTS.items():
        print(f"docs/{name}: {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
