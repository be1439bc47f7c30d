"""Earlier releases of this repository, from its git history: what the upgrade tests
deploy before upgrading to this checkout. The history is required, never optional: a
clone without it (shallow, or without tags) fails these tests with a message that says
how to get it, rather than skipping them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

# The release deployed before this one: every release keeps the upgrade test against its
# predecessor (move this on when a new release is tagged).
PREVIOUS_RELEASE = "v0.3.0"
# The commit each release tag names. A clone that was given the history but not the tags
# still finds the release by its commit; where the tag is there, it must name this commit
# (tests/unit/test_upgrades.py).
RELEASE_COMMITS = {
    "v0.1.0": "fc0dd504b843bed5bfce1fc42f0c4a31b2d36c55",
    "v0.2.0": "218dcf7b398c8fd8f0534bdb029192178d7f2ba4",
    "v0.3.0": "b278820cdc9758fc96e334070d29dbcb562aae2c",
}
# The last commit before admission: its jobs table has the by-status index alone.
BEFORE_ADMISSION = "11b7c7f"


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def tagged_commit(tag: str) -> str | None:
    """The commit ``tag`` names in this clone, or None when the clone lacks the tag."""
    found = _git("rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    return found.stdout.decode().strip() if found.returncode == 0 else None


def _revision(revision: str) -> str:
    found = _git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if found.returncode != 0 and revision in RELEASE_COMMITS:
        found = _git("rev-parse", "--verify", "--quiet", f"{RELEASE_COMMITS[revision]}^{{commit}}")
    if found.returncode != 0:
        pytest.fail(
            f"the upgrade tests deploy {revision} from this repository's history, which this "
            "clone lacks: run them in a full clone with its tags "
            "(git fetch --unshallow --tags, or git clone without --depth)",
            pytrace=False,
        )
    return found.stdout.decode().strip()


def template_at(revision: str) -> str:
    """template.yaml as it was at ``revision``."""
    shown = _git("show", f"{_revision(revision)}:template.yaml")
    assert shown.returncode == 0, shown.stderr.decode()
    return shown.stdout.decode()


def checkout_at(revision: str, directory: Path) -> Path:
    """The files of ``revision`` (git archive) in ``directory``: its template, functions,
    state machine and layer, as that release deployed them."""
    archive = _git("archive", "--format=tar", _revision(revision))
    assert archive.returncode == 0, archive.stderr.decode()
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive.stdout, check=True)
    return directory
