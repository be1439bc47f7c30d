"""A fresh virtual environment holding the richdoc-client wheel and its dependencies only.

The wheel is built from the package directory (``pip wheel``, as a consumer builds it),
then installed with ``pip install --no-index``: pip resolves the wheel's requirements
against the distributions this machine already has, which the environment sees through
a path file pointing at links to exactly the dependency closure (so nothing is
downloaded, and docling, docling-core and the richdoc package are not there).
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.paths import ROOT

CLIENT = ROOT / "layers" / "docling" / "richdoc_client"


def build_wheel(out: Path) -> Path:
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    subprocess.run(
        [*pip_wheel, "--no-build-isolation", "--wheel-dir", str(out), str(CLIENT)],
        check=True,
        cwd=out,
    )
    [wheel] = out.glob("richdoc_client-*.whl")
    return wheel


def requirements_of(wheel: Path) -> list[Requirement]:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        message = Parser().parsestr(archive.read(metadata).decode())
    return [Requirement(line) for line in message.get_all("Requires-Dist") or []]


def closure(requirements: list[Requirement]) -> list[importlib.metadata.Distribution]:
    """The installed distributions these requirements pull in, dependencies included."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found[name] = importlib.metadata.distribution(requirement.name)
        pending.extend(Requirement(r) for r in found[name].requires or [])
    return [found[name] for name in sorted(found)]


def fresh_venv(root: Path, wheel: Path) -> Path:
    """A venv at ``root`` with the client installed; returns its python."""
    # Without pip of its own: this interpreter's pip installs into it (--python).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    deps = root / "deps"
    deps.mkdir()
    for dist in closure(requirements_of(wheel)):
        base = Path(str(dist.locate_file("")))
        tops = {f.parts[0] for f in dist.files or [] if f.parts and f.parts[0] != ".."}
        for top in sorted(tops):
            if (base / top).exists() and not (deps / top).exists():
                (deps / top).symlink_to(base / top)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "richdoc-client-deps.pth").write_text(f"{deps}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "--no-index", str(wheel)], check=True)
    subprocess.run([*pip, "check"], check=True, capture_output=True)
    return python
