"""Every package's docstring is its map: a reader finds where a thing lives from the
``__init__`` of the package it is in.

Each package of the Lambda code (``richdoc``) and of the tools for people
(``richdoc_tools``) names every module and subpackage it holds, each as a literal between
double backquotes. A module added without a line in its package's map fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = (ROOT / "layers" / "docling" / "richdoc", ROOT / "tools" / "richdoc_tools")


def _members(package: Path) -> list[str]:
    """The modules and subpackages of ``package``: what its map must name."""
    modules = [path.stem for path in package.glob("*.py") if not path.stem.startswith("__")]
    subpackages = [path.parent.name for path in package.glob("*/__init__.py")]
    return sorted(modules + subpackages)


def _docstring(package: Path) -> str:
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


# Each package by its dotted name.
PACKAGES = {
    ".".join(init.parent.relative_to(tree.parent).parts): init.parent
    for tree in TREES
    for init in tree.rglob("__init__.py")
}


def test_the_maps_cover_both_trees() -> None:
    """The walk finds the packages the test is about (a moved tree would pass vacuously)."""
    assert {"richdoc", "richdoc.parse", "richdoc.parse.ocr", "richdoc_tools.local"} <= set(PACKAGES)


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_package_docstring_names_each_of_its_modules_and_subpackages(name: str) -> None:
    package = PACKAGES[name]
    docstring = _docstring(package)
    missing = [member for member in _members(package) if f"``{member}``" not in docstring]
    assert not missing, f"{name}'s __init__ docstring does not name: {', '.join(missing)}"
