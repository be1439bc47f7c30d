"""The patch points as a whole: moto is the exact version they were written against, and
each patch point has its canary test module beside it, named after it."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from richdoc_tools.local import patches
from richdoc_tools.local.patch_targets import original

TESTS = Path(__file__).parent


def test_moto_is_the_exact_pinned_version() -> None:
    assert version("moto") == "5.2.5"


def test_every_patch_point_has_a_canary_module_named_after_it() -> None:
    for point in patches.PATCH_POINTS:
        name = point.__name__.rpartition(".")[2]
        assert (TESTS / f"test_patch_{name}.py").is_file(), name


def test_every_patched_attribute_exists() -> None:
    for target in patches.PATCHED:
        assert original(target) is not None, target
