"""Cancelling a long job from its page in headless Chromium, then running it again.

The console's application is served from a thread of this process (werkzeug's server on
127.0.0.1, as ``richdoc console`` serves it) over the embedded stack, so that the test
can hold the job's parse at a gate (tests/support/gates.py) for as long as it needs: the
job is open while Cancel is clicked whatever this machine's speed. Every wait is on
something observable (the job record, the page, its JSON twin), never a sleep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from richdoc_tools.local.runtime.loops import wait_until
from richdoc_tools.ops.operator import Operator

from richdoc.contracts import ParseInput
from richdoc.jobs import JobPhase, JobStatus
from tests.support.browser import ServedConsole, Watch, console_thread, signed_in, wait_for_twin
from tests.support.gates import Gate
from tests.support.stack_runs import (
    dead_letters_for,
    execution,
    job_of,
    upload,
    wait_for_handlers,
)

pytestmark = [pytest.mark.docling, pytest.mark.slow, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 120
JOB_MS = 240_000  # a run after the cancel parses for real (the first one warms docling)
# Markup, an attribute break-out and a bidi override, as the cancel's reason.
HOSTILE_REASON = '<img src=x onerror=window.__pwned=1>"><script>window.__pwned=2</script> \u202eon'


@pytest.fixture(scope="module")
def served(embedded_stack: Any) -> Iterator[ServedConsole]:
    name = embedded_stack.settings.stack_name
    operator = Operator.connect(name)
    with console_thread(operator, f"embedded stack {name!r}") as console:
        yield console


@pytest.fixture(scope="module")
def session(served: ServedConsole, browser: Browser) -> Iterator[tuple[Page, Watch]]:
    with signed_in(browser, served) as signed:
        yield signed


def passing(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
    return real(event, **kw)


def parsing(stack: Any, job_id: str, run: int) -> bool:
    job = job_of(stack, job_id)
    return (job.run, job.status, job.progress().phase) == (run, JobStatus.RUNNING, JobPhase.PARSING)


def test_a_long_job_is_cancelled_from_its_page_then_redriven(
    stack: Any,
    served: ServedConsole,
    session: tuple[Page, Watch],
    patch_parse: Callable[..., None],
) -> None:
    page, watch = session
    held = Gate()
    patch_parse(held.before(passing))
    job_id = upload(stack, "console/long.md", b"# Long\n\nA job held in its parse.\n")
    assert held.reached()
    assert wait_until(lambda: parsing(stack, job_id, 1), TIMEOUT_S)

    twin = f"/jobs/{job_id}.json"
    page.goto(f"{served.base}/jobs/{job_id}")
    expect(page.locator("#job-status")).to_have_text("RUNNING")
    expect(page.locator("#phase")).to_contain_text("parsing")
    expect(page.locator('#statechart g[data-state="ParseTier1"]')).to_have_attribute(
        "data-status", "running"
    )
    page.locator('form[data-action="cancel"] input[name="reason"]').fill(HOSTILE_REASON)
    page.locator('form[data-action="cancel"] button').click()
    result = page.locator("#action-result")
    expect(result).to_have_attribute("data-outcome", "cancelled")
    expect(result.locator(".detail")).to_contain_text(f"({HOSTILE_REASON})")  # shown, as text
    expect(page.locator("#job-status")).to_have_text("CANCELLED")
    shown = wait_for_twin(page, twin, lambda shown: shown["job"]["status"] == "CANCELLED")
    assert shown["job"]["cancel"]["reason"] == HOSTILE_REASON
    cancel = page.locator('form[data-action="cancel"] button')
    expect(cancel).to_be_disabled()
    expect(cancel).to_have_attribute("title", "the job is cancelled already")

    # The parse finishes only now, unheard: its execution was stopped when the cancel
    # committed, and nothing of it reaches the dead-letter queue.
    held.open()
    wait_for_handlers(stack)
    job = job_of(stack, job_id)
    assert execution(stack, job)["status"] == "ABORTED"
    assert wait_until(
        lambda: (c := job_of(stack, job_id).cancel) is not None and c.closed_at is not None,
        TIMEOUT_S,
    )
    job = job_of(stack, job_id)
    assert (job.status, job.run, job.failure, job.dead_letter) == (
        JobStatus.CANCELLED,
        1,
        None,
        None,
    )
    assert dead_letters_for(stack, job_id) == []
    shown = wait_for_twin(page, twin, lambda shown: shown["execution"]["status"] == "ABORTED")
    assert shown["job"]["status"] == "CANCELLED"

    # The closed parse attempt carries the reason; the page shows it, inert.
    page.goto(f"{served.base}/jobs/{job_id}")
    expect(page.locator("#job-status")).to_have_text("CANCELLED")
    expect(page.locator("#attempts-body tr", has_text=HOSTILE_REASON)).to_have_count(1)
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("main script, main img").count() == 0

    # Redrive: run 2 is queued from the job's stored message and held in its parse too.
    again = Gate()
    patch_parse(again.before(passing))
    page.locator('form[data-action="redrive"] button').click()
    result = page.locator("#action-result")
    expect(result).to_have_attribute("data-outcome", "sent")
    expect(result).to_contain_text("run 2 requested")
    wait_for_twin(page, twin, lambda shown: shown["job"]["run"] == 2)
    assert again.reached()
    assert wait_until(lambda: parsing(stack, job_id, 2), TIMEOUT_S)
    expect(page.locator("#job-status")).to_have_text("RUNNING")  # the page follows run 2
    again.open()
    expect(page.locator("#job-status")).to_have_text("SUCCEEDED", timeout=JOB_MS)
    shown = wait_for_twin(page, twin, lambda shown: shown["job"]["terminal"])
    assert (shown["job"]["run"], shown["job"]["status"]) == (2, "SUCCEEDED")
    wait_for_handlers(stack)
    assert dead_letters_for(stack, job_id) == []
    assert page.evaluate("() => window.__pwned") is None
    assert not watch.errors and not watch.dialogs


def test_every_request_stayed_on_the_console(
    served: ServedConsole, session: tuple[Page, Watch]
) -> None:
    _, watch = session
    assert watch.requests
    assert watch.strangers(served.base) == []
