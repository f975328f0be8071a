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

The standalone hook files too (`_dialects/kiro/files.py`), each rewritten in place the
same way: Kiro CLI v3's `.kiro/hooks/<name>.json` (each `hooks[i].action.command` of a
`command` action; `timeout` in seconds on the entry) and the Kiro IDE's
`.kiro/hooks/*.kiro.hook` (`then.command` of a `runCommand` hook; `then.timeout`, read
as seconds). An `agent` or `askAgent` action runs no command: left as it is. The IDE
starts the wrapper with the prompt in `USER_PROMPT`; `exec` passes that one variable in.

No route that survives a `git pull`: Kiro documents no trust gate and no switch that
makes it ignore a project's agent files, and no managed level. A hook, or an agent file,
a pull adds runs on the host until `install` runs again; `doctor` and `list` name it
(`status.py`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dialects.base import Dialect
from .._dialects.claude.handler import Timeouts, timeout_seconds
from .._dialects.claude.settings import project_root
from .._dialects.kiro import KIRO, KiroDialect
from .._dialects.kiro.config import agent_files as _agent_files
from .._dialects.kiro.files import hook_files
from .._errors import ConfigError
from . import jsonspan
from .claudecode import in_place
from .shape import Handlers, Shape
from .targets import inside_project
from .unwrapped import file_notes

if TYPE_CHECKING:
    from .registry import Request

SHAPE = Shape(
    nested=False, typed=False, timeout_key="timeout_ms", timeouts=Timeouts(unit=0.001),
    skip=lambda hook: False,
)  # fmt: skip


def _view(where: jsonspan.Path, handler: dict[str, Any], timeout: Any) -> Handlers:
    command = handler.get("command")
    if isinstance(command, str) and command.strip():
        seconds = timeout_seconds(timeout, Timeouts(unit=1.0))
        yield where, {**handler, "command": command,
                      "timeout": seconds if isinstance(seconds, float) else None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class V3Shape(Shape):
    """Kiro CLI v3's file: `hooks[i].action` of a `command` action, its `timeout` (seconds)
    on the entry beside it."""

    def handlers(self, data: dict[str, Any]) -> Handlers:
        entries = data.get("hooks")
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            action = entry.get("action") if isinstance(entry, dict) else None
            if isinstance(action, dict) and action.get("type") == "command":
                yield from _view(("hooks", i, "action"), action, entry.get("timeout"))


@dataclass(frozen=True, slots=True)
class IdeShape(Shape):
    """The Kiro IDE's `.kiro.hook`: `then` of a `runCommand` hook."""

    def handlers(self, data: dict[str, Any]) -> Handlers:
        then = data.get("then")
        if isinstance(then, dict) and then.get("type") == "runCommand":
            yield from _view(("then",), then, then.get("timeout"))


V3_SHAPE = V3Shape(skip=lambda hook: False)
IDE_SHAPE = IdeShape(skip=lambda hook: False)


def hook_file_shape(path: str) -> Shape:
    """How `install` reads a file of a hooks folder, by its name."""
    return IDE_SHAPE if path.endswith(".kiro.hook") else V3_SHAPE


def _shaped(agents: Sequence[str], hooks: Sequence[str]) -> list[tuple[str, Shape]]:
    """Each file with its shape, by the folder it was listed in (never by where a link
    in it leads), each file once: a link to a file listed before is left out."""
    out, seen = [], set()
    for path, shape in [*((p, SHAPE) for p in agents), *((p, hook_file_shape(p)) for p in hooks)]:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            out.append((path, shape))
    return out


def project_of(dialect: KiroDialect, workspace: str, home: str) -> str:
    """The project a folder belongs to: the nearest with `.kiro/agents`, else the
    repository's root (Kiro reads the folder it was started in: start it there)."""
    return project_root(os.path.abspath(workspace), home, dialect.project_dir)


def agent_files(
    dialect: KiroDialect, args: argparse.Namespace, home: str
) -> tuple[list[tuple[str, Shape]], bool]:
    """(the agent files and hook files to rewrite, each with its shape, whether their
    commands come with a repository)."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; Kiro has --user")
    if args.managed or args.managed_file:
        raise ConfigError("--managed: Kiro documents no managed hooks; use --user or --workspace")
    user_folder = os.path.join(home, dialect.user_dir)
    user_hooks = dialect.hooks_folder(home)
    if args.user:  # the user's own files: a dotfiles symlink is followed
        mine = _shaped(_agent_files(user_folder)[0], hook_files(user_hooks))
        return [(os.path.realpath(p), shape) for p, shape in mine], False
    root = project_of(dialect, args.workspace or os.getcwd(), home)
    folder = os.path.join(root, dialect.project_dir)
    hooks = os.path.join(root, os.path.dirname(dialect.project_dir), "hooks")
    for given, users in ((folder, user_folder), (hooks, user_hooks)):
        inside_project(given, root)  # a repository's link to another folder: refused
        if os.path.realpath(given) == os.path.realpath(users):
            raise ConfigError(f"{given} is your user folder, not a project's: use --user")
    theirs = _shaped(_agent_files(folder)[0], hook_files(hooks))
    return [(inside_project(p, root), shape) for p, shape in theirs], True


def note_files(roots: Sequence[str], home: str) -> tuple[str, list[tuple[str, str, Shape]]]:
    """(the project, every (file, scope, shape) `list` and `doctor` read): every file of
    the four folders, so the hooks of a file a pull adds are named too."""
    project = project_of(KIRO, roots[0] if roots else os.getcwd(), home)
    folders = ((os.path.join(home, KIRO.user_dir), "user"),
               (os.path.join(project, KIRO.project_dir), "project"))  # fmt: skip
    hooks = (
        (KIRO.hooks_folder(home), "user"),
        (os.path.join(project, ".kiro", "hooks"), "project"),
    )
    return project, [
        *((p, scope, SHAPE) for folder, scope in folders for p in _agent_files(folder)[0]),
        *((p, scope, hook_file_shape(p)) for folder, scope in hooks for p in hook_files(folder)),
    ]


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent kiro`: its agent files, Claude's machinery, each file
    read as its kind (agent file, v3 or IDE), in the listed order."""
    assert isinstance(dialect, KiroDialect)
    files, untrusted = agent_files(dialect, request.args, request.home)
    return in_place(request, dialect.agent, files, untrusted)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Kiro's agent files, as `install --agent kiro` rewrites them (`note_files`)."""
    project, files = note_files(roots, home)
    scoped = [(path, scope, shape, "kiro") for path, scope, shape in files]
    return file_notes("kiro", scoped, project, home)
