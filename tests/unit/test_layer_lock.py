"""The DoclingLayer installs a lock: every package pinned, each at the version the tests
run (so the layer's boto3 and botocore are a pair the suite exercises), and the built
layer is checked against Lambda's 250 MB limit with a margin (make static)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "docling"


def _requirements(path: Path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def _lock() -> dict[str, str]:
    """Package name (normalised) -> the version the lock pins."""
    pinned = {}
    for requirement in _requirements(LAYER / "requirements.txt"):
        [spec] = requirement.specifier  # one exact pin, nothing else
        assert spec.operator == "==" and "*" not in spec.version, requirement
        assert not requirement.marker and not requirement.url, requirement
        pinned[str(canonicalize_name(requirement.name))] = spec.version
    return pinned


def test_every_package_of_the_layer_is_pinned_including_its_direct_requirements() -> None:
    lock = _lock()
    for requirement in _requirements(LAYER / "requirements.in"):
        name = str(canonicalize_name(requirement.name))
        assert name in lock, f"{name} is in requirements.in but not locked"
        assert requirement.specifier.contains(lock[name], prereleases=True), requirement
        for extra in requirement.extras:  # the extra's packages are locked too
            for needed in importlib.metadata.requires(requirement.name) or []:
                dependency = Requirement(needed)
                if dependency.marker and dependency.marker.evaluate({"extra": extra}):
                    assert str(canonicalize_name(dependency.name)) in lock, dependency
    # The lock is closed: each locked package's own requirements are locked too.
    for name in lock:
        for needed in importlib.metadata.requires(name) or []:
            dependency = Requirement(needed)
            if dependency.marker and not dependency.marker.evaluate({"extra": ""}):
                continue
            assert str(canonicalize_name(dependency.name)) in lock, (name, dependency)


def test_the_tests_run_the_versions_the_layer_ships() -> None:
    installed = {
        str(canonicalize_name(dist.metadata["Name"])): dist.version
        for dist in importlib.metadata.distributions()
    }
    mismatched = {
        name: (version, installed.get(name))
        for name, version in _lock().items()
        if installed.get(name) != version
    }
    assert mismatched == {}, "regenerate the lock (make lock) or the environment"


def test_the_layer_ships_boto3_with_the_botocore_it_was_released_for() -> None:
    # aws-xray-sdk brings botocore into the layer, where it shadows the runtime's; shipped
    # alone it would run beside the runtime's boto3, a pair nothing tests. The layer
    # ships the SDK whole: boto3, its botocore and s3transfer, as boto3 requires them.
    lock = _lock()
    assert {"boto3", "botocore", "s3transfer"} <= set(lock)
    for needed in importlib.metadata.requires("boto3") or []:
        dependency = Requirement(needed)
        name = str(canonicalize_name(dependency.name))
        if name in ("botocore", "s3transfer", "jmespath"):
            assert dependency.specifier.contains(lock[name]), (dependency, lock[name])


def test_pyproject_declares_what_the_layer_ships() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dependencies = pyproject["project"]["dependencies"]
    declared = {str(canonicalize_name(Requirement(r).name)) for r in dependencies}
    layer = {str(canonicalize_name(r.name)) for r in _requirements(LAYER / "requirements.in")}
    assert declared == layer


def _size_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_package_size", ROOT / "scripts" / "check_package_size.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_size_check_fails_short_of_the_limit() -> None:
    check = _size_check()
    limit = check.LIMIT_BYTES
    assert limit == 262_144_000  # Lambda: "Unzipped size must be smaller than 262144000 bytes"
    assert check.verdict(int(0.8 * limit)) == "ok"
    assert check.verdict(int(0.95 * limit)).startswith("TOO CLOSE")
    assert check.verdict(limit) == "TOO BIG"
