"""A real ``richdoc console`` process and Debian's Chromium driven by Playwright, for the
browser tests and the screenshot script (scripts/console_screenshots.py).

Playwright's own browser builds come from a CDN this machine cannot reach, so Playwright
launches the system's Chromium (``make chromium`` installs it with apt).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tests.support.cli_process import RICHDOC
from tests.support.paths import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # root in CI and containers
    "--disable-gpu",
    # Nothing of Chromium's own may leave the machine (or be counted as the console's).
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
URL_PREFIX = "http://127.0.0.1:"


def twin(page: Page, path: str) -> Any:
    """A JSON twin, fetched by the page (with its cookie)."""
    return json.loads(page.evaluate("p => fetch(p).then(r => r.text())", path))


def wait_for_twin(
    page: Page, path: str, condition: Callable[[Any], bool], timeout_s: float = 300
) -> Any:
    """Poll a JSON twin until ``condition`` holds (what a person watching the page waits
    for); its last value. Playwright's wait_for_function does not await a promise, so the
    polling is here."""
    deadline = time.monotonic() + timeout_s
    while True:
        data = twin(page, path)
        if condition(data):
            return data
        assert time.monotonic() < deadline, f"{path} never became what was awaited: {data}"
        page.wait_for_timeout(500)


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


@dataclass
class ConsoleProcess:
    """``richdoc console`` in a process of its own, on a free port. Its output is read all
    along (a full pipe would stall it) and kept in ``output``."""

    arguments: Sequence[str] = ()
    log: Path | None = None
    process: subprocess.Popen[str] | None = None
    url: str = ""  # with the access token, as printed
    output: list[str] = field(default_factory=list)
    _printed: threading.Event = field(default_factory=threading.Event)

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    def start(self, timeout_s: float = 300) -> ConsoleProcess:
        command = [*RICHDOC, "console", "--port", "0"]
        if self.log is not None:
            command += ["--log", str(self.log)]
        self.process = subprocess.Popen(
            [*command, *self.arguments],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        if not self._printed.wait(timeout_s):
            raise AssertionError(f"richdoc console printed no address: {''.join(self.output)}")
        return self

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.output.append(line)
            if line.startswith(URL_PREFIX) and not self.url:
                self.url = line.strip()
                self._printed.set()

    def stop(self, timeout_s: float = 120) -> int:
        """SIGTERM, as a service manager stops it; its exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout_s)
