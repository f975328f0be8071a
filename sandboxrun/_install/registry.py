"""The install side of each agent: one module per agent (its row's third column in the
agents' one table, `_dialects.table.WHERE`), each with the same two entries:

- `install(request, dialect)`: `install` or `uninstall` (`request.undo`) of the agent's
  files, planned, then applied or shown (`--dry-run`); the exit code;
- `notes(dialect, roots, home)`: what `list` and `doctor` must tell the user of an
  installed workspace (a hook that runs unsandboxed although it was installed...).

`command.py` and `status.py` ask this registry for the module and branch on no agent.
A module is imported when its agent is asked for (a `list` of one agent imports one).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Protocol, cast

from .._dialects.table import WHERE

if TYPE_CHECKING:
    from .._dialects.base import Dialect
    from .claude import Change
    from .files import BackupStore
    from .record import Record


class Request(Protocol):
    """One `install`/`uninstall` as parsed, and what `command.py` lends every agent's
    module (it imports them: no import back)."""

    args: argparse.Namespace
    home: str  # the account's home, or `--home`
    store: BackupStore
    record: Record

    @property
    def undo(self) -> bool: ...  # `uninstall`
    def launcher(self) -> list[str]: ...  # the user's launcher file (`launcher.py`)
    def shared_launcher(self) -> list[str]: ...  # for every account: the venv's Python
    def session(
        self, args: argparse.Namespace, agent: str, home: str, workspace: str, undo: bool,
        found: bool,
    ) -> None: ...  # fmt: skip
    def run_options(self, args: argparse.Namespace, home: bool = True) -> list[str]: ...
    def show(
        self, changes: Sequence[Change], dry_run: bool, store: BackupStore, record: Record,
        undo: bool, managed: bool = False, then: Callable[[], None] | None = None,
    ) -> int: ...  # fmt: skip


class Installer(Protocol):
    """An agent's install module (see the module)."""

    def install(self, request: Request, dialect: Dialect) -> int: ...
    def notes(self, dialect: Dialect, roots: Sequence[str], home: str) -> list[str]: ...


def installer(agent: str) -> Installer | None:
    """The install module of `agent`, imported now; None for an agent `install` does not
    support yet (its row names no module: `list` gives its hooks the hand wrapper)."""
    module = WHERE[agent][2]
    return None if module is None else cast(Installer, import_module(f"{__package__}.{module}"))
