"""The registry of agents: each `--agent` name and the dialect that speaks for it.

Lazy: a name maps to the module that defines its dialect, imported on first use. A
cold `sandboxrun run` (a new process per event) needs one agent's dialect, and
importing all of them cost tens of milliseconds of its start (issue 19, target 4).
`DIALECTS` still behaves as the dict it was for callers that look up, iterate or
patch it (tests `monkeypatch.setitem` it); iterating its values imports them all.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module
from typing import TYPE_CHECKING

from .table import WHERE as WHERE  # re-exported: the table's readers import it here too

if TYPE_CHECKING:
    from .._settings import Settings
    from .base import Dialect


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
