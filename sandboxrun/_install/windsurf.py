"""`install` / `uninstall --agent windsurf`: Windsurf's `hooks.json` rewritten in place.

The Claude family's machinery (`claude.py`: the record, the backups, byte-exact
`uninstall`, `--dry-run`), over Windsurf's shape: the handlers are the entries of
`hooks.<event>[]` themselves, with no `type` (every entry is a command), and no
timeout or fail-closed field of their own. `show_output` and `working_directory` stay
as they were: Windsurf starts the wrapper where it would have started the hook, and
`exec --agent windsurf` starts the hook in that folder inside when it is mounted.
Source: the reference (shared/reference/agent-hooks-2026.md section 5) and
docs.windsurf.com/windsurf/cascade/hooks (`_dialects/windsurf`).

The files (`hooks_files`): `--workspace DIR` the workspace's `.windsurf/hooks.json` (its
commands come with the repository: `exec --untrusted`; a symlink out of the project
is refused), `--user` `~/.codeium/windsurf/hooks.json` and the JetBrains plugin's
`~/.codeium/hooks.json` (each that exists), `--managed` the system file
(`/etc/windsurf/hooks.json`; `--managed-file` another).

No route that survives a `git pull`: Windsurf has no trust gate and no switch that
makes it ignore a workspace's hooks (the system level only adds hooks; all levels
run). So a hook a pull adds runs on the host until `install` runs again; `doctor`
and `list` name it (`status.py`). `--managed` therefore promises no containment of
repository hooks, only that the system file's own hooks run sandboxed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._dialects.base import Dialect
from .._dialects.windsurf import WindsurfDialect
from .._dialects.windsurf.config import config_files
from .._errors import ConfigError
from .claudecode import in_place
from .managed import managed_file
from .shape import Shape
from .targets import inside_project
from .unwrapped import file_notes

if TYPE_CHECKING:
    from .registry import Request

SHAPE = Shape(nested=False, typed=False)

# Where Windsurf reads the system hooks.json (its hooks docs, "System-Level").
SYSTEM_FILES = {
    "linux": "/etc/windsurf/hooks.json",
    "darwin": "/Library/Application Support/Windsurf/hooks.json",
    "win32": r"C:\ProgramData\Windsurf\hooks.json",
}


def hooks_files(
    dialect: WindsurfDialect, args: argparse.Namespace, home: str
) -> tuple[list[str], bool]:
    """(the hooks.json files to rewrite, whether their commands come with a repository)."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; Windsurf has --user and --managed")
    if args.managed or args.managed_file:  # (as for Claude: --managed-file says --managed)
        given, what = args.managed_file, "Windsurf system hooks.json"
        path = os.path.abspath(given) if given else managed_file(SYSTEM_FILES, what)
        return [path], False
    users = [os.path.realpath(os.path.join(home, d, "hooks.json"))
             for d in (dialect.user_dir, dialect.jetbrains_dir)]  # fmt: skip
    if args.user:  # the user's own files: a dotfiles symlink is followed
        return users, False
    root = os.path.abspath(args.workspace or os.getcwd())
    path = inside_project(os.path.join(root, dialect.project_dir, "hooks.json"), root)
    if path in users:
        raise ConfigError(f"{path} is your user hooks.json, not a workspace's: use --user")
    return [path], True


def note_files(
    dialect: WindsurfDialect, roots: Sequence[str], home: str
) -> tuple[list[tuple[str, str, Shape, str]], str]:
    """(the files as `unwrapped.file_notes` reads them: path, scope, shape, the agent
    whose install writes it; the workspace)."""
    project = os.path.abspath(roots[0] if roots else os.getcwd())
    scopes = {"system": "managed", "user": "user", "workspace": "project"}
    scoped = [(path, scopes.get(source, "project"), SHAPE, dialect.agent)
              for path, source, _ in config_files(dialect, [project], home)]  # fmt: skip
    return scoped, project


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent windsurf`: its hooks.json, Claude's machinery."""
    assert isinstance(dialect, WindsurfDialect)
    paths, untrusted = hooks_files(dialect, request.args, request.home)
    return in_place(request, dialect.agent, [(p, SHAPE) for p in paths], untrusted)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Its hooks.json files, as for Cursor (`note_files`)."""
    assert isinstance(dialect, WindsurfDialect)
    return file_notes(dialect.agent, *note_files(dialect, roots, home), home)
