"""Running a command with the network unreachable, to show that a parse downloads nothing."""

from __future__ import annotations

import shutil
import subprocess


def network_unreachable() -> list[str] | None:
    """A command prefix that runs its command in a network namespace of its own (no
    interface but a down loopback), or None where this machine cannot make one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else None
