"""What Python source imports, read from its syntax tree (never by importing it): each
import of a file, and the import graph of whole packages, for the tests that keep what
ships to Lambda and the tools' packages within their boundaries."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """One module a file imports: ``from package import module`` names the module when it
    is one of the known modules, else the package."""

    target: str
    line: int
    type_only: bool  # inside ``if TYPE_CHECKING:``: it never runs


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolved(node: ast.ImportFrom, package: str | None) -> str | None:
    """The absolute module of a ``from ... import``; None for a relative one whose
    package is not known."""
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports(path: Path, *, package: str | None = None, known: Collection[str] = ()) -> list[Import]:
    """Every module ``path`` imports, at any depth (lazy imports inside functions too).
    ``package`` (the file's package) resolves relative imports; ``known`` are the modules
    ``from package import name`` may name."""
    found: list[Import] = []
    pending: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text()), False)]
    while pending:
        node, type_only = pending.pop()
        if isinstance(node, ast.Import):
            found += [Import(alias.name, node.lineno, type_only) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolved(node, package)
            if module is not None:
                for alias in node.names:
                    named = f"{module}.{alias.name}"
                    found.append(
                        Import(named if named in known else module, node.lineno, type_only)
                    )
        if _type_checking_only(node):
            assert isinstance(node, ast.If)
            pending += [(child, True) for child in node.body]
            pending += [(child, type_only) for child in node.orelse]
            continue
        pending += [(child, type_only) for child in ast.iter_child_nodes(node)]
    return sorted(found, key=lambda i: (i.line, i.target))


def runtime_imports(path: Path) -> set[str]:
    """Every absolute module a file may import at run time, at any depth (lazy imports
    inside functions too), leaving out ``if TYPE_CHECKING:`` blocks, which never run."""
    return {i.target for i in imports(path) if not i.type_only}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_only: bool

    def __str__(self) -> str:
        typed = " (for type checking)" if self.type_only else ""
        return f"{self.source} imports {self.target} at line {self.line}{typed}"


def within(prefix: str) -> Callable[[str], bool]:
    """Whether a module is ``prefix`` or inside it."""
    return lambda module: module == prefix or module.startswith(prefix + ".")


class ImportGraph:
    """The imports of every module of some packages: an edge per import statement, the
    targets outside the packages included (as leaves)."""

    def __init__(self, modules: dict[str, Path]) -> None:
        self.modules = modules
        self.edges: dict[str, list[Edge]] = {}
        for name, path in modules.items():
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            self.edges[name] = [
                Edge(name, i.target, i.line, i.type_only)
                for i in imports(path, package=package, known=modules)
            ]

    @classmethod
    def of_packages(cls, *roots: Path) -> ImportGraph:
        """Every module under each package directory, named from the directory's name."""
        modules: dict[str, Path] = {}
        for root in roots:
            for path in sorted(root.rglob("*.py")):
                parts = [root.name, *path.relative_to(root).with_suffix("").parts]
                if parts[-1] == "__init__":
                    parts.pop()
                modules[".".join(parts)] = path
        return cls(modules)

    def first_party(self, module: str) -> str | None:
        """The module of the graph an import names (``a.b.C`` imported as a name: ``a.b``)."""
        while module and module not in self.modules:
            module = module.rpartition(".")[0]
        return module or None

    def chain(
        self, start: str, forbidden: Callable[[str], bool], *, runtime_only: bool = False
    ) -> list[Edge] | None:
        """The shortest chain of imports from ``start`` to a module ``forbidden`` says
        no to, through the graph's own modules; None when there is none."""
        came: dict[str, list[Edge]] = {start: []}
        queue = [start]
        while queue:
            module = queue.pop(0)
            for edge in self.edges.get(module, []):
                if runtime_only and edge.type_only:
                    continue
                if forbidden(edge.target):
                    return [*came[module], edge]
                inner = self.first_party(edge.target)
                if inner is not None and inner not in came:
                    came[inner] = [*came[module], edge]
                    queue.append(inner)
        return None

    def cycles(self, among: Callable[[str], bool], *, runtime_only: bool = True) -> list[list[str]]:
        """Every circle of run-time imports (``runtime_only``; else of any imports, those
        for type checking too) among the modules ``among`` selects (each as its modules,
        sorted): the strongly connected components of more than one module, or of one that
        imports itself (Tarjan's algorithm)."""
        graph = {
            name: sorted(
                {
                    inner
                    for edge in edges
                    if not (runtime_only and edge.type_only)
                    and (inner := self.first_party(edge.target)) is not None
                    and among(inner)
                }
            )
            for name, edges in self.edges.items()
            if among(name)
        }
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        found: list[list[str]] = []

        def visit(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            for nxt in graph[node]:
                if nxt not in index:
                    visit(nxt)
                    low[node] = min(low[node], low[nxt])
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))

        for node in graph:
            if node not in index:
                visit(node)
        return sorted(found)
