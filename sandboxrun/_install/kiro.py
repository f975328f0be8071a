"""`install` / `uninstall --agent kiro`: each agent file's `hooks` rewritten in place.

The Claude family's machinery (`claude.py`: the record, the backups, byte-exact
`uninstall`, `--dry-run`), over Kiro's shape: the handlers are the entries of
`hooks.<event>[]` themselves, every entry is a command (there is no `type`), and
`timeout_ms` counts milliseconds (`Hook`, aws/amazon-q-developer-cli@15cc8f3c
`crates/chat-cli/src/cli/agent/hook.rs`; the rules: `_dialects/kiro/dialect.py`).

The files (`agent_files`): `--workspace DIR` every `.kiro/agents/*.json` of the project
(its commands come with the repository: `exec --untrusted`), `--user` every
`~/.kiro/agents/*.json`. Kiro runs each hook with `bash -c` in the folder it was started
in, the project; `exec --agent kiro` runs the command the same way inside.

No route that survives a `git pull`: Kiro documents no trust gate and no switch that
makes it ignore a project's agent files, and no managed level. A hook, or an agent file,
a pull adds runs on the host until `install` runs again; `doctor` and `list` name it
(`status.py`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from .._dialects.claude.handler import Timeouts
from .._dialects.claude.settings import project_root
from .._dialects.kiro import KIRO, KiroDialect
from .._dialects.kiro.config import agent_files as _agent_files
from .._errors import ConfigError
from .shape import Shape
from .targets import inside_project

SHAPE = Shape(
    nested=False, typed=False, timeout_key="timeout_ms", timeouts=Timeouts(unit=0.001),
    skip=lambda hook: False,
)  # fmt: skip


def project_of(dialect: KiroDialect, workspace: str, home: str) -> str:
    """The project a folder belongs to: the nearest with `.kiro/agents`, else the
    repository's root (Kiro reads the folder it was started in: start it there)."""
    return project_root(os.path.abspath(workspace), home, dialect.project_dir)


def agent_files(
    dialect: KiroDialect, args: argparse.Namespace, home: str
) -> tuple[list[str], bool]:
    """(the agent files to rewrite, whether their commands come with a repository)."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; Kiro has --user")
    if args.managed or args.managed_file:
        raise ConfigError("--managed: Kiro documents no managed hooks; use --user or --workspace")
    user_folder = os.path.join(home, dialect.user_dir)
    if args.user:  # the user's own files: a dotfiles symlink is followed
        return [os.path.realpath(p) for p in _agent_files(user_folder)[0]], False
    root = project_of(dialect, args.workspace or os.getcwd(), home)
    folder = os.path.join(root, dialect.project_dir)
    inside_project(folder, root)  # a repository's link to another folder: refused
    if os.path.realpath(folder) == os.path.realpath(user_folder):
        raise ConfigError(f"{folder} is your user agents folder, not a project's: use --user")
    return [inside_project(p, root) for p in _agent_files(folder)[0]], True


def note_files(roots: Sequence[str], home: str) -> tuple[str, list[tuple[str, str]]]:
    """(the project, every (agent file, scope) `list` and `doctor` read): every file of
    both folders, so the hooks of an agent file a pull adds are named too."""
    project = project_of(KIRO, roots[0] if roots else os.getcwd(), home)
    folders = ((os.path.join(home, KIRO.user_dir), "user"),
               (os.path.join(project, KIRO.project_dir), "project"))  # fmt: skip
    return project, [(p, scope) for folder, scope in folders for p in _agent_files(folder)[0]]
