"""A fresh virtual environment holding the richdoc-client wheel and its dependencies only.

The wheel is built from the package directory (``pip wheel``, as a consumer builds it),
then installed with ``pip install --no-index``: pip resolves the wheel's requirements
against the distributions this machine already has, which the environment sees through
a path file pointing at links to exactly the dependency closure (so nothing is
downloaded, and docling, docling-core and the richdoc package are not there).
"""

from __future__ import annotations

import importlib.metadata
import os
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


def _wanted(requirement: Requirement, extras: tuple[str, ...]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def closure(
    requirements: list[Requirement], extras: tuple[str, ...] = ()
) -> list[importlib.metadata.Distribution]:
    """The installed distributions these requirements (with the wheel's ``extras``) pull
    in, dependencies included (with the extras each requirement names)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [(requirement, extras) for requirement in requirements]
    while pending:
        requirement, wanted = pending.pop()
        if not _wanted(requirement, wanted):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found[name] = importlib.metadata.distribution(requirement.name)
        own = tuple(sorted(requirement.extras))
        pending.extend((Requirement(r), own) for r in found[name].requires or [])
    return [found[name] for name in sorted(found)]


def fresh_venv(root: Path, wheel: Path, extras: tuple[str, ...] = ()) -> Path:
    """A venv at ``root`` with the client installed (with ``extras``: the loaders'
    frameworks); returns its python."""
    # Without pip of its own: this interpreter's pip installs into it (--python).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    deps = root / "deps"
    deps.mkdir()
    for dist in closure(requirements_of(wheel), extras):
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
    wanted = f"richdoc-client[{','.join(extras)}] @ {wheel.as_uri()}" if extras else str(wheel)
    # As a consumer's shell would: in a directory of its own, with no path of this
    # checkout's (its richdoc.egg-info says richdoc, whose dependencies are not there).
    env = _consumer_environment()
    subprocess.run(
        [*pip, "install", "--quiet", "--no-index", wanted], check=True, cwd=root, env=env
    )
    checked = subprocess.run([*pip, "check"], capture_output=True, text=True, cwd=root, env=env)
    assert checked.returncode == 0, f"pip check: {checked.stdout}{checked.stderr}"
    return python


def _consumer_environment() -> dict[str, str]:
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))
    }
