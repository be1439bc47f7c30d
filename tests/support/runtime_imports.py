"""What a source file imports when it runs (for the tests that guard what ships to Lambda)."""

from __future__ import annotations

import ast
from pathlib import Path


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(path: Path) -> set[str]:
    """Every absolute module a file may import at run time, at any depth (lazy imports
    inside functions too), leaving out ``if TYPE_CHECKING:`` blocks, which never run."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif _type_checking_only(node):
            pending.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found
