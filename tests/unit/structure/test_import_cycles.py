"""No module of Bullpen's imports, at any level, a module that imports it back: imports inside
functions and under ``TYPE_CHECKING`` count as much as those at the top, so a cycle cannot be
hidden by moving an import into a function. A type two modules share lives in a leaf module
(``dashboard/auth/identity.py``, ``dashboard/services/registry.py``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

PACKAGES = ("dashboard", "queues")


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(tree: ast.AST, known: dict[str, Path]) -> Iterator[str]:
    """Every module of ours ``tree`` imports, wherever the import statement stands."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            if name in known:
                yield name


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: set(imported(ast.parse(path.read_text()), known)) - {name}
        for name, path in known.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function() -> None:
    source = "def later():\n    from b import thing\n"
    known = {"a": Path("a.py"), "b": Path("b.py")}
    graph = {"a": set(imported(ast.parse(source), known)), "b": {"a"}}
    assert cycles(graph) == [["a", "b"]]
