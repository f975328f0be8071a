"""One list of agents: the agents' one table (`_dialects/table.py`'s `WHERE`); every
other list of `--agent` names (`_dialects.AGENTS`, `_settings.Agent`, the command line's
choices) is derived from it, and no module writes a second one (issue 31, item 5)."""

from __future__ import annotations

import argparse
import ast
import typing
from pathlib import Path

from sandboxrun._cli.parser import parser
from sandboxrun._dialects import AGENTS
from sandboxrun._dialects.registry import WHERE
from sandboxrun._settings import Agent

PACKAGE = Path(__file__).resolve().parent.parent / "sandboxrun"
REGISTRY = PACKAGE / "_dialects" / "table.py"
# A family may be named together (Claude Code, Qoder, Qoder CN: their transcripts); a
# literal naming more agents than that is a list of agents.
MOST = 3


def literal_lists(path: Path) -> list[tuple[int, int]]:
    """(line, how many agents) of each literal tuple, list, set, dict or subscript in
    `path` that names more than `MOST` agents."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items: list[ast.expr | None] = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        else:
            continue
        names = {i.value for i in items if isinstance(i, ast.Constant) and i.value in WHERE}
        if len(names) > MOST:
            found.append((node.lineno, len(names)))
    return found


def test_no_module_but_the_registry_lists_the_agents() -> None:
    listed = {
        f"{path.relative_to(PACKAGE)}:{line}": n
        for path in sorted(PACKAGE.rglob("*.py")) if path != REGISTRY
        for line, n in literal_lists(path)
    }  # fmt: skip
    assert listed == {}
    assert literal_lists(REGISTRY)  # the check does see the one list


def test_the_other_lists_are_the_registry() -> None:
    assert list(AGENTS) == sorted(WHERE)
    assert typing.get_args(Agent) == tuple(WHERE)


def _choices(command: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """The `--agent` choices of every subcommand of `command`."""
    found = []
    for action in command._actions:
        if "--agent" in action.option_strings and action.choices is not None:
            found.append(tuple(action.choices))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _choices(sub)
    return found


def test_the_command_line_offers_the_registry() -> None:
    choices = _choices(parser())
    assert len(choices) >= 4  # run, list, review, install/uninstall, exec...
    assert set(choices) == {AGENTS}
