"""The contract between install and discovery (`sandboxrun/_wrapped.py`): the dialects
recognise what `install` wrote through it alone, never by importing `_install`
(issue 31, item 5)."""

from __future__ import annotations

import ast
from pathlib import Path

DIALECTS = Path(__file__).resolve().parent.parent / "sandboxrun" / "_dialects"


def imported(path: Path) -> set[str]:
    """The modules `path` imports, relative ones as written (`..._install.record`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def test_no_dialect_imports_install() -> None:
    importing = {
        str(path.relative_to(DIALECTS)): sorted(n for n in imported(path) if "_install" in n)
        for path in sorted(DIALECTS.rglob("*.py"))
    }
    assert {k: v for k, v in importing.items() if v} == {}


def test_no_dialect_names_install() -> None:
    """Not even in a comment: a reader of a dialect is sent to `_wrapped`, not `_install`."""
    named = [
        f"{path.relative_to(DIALECTS)}:{n}"
        for path in sorted(DIALECTS.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "_install" in line
    ]
    assert named == []


def test_install_reads_and_writes_the_same_record(tmp_path: Path) -> None:
    """`_install.record.Record` writes what `_wrapped.Record` (discovery's) reads."""
    from sandboxrun._install.record import Record as Writer
    from sandboxrun._install.sessionrecord import SessionRecord as SessionWriter
    from sandboxrun._wrapped import Record, check_in, is_check, value_key

    home, path = str(tmp_path), str(tmp_path / "settings.json")
    hook = {"command": "/x/hook exec --agent claude --untrusted -- ./guard.sh"}
    Writer(home).add(path, {value_key(hook["command"], None, None): {"command": "./guard.sh"}})
    assert Record(home).original(path, hook, untrusted=True) == ("./guard.sh", None)
    SessionWriter(home).put(path, {"command": "check"})
    assert is_check(check_in(home, path), {"command": "check"})
