"""The package's layout holds its rules (DESIGN.md §6): no import circle, even one made
only for type checking or inside a function, and the dialects never import a backend."""

from __future__ import annotations

import ast
from pathlib import Path

import sandboxrun

PACKAGE = Path(sandboxrun.__file__).parent


def _module(path: Path) -> str:
    parts = ["sandboxrun", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, anywhere in it."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:  # `from . import x`: x may be a module
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in modules else target)
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [
                    a.name for a in node.names]  # fmt: skip
                found |= {n for n in names if n and n.startswith("sandboxrun.")}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle() -> None:
    """A package's `__init__` importing its own modules is not a circle (they are its
    parts); every other import, however late, goes one way."""
    graph = _imports()
    for name in graph:  # a package's __init__ may gather its modules
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_dialects_never_import_a_backend() -> None:
    graph = _imports()
    for name, deps in graph.items():
        if name.startswith("sandboxrun._dialects"):
            assert not {d for d in deps if d.startswith("sandboxrun._backends")}, name
