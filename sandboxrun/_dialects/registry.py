"""The registry of agents: each `--agent` name and the dialect that speaks for it.

Lazy: a name maps to the module that defines its dialect, imported on first use. A
cold `sandboxrun run` (a new process per event) needs one agent's dialect, and
importing all of them cost tens of milliseconds of its start (issue 19, target 4).
`DIALECTS` still behaves as the dict it was for callers that look up, iterate or
patch it (tests `monkeypatch.setitem` it); iterating its values imports them all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, MutableMapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from .table import WHERE as WHERE  # re-exported: the table's readers import it here too

if TYPE_CHECKING:
    from .._settings import Settings
    from .base import Dialect
    from .claude.dialect import ClaudeDialect
    from .cline import ClineDialect
    from .copilot.dialect import CopilotDialect
    from .crush.dialect import CrushDialect
    from .cursor.dialect import CursorDialect
    from .gemini.dialect import GeminiDialect
    from .goose.dialect import GooseDialect
    from .kiro.dialect import KiroDialect
    from .windsurf.dialect import WindsurfDialect

    T = TypeVar("T")
    Guard = Callable[[Dialect], TypeGuard[T]]  # `isinstance(dialect, T)`, narrowing as it


def load(module: str, name: str) -> Dialect:
    """The dialect `name` of `module` (relative to this package), imported now."""
    dialect: Dialect = getattr(import_module(f"{__package__}.{module}"), name)
    return dialect


class Registry(MutableMapping[str, "Dialect"]):
    """The agents' dialects by name, each imported when first looked up. A value set
    (a test's replacement) wins over the module's until it is deleted or set back."""

    def __init__(self, where: dict[str, tuple[str, str, str | None]]) -> None:
        self._where = dict(where)
        self._names = list(where)
        self._set: dict[str, Dialect] = {}

    def __getitem__(self, name: str) -> Dialect:
        dialect = self._set.get(name)
        if dialect is None:
            if name not in self._names:
                raise KeyError(name)
            module, attribute = self._where[name][:2]
            dialect = self._set[name] = load(module, attribute)
        return dialect

    def __setitem__(self, name: str, dialect: Dialect) -> None:
        if name not in self._names:
            self._names.append(name)
        self._set[name] = dialect

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._set.pop(name, None)
        self._where.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._names  # no import: `name in DIALECTS` is a check of names

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"Registry({self._names!r})"


DIALECTS: MutableMapping[str, Dialect] = Registry(WHERE)


def dialect_of(settings: Settings) -> Dialect:
    """The dialect of `settings.agent`; for Cline, of the variant `cline_variant` names
    (the SDK/CLI by default, or the VS Code extension: `_dialects.cline`)."""
    if settings.agent == "cline" and settings.cline_variant == "vscode":
        return load("cline", "CLINE_VSCODE")
    return DIALECTS[settings.agent]


# `isinstance` against a dialect class, without importing its module for the check: no
# instance of a class exists before its module was imported, so a module not loaded
# answers False (the runner asks these of every run; most agents are none of them).


def shaped(dialect: Dialect, module: str, name: str) -> bool:
    """Whether `dialect` is an instance of the class `name` of `module` (under this package)."""
    loaded = sys.modules.get(f"{__package__}.{module}")
    return loaded is not None and isinstance(dialect, getattr(loaded, name))


def shape(module: str, name: str) -> Any:
    """The check `shaped(dialect, module, name)` as a function of the dialect alone (typed
    at each use below as the `TypeGuard` of the class it checks)."""
    return lambda dialect: shaped(dialect, module, name)


claude_shaped: Guard[ClaudeDialect] = shape("claude.dialect", "ClaudeDialect")
cline_shaped: Guard[ClineDialect] = shape("cline", "ClineDialect")
copilot_shaped: Guard[CopilotDialect] = shape("copilot.dialect", "CopilotDialect")
crush_shaped: Guard[CrushDialect] = shape("crush.dialect", "CrushDialect")
cursor_shaped: Guard[CursorDialect] = shape("cursor.dialect", "CursorDialect")
gemini_shaped: Guard[GeminiDialect] = shape("gemini.dialect", "GeminiDialect")
goose_shaped: Guard[GooseDialect] = shape("goose.dialect", "GooseDialect")
kiro_shaped: Guard[KiroDialect] = shape("kiro.dialect", "KiroDialect")
windsurf_shaped: Guard[WindsurfDialect] = shape("windsurf.dialect", "WindsurfDialect")
