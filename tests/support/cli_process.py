"""Running the command line the way a person does: in a subprocess, on a pseudo-terminal
when what matters is what a real terminal receives."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RICHDOC = [sys.executable, "-m", "richdoc_tools"]
# Styling rich adds; what remains is the text a person reads.
_STYLE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def readable(raw: str) -> str:
    """The terminal's text without rich's styling and cursor sequences."""
    return _STYLE.sub("", raw)


def environment(
    extra: Mapping[str, str] | None = None, *, drop: Sequence[str] = ()
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    for key in drop:
        env.pop(key, None)
    env.update(extra or {})
    return env


def in_terminal(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    columns: int = 160,
    timeout_s: float = 600,
) -> tuple[int, str]:
    """Run ``argv`` with stdin, stdout and stderr on one pseudo-terminal of ``columns``
    columns; returns the exit code and everything the terminal received."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        list(argv),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=ROOT,
        env=dict(env) if env is not None else environment(),
        close_fds=True,
    )
    os.close(terminal)
    received = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # EIO: every writer closed the terminal
                    break
                if not chunk:
                    break
                received += chunk
            elif process.poll() is not None:
                break
        else:
            process.kill()
            raise AssertionError(f"{argv} did not finish in {timeout_s} s: {received[-2000:]!r}")
    finally:
        os.close(controller)
    return process.wait(timeout=60), received.decode("utf-8", "replace")
