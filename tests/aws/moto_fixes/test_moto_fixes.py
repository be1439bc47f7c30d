"""The changes to moto as a whole: each fidelity fix has its test against stock moto,
beside it and named after it, a docstring saying what moto does and what AWS does (with
AWS's page) and a row in docs/moto-fixes.md; each speed patch has its test comparing its
answers with moto's and a row there too; each patches what moto has, or adds what it
lacks."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from richdoc_tools.local.moto_fixes import fidelity, speed
from richdoc_tools.local.patch_targets import original

from tests.support.moto_fixes import DELETE_THE_FIX

TESTS = Path(__file__).parent
PAGE = Path(__file__).resolve().parents[3] / "docs" / "moto-fixes.md"


def _name(change: ModuleType) -> str:
    return change.__name__.rpartition(".")[2]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"checked_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stock_moto_tests(path: Path) -> list[str]:
    """The tests of a module that assert AWS's behaviour against stock moto: marked
    ``xfail(strict=True)`` with the reason that says to delete the fix, so that a moto
    release that behaves as AWS fails the suite saying so."""
    return [
        name
        for name, test in vars(_module(path)).items()
        if name.startswith("test_stock_moto_")
        and any(
            mark.name == "xfail"
            and mark.kwargs.get("strict") is True
            and DELETE_THE_FIX in mark.kwargs.get("reason", "")
            for mark in getattr(test, "pytestmark", [])
        )
    ]


@pytest.mark.parametrize("fix", fidelity.FIXES, ids=_name)
def test_every_fidelity_fix_has_its_stock_moto_test_and_its_row(fix: ModuleType) -> None:
    name = _name(fix)
    test = TESTS / f"test_fidelity_{name}.py"
    assert test.is_file(), name
    assert _stock_moto_tests(test), f"{name}: no test of stock moto marked moto_differs"
    doc = fix.__doc__ or ""
    assert "What moto does:" in doc and "What AWS does:" in doc, name
    assert "https://docs.aws.amazon.com/" in doc, name
    assert f"`fidelity.{name}`" in PAGE.read_text(), name


@pytest.mark.parametrize("patch", speed.PATCHES, ids=_name)
def test_every_speed_patch_has_its_test_against_moto_s_answers_and_its_row(
    patch: ModuleType,
) -> None:
    name = _name(patch)
    assert (TESTS / f"test_speed_{name}.py").is_file(), name
    assert f"`speed.{name}`" in PAGE.read_text(), name


def test_every_fidelity_fix_is_installed_on_some_stack() -> None:
    assert len(set(fidelity.FIXES)) == len(fidelity.FIXES)
    groups = (fidelity.EVERY_STACK, fidelity.STRICT, fidelity.CONFIGURED)
    assert set(fidelity.FIXES) == {fix for group in groups for fix in group}


def test_every_change_patches_what_moto_has_or_adds_what_it_lacks() -> None:
    for change in (*fidelity.FIXES, *speed.PATCHES):
        added = getattr(change, "ADDED", ())
        for target in change.PATCHED:
            if target in added:
                assert original(target) is None, f"moto has {target} now: use it"
            else:
                assert original(target) is not None, target
