"""docs/architecture.md's "where things live" map names every module of the packages,
so a reader finds a thing from its name and the map cannot drift from the tree."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "layers/docling/richdoc/": ROOT / "layers" / "docling" / "richdoc",
    "layers/docling/richdoc_client/": ROOT / "layers" / "docling" / "richdoc_client",
    "tools/richdoc_tools/": ROOT / "tools" / "richdoc_tools",
}


def _map() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Where things live", 1)[1]
    return section.split("\n## ", 1)[0]


def _mapped_modules() -> set[str]:
    modules: set[str] = set()
    package = None
    for line in _map().splitlines():
        heading = next((p for p in PACKAGES if line.startswith(p)), None)
        if heading:
            package = heading
            continue
        match = re.match(r"^  (\S+\.py)\b", line)
        if match and package:
            modules.add(package + match[1])
        elif line and not line.startswith(" "):
            package = None
    return modules


def test_every_module_is_on_the_map_and_every_mapped_module_exists() -> None:
    actual = {
        prefix + str(path.relative_to(root))
        for prefix, root in PACKAGES.items()
        for path in root.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    assert _mapped_modules() == actual


def test_every_handler_directory_is_named() -> None:
    text = _map()
    handlers_entry = text[text.index("functions/<step>/app.py") : text.index("layers/docling/")]
    named = set(re.findall(r"[a-z]+", handlers_entry))
    handlers = {p.parent.name for p in (ROOT / "functions").glob("*/app.py")}
    assert handlers <= named
