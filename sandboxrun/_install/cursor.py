"""`install` / `uninstall --agent cursor`: Cursor's `hooks.json` rewritten in place.

The Claude family's machinery (`claude.py`: the record, the backups, byte-exact
`uninstall`, `--dry-run`), over Cursor's shape: the handlers are the entries of
`hooks.<event>[]` themselves, `type` may be left out (it defaults to "command"; a
`prompt` entry asks a model and is left alone), `timeout` counts seconds, and
`failClosed` is the entry's own flag, which `--fail-closed` sets on each wrapper
(`Shape.closed_key`: `uninstall` takes off exactly what it set). Source: the reference
(shared/reference/agent-hooks-2026.md section 1.1, cursor.com/docs/hooks captured
2026-03-08); Cursor is closed source.

The files (`hooks_files`): `--workspace DIR` the project's `.cursor/hooks.json` (its
commands come with the repository: `exec --untrusted`), `--user` `~/.cursor/hooks.json`,
`--managed` the enterprise file of this system (`--managed-file` another). Cursor starts
a project hook in the project root, a user hook in `~/.cursor` and an enterprise one in
the enterprise folder; the wrapper is started there too, and `exec --agent cursor`
starts the hook in the same folder inside (`_runner.exec.exec_request`), so `./hooks/x.sh`
means what it meant.

No route that survives a `git pull`: Cursor documents no switch that makes it ignore a
project's hooks (no `allowManagedHooksOnly`; the enterprise file only adds hooks, and
"all matching hooks from every source run"), and its workspace trust is the editor's
whole restricted mode, not a gate for hooks alone. So a hook a pull adds runs on the
host until `install` runs again; `doctor` and `list` name it (`status.py`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._dialects.base import Dialect
from .._dialects.claude.settings import project_root
from .._dialects.cursor import CursorDialect
from .._dialects.cursor.config import config_files
from .._errors import ConfigError
from .claudecode import in_place
from .managed import managed_file
from .shape import Shape
from .targets import inside_project
from .unwrapped import file_notes

if TYPE_CHECKING:
    from .registry import Request

SHAPE = Shape(
    nested=False,
    typed=False,
    closed_key="failClosed",
    skip=lambda hook: hook.get("type", "command") != "command",  # a prompt hook
)

# Where Cursor reads the enterprise hooks.json (its hooks docs, "Enterprise").
ENTERPRISE_FILES = {
    "linux": "/etc/cursor/hooks.json",
    "darwin": "/Library/Application Support/Cursor/hooks.json",
    "win32": r"C:\ProgramData\Cursor\hooks.json",
}


def hooks_files(
    dialect: CursorDialect, args: argparse.Namespace, home: str
) -> tuple[list[str], bool]:
    """(the hooks.json files to rewrite, whether their commands come with a repository)."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; Cursor has --user and --managed")
    if args.managed or args.managed_file:  # (as for Claude: --managed-file says --managed)
        given, what = args.managed_file, "Cursor enterprise hooks.json"
        path = os.path.abspath(given) if given else managed_file(ENTERPRISE_FILES, what)
        return [path], False
    user = os.path.realpath(os.path.join(home, dialect.user_dir, "hooks.json"))
    if args.user:  # the user's own file: a dotfiles symlink is followed
        return [user], False
    root = project_root(os.path.abspath(args.workspace or os.getcwd()), home, dialect.project_dir)
    path = inside_project(os.path.join(root, dialect.project_dir, "hooks.json"), root)
    if path == user:
        raise ConfigError(f"{path} is your user hooks.json, not a project's: use --user")
    return [path], True


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent cursor`: its hooks.json, Claude's machinery."""
    assert isinstance(dialect, CursorDialect)
    paths, untrusted = hooks_files(dialect, request.args, request.home)
    return in_place(request, dialect.agent, [(p, SHAPE) for p in paths], untrusted)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Cursor's hooks.json files, as `install --agent cursor` rewrites them."""
    assert isinstance(dialect, CursorDialect)
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    scoped = [
        (path, "managed" if source == "enterprise" else source, SHAPE, dialect.agent)
        for path, source, _, _ in config_files(dialect, [project], home)
    ]
    return file_notes(dialect.agent, scoped, project, home)
