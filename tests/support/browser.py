"""The console for the browser tests and the screenshot script
(scripts/console_screenshots.py): a real ``richdoc console`` process, or the console's
application served from a thread of the test's own process (over a stack whose steps the
test holds); Debian's Chromium driven by Playwright, and what it did.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tests.support.cli_process import RICHDOC
from tests.support.paths import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Dialog,
        Page,
        Playwright,
    )
    from richdoc_tools.ops.operator import Operator

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


class Watch:
    """What the browser did: every request, dialogs, console errors, script errors."""

    def __init__(self, context: BrowserContext) -> None:
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        context.on("request", lambda request: self.requests.append(request.url))

    def page(self, context: BrowserContext) -> Page:
        page = context.new_page()
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", self._console)
        return page

    def strangers(self, base: str) -> list[str]:
        """The requests that went anywhere but the console at ``base``."""
        return [u for u in self.requests if not u.startswith(base + "/")]

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)  # alert() ran: a script got in
        dialog.dismiss()

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":  # a CSP violation or a script error
            self.errors.append(message.text)


@dataclass(frozen=True)
class ServedConsole:
    url: str  # with the access token, as ``richdoc console`` prints it

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]


@contextmanager
def console_thread(operator: Operator, label: str) -> Iterator[ServedConsole]:
    """The console's application over ``operator``, served by werkzeug's threaded server
    on 127.0.0.1 (a free port) from a thread of this process, as ``richdoc console`` serves
    it: a test can hold the stack's steps while Chromium talks HTTP to it."""
    from richdoc_tools.console.app import create_app
    from richdoc_tools.console.server import bind, console_url, listen
    from richdoc_tools.console.settings import ConsoleSettings

    made: list[ConsoleSettings] = []

    def make_app(port: int) -> Any:
        made.append(ConsoleSettings(operator=operator, port=port, stack_label=label))
        return create_app(made[0])

    server = bind(listen(0), make_app)
    thread = threading.Thread(target=server.serve_forever, name="console-server", daemon=True)
    thread.start()
    try:
        yield ServedConsole(url=console_url(server.port, made[0].token))
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@contextmanager
def signed_in(
    browser: Browser, console: ConsoleProcess | ServedConsole
) -> Iterator[tuple[Page, Watch]]:
    """A page of a fresh browser context, signed in to the console, and its watch."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    watch = Watch(context)
    page = watch.page(context)
    page.goto(console.url)  # the printed address signs in and drops the token
    expect(page).to_have_url(console.base + "/jobs")
    try:
        yield page, watch
    finally:
        context.close()
