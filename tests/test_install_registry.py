"""Install's registry (`_install/registry.py`): one module per agent, named in the
agents' one table, each with the same two entries; `command.py` and `status.py` ask it
and never which agent they serve (issue 31, item 5)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from sandboxrun._dialects.registry import WHERE
from sandboxrun._install.registry import Installer, installer

INSTALL = Path(__file__).resolve().parent.parent / "sandboxrun" / "_install"
ENTRIES = [name for name, _ in inspect.getmembers(Installer) if not name.startswith("_")]


@pytest.mark.parametrize("agent", list(WHERE))
def test_every_agent_has_an_install_module_with_the_entries(agent: str) -> None:
    module = installer(agent)
    assert module is not None
    for name in ENTRIES:
        entry = getattr(module, name)
        assert (
            list(inspect.signature(entry).parameters)
            == list(inspect.signature(getattr(Installer, name)).parameters)[1:]
        )  # without `self`


def test_the_entries_are_install_and_notes() -> None:
    assert ENTRIES == ["install", "notes"]


@pytest.mark.parametrize("name", ["command.py", "status.py"])
def test_the_generic_modules_never_ask_which_agent(name: str) -> None:
    """No agent name compared, no dialect class tested, no agent's module imported."""
    modules = {m for _, _, m in WHERE.values() if m}  # (`claude.py` is the machinery)
    found = []
    for node in ast.walk(ast.parse((INSTALL / name).read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            found += [ast.unparse(node) for o in operands for c in ast.walk(o)
                      if isinstance(c, ast.Constant) and c.value in WHERE]  # fmt: skip
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance":
            found.append(ast.unparse(node)) if "Dialect" in ast.unparse(node) else None
        elif isinstance(node, ast.ImportFrom):
            names = {node.module or "", *(a.name for a in node.names)}
            found += [f"import {n}" for n in names if n.split(".")[-1] in modules]
    assert found == []
