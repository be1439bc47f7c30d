"""The parse image's handlers on Lambda's filesystem: a read-only root where only /tmp is
writable, no /dev/shm, HOME unset and a user with no passwd entry (so ``Path.home()``
raises, as docling calls it at import). bubblewrap (Debian's ``bubblewrap``; ``make
test`` installs it) makes that sandbox; inside it the plan and the parse handler run a
PDF through the standard pipeline on synthesised weights, with the environment the
image's Dockerfile sets, OCR reading its scanned page, with no network."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from richdoc.parse.settings import ARTIFACTS_ENV
from tests.support.parse_image import image_env
from tests.support.paths import ROOT

pytestmark = [pytest.mark.docling, pytest.mark.slow]

BWRAP = shutil.which("bwrap")
# Lambda runs functions as sbx_user1051: uid 993, without an entry in /etc/passwd.
LAMBDA_UID, LAMBDA_GID = "993", "990"


def _kept(weights: Path) -> list[str]:
    """The paths the sandbox needs that may lie under /tmp: the weights, the checkout the
    handlers import from and the interpreter's environment (deduplicated, outermost)."""
    paths = sorted({str(p.resolve()) for p in (weights, ROOT, Path(sys.prefix))})
    return [p for p in paths if not any(p.startswith(q + os.sep) for q in paths if q != p)]


def lambda_sandbox(weights: Path) -> list[str]:
    """bubblewrap's arguments for Lambda's filesystem; the weights stay readable."""
    assert BWRAP is not None
    devices = []
    for name in ("null", "zero", "random", "urandom"):
        devices += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    return [
        BWRAP,
        "--ro-bind", "/", "/",
        "--proc", "/proc",
        # A /dev with the usual devices and no shm, read-only like the rest.
        "--tmpfs", "/dev", *devices, "--remount-ro", "/dev",
        "--tmpfs", "/tmp",
        # What the empty /tmp would hide, read-only: a checkout (and its .venv) or the
        # weights' cache under /tmp, as in a CI clone.
        *[arg for path in _kept(weights) for arg in ("--ro-bind", path, path)],
        "--unshare-user", "--uid", LAMBDA_UID, "--gid", LAMBDA_GID,
        # No network: moto answers in process, and nothing (the OCR models included) is
        # fetched at run time.
        "--unshare-net",
        "--unsetenv", "HOME",
        "--chdir", "/tmp",
        "--die-with-parent",
        "--",
    ]  # fmt: skip


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (make test installs it)")
def test_the_plan_and_parse_handlers_run_on_a_read_only_filesystem_without_home(model_weights):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/docling", "tools", ".")),
        "PYTHONDONTWRITEBYTECODE": "1",
        **image_env(),
        ARTIFACTS_ENV: str(model_weights),
    }
    probe = "import os, pathlib; pathlib.Path('/tmp/x').touch(); print(os.path.exists('/dev/shm'))"
    checked = subprocess.run(
        [*lambda_sandbox(model_weights), sys.executable, "-c", probe],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.stdout.strip() == "False", checked.stderr  # no /dev/shm; /tmp writable
    done = subprocess.run(
        [*lambda_sandbox(model_weights), sys.executable, "-m", "tests.support.lambda_sandbox"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    states = json.loads(done.stdout.strip().splitlines()[-1])
    assert (states["plan"]["pipeline"], states["plan"]["page_count"]) == ("standard", 3)
    assert states["plan"]["ocr_page_count"] == 1
    parse = states["parse"]
    assert (parse["pipeline"], parse["page_count"], parse["partial"]) == ("standard", 3, False)
    read = "".join(c if c.isalnum() else " " for c in states["ocr_text"].lower()).split()
    assert read == ["the", "scanned", "page", "reads", "as", "this", "sentence"]
