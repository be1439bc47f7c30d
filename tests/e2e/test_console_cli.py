"""``richdoc console`` as a command: against ``richdoc local serve`` through the same boto3
code the other commands use (``--endpoint-url``), uploading its PATHs; usage errors found
before anything starts; SIGTERM stops it."""

from __future__ import annotations

import http.cookiejar
import json
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import ConsoleProcess
from tests.support.cli_process import RICHDOC
from tests.support.paths import ROOT, SAMPLES

pytestmark = [pytest.mark.docling, pytest.mark.slow]


class Visitor:
    """A client that signs in with the printed address and keeps the cookie."""

    def __init__(self, url: str) -> None:
        self.base = url.split("/?", 1)[0]
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with self.opener.open(url, timeout=60) as response:
            assert response.url == self.base + "/jobs"

    def json(self, path: str) -> Any:
        with self.opener.open(self.base + path, timeout=60) as response:
            assert response.headers["Content-Type"] == "application/json"
            return json.load(response)


@pytest.fixture
def local_serve(tmp_path: Path) -> Iterator[str]:
    """``richdoc local serve`` on a free port; its endpoint."""
    server = subprocess.Popen(
        [*RICHDOC, "local", "serve", "--port", "0", "--log", str(tmp_path / "serve.log")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert server.stdout is not None
    endpoint = None
    for line in server.stdout:
        if "listening on " in line:
            endpoint = line.rsplit("listening on ", 1)[1].strip()
            break
    assert endpoint, "local serve did not start"
    try:
        yield endpoint
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=120)


def test_the_console_works_a_local_serve_stack_through_its_endpoint(
    local_serve: str, tmp_path: Path
) -> None:
    console = ConsoleProcess(
        arguments=["--endpoint-url", local_serve, "--clarify", str(SAMPLES / "team-notes.md")]
    ).start()
    try:
        assert any("uploading 1 file(s)" in line for line in console.output)
        visitor = Visitor(console.url)
        assert visitor.json("/failures.json")["groups"] == []
        job: dict[str, Any] = {}
        # Wait on the record the pipeline writes, as the page does (generous: the first
        # document warms docling up).
        deadline = time.monotonic() + 300
        while not job.get("terminal"):
            assert time.monotonic() < deadline, f"job not finished: {job}"
            time.sleep(0.5)
            jobs = visitor.json("/jobs.json")["jobs"]
            job = next((j for j in jobs if j["source"]["key"] == "team-notes.md"), {})
        assert job["status"] == "SUCCEEDED", job
        assert job["options"]["clarify"] is True
        shown = visitor.json(f"/jobs/{job['job_id']}.json")
        assert shown["execution"]["status"] == "SUCCEEDED"
        assert shown["states"]["RecordSuccess"]["status"] == "succeeded"
        document = visitor.json(f"/jobs/{job['job_id']}/document.json")
        assert document["rendered"] is False and document["graph"]["nodes"]
        [tier] = visitor.json("/tiers.json")["report"]["tiers"]
        assert tier["succeeded"] == 1
    finally:
        assert console.stop() == 0, "".join(console.output)
    assert "stopped" in "".join(console.output)


def test_usage_errors_exit_2_before_anything_starts(tmp_path: Path) -> None:
    missing = subprocess.run(
        [*RICHDOC, "console", str(tmp_path / "gone.pdf")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        busy = subprocess.run(
            [*RICHDOC, "console", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert busy.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in busy.stderr and "--port" in busy.stderr
    assert "deploying" not in busy.stdout  # nothing started


def test_a_stack_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [*RICHDOC, "console", "--stack", "nope", "--endpoint-url", "http://127.0.0.1:9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("richdoc console: ")
