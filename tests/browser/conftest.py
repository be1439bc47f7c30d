"""Debian's Chromium, one per test module (tests/support/browser.py launches it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.support.browser import launch


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    expect.set_options(timeout=60_000)
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()
