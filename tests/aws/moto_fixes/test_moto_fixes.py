"""The fidelity fixes as a whole: each one has its test against stock moto, beside it and
named after it, and a line in docs/moto-fixes.md; each patches what moto has."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from richdoc_tools.local.moto_fixes import fidelity
from richdoc_tools.local.patches.target import original

TESTS = Path(__file__).parent
PAGE = Path(__file__).resolve().parents[3] / "docs" / "moto-fixes.md"


def test_every_fidelity_fix_has_its_stock_moto_test_and_its_line_in_the_docs() -> None:
    page = PAGE.read_text()
    for fix in fidelity.EVERY:
        name = fix.__name__.rpartition(".")[2]
        test = TESTS / f"test_fidelity_{name}.py"
        assert test.is_file(), name
        assert _stock_moto_tests(test), f"{name}: no test of stock moto marked xfail(strict=True)"
        assert f"`fidelity.{name}`" in page, name
        assert fix.__doc__ and "What moto does" in fix.__doc__ and "What AWS does" in fix.__doc__
        assert "https://docs.aws.amazon.com/" in fix.__doc__, name


def test_every_fixed_attribute_exists_in_moto() -> None:
    for fix in fidelity.EVERY:
        for target in fix.PATCHED:
            assert original(target) is not None, target


def _stock_moto_tests(path: Path) -> list[str]:
    """The tests of a module that assert AWS's behaviour against stock moto: marked
    ``xfail(strict=True)``, so that a moto release that behaves as AWS fails the suite."""
    spec = importlib.util.spec_from_file_location(f"stock_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [
        name
        for name, test in vars(module).items()
        if name.startswith("test_stock_moto_")
        and any(
            mark.name == "xfail" and mark.kwargs.get("strict") is True
            for mark in getattr(test, "pytestmark", [])
        )
    ]
