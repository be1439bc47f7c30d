"""Running a command with the network unreachable, to show that a parse downloads nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.support.cli_process import RICHDOC
from tests.support.paths import ROOT

# A documentation address (RFC 5737): in the namespace no route leads anywhere.
_PROBE = (
    "import errno, socket\n"
    "try: socket.create_connection(('192.0.2.1', 443), timeout=5)\n"
    "except OSError as e: print(e.errno == errno.ENETUNREACH)"
)


def network_unreachable() -> list[str] | None:
    """A command prefix that runs its command in a network namespace of its own (no
    interface but a down loopback), or None where this machine cannot make one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else None


def parse_offline(
    source: Path, out: Path, *, home: Path, settings: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``richdoc parse source -o out`` with the network unreachable, the parse ``settings``
    in its environment and an empty ``home`` (no model cached by an earlier run can
    answer); first shows that no route leads out of the namespace."""
    prefix = network_unreachable()
    assert prefix is not None
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/docling", "tools", ".")),
        **settings,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    offline = subprocess.run(
        [*prefix, sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True
    )
    assert offline.stdout.strip() == "True", offline.stderr
    return subprocess.run(
        [*prefix, *RICHDOC, "parse", str(source), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
