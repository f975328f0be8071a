"""`install` / `uninstall --agent copilot`: GitHub Copilot CLI's hook files rewritten in
place, by the Claude family's machinery (`claude.py`: record, backups, byte-exact
uninstall) with Copilot's `Shape`.

Source: github/docs `content/copilot/reference/hooks-reference.md` (commit 05da5bc3),
"Hooks locations", "Policy hooks", "Command hooks", "Disable all hooks"; the CLI is
closed source. What is rewritten:

- `--workspace DIR`: the repository's `.github/hooks/*.json` and the `hooks` of
  `.github/copilot/settings.json` and `settings.local.json` (`--untrusted`, and the
  workspace pinned: an entry's `cwd` is the repository's to choose, and `exec` would
  otherwise mount whatever project that folder belongs to). `.claude/settings*.json`,
  which Copilot also runs, are `install --agent claude`'s.
- `--user`: `~/.copilot/hooks/*.json` and `~/.copilot/settings.json`.
- `--managed`: the administrator's own policy files, `/etc/github-copilot/policy.d/*.json`
  (or `--managed-file`): their hooks are wrapped, trusted. A policy file can only add
  hooks: no setting turns off the repository's or the user's (`disableAllHooks` in a
  policy file turns off that file; github/copilot-cli#3697 asks for such a switch and
  is open), so forwarding hooks there would run every repository hook twice, once
  unsandboxed. The per-file rewrite is the route; a hook a later pull adds runs
  unsandboxed until `install` runs again, and `list`/`doctor` name it (`notes`).

Each entry's one command (`_dialects.copilot.installed.view`: `bash`, else `command`,
else `exec` with `args`) becomes the same command run by `sandboxrun exec --agent
copilot`, with a `--timeout` below the entry's `timeoutSec` (Copilot's default 30 s when
absent), so sandboxrun ends a slow hook before Copilot does. Copilot runs the wrapper in
the entry's `cwd` with its `env`: exec starts the hook in that folder when it lies in
the workspace, and the variables reach the sandbox through exec's filters. But Copilot
sets them on the host shell that starts the wrapper, before any sandbox (`BASH_ENV`,
`LD_PRELOAD` run code there): a repository entry with an `env` is named at install.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._dialects.base import Dialect
from .._dialects.claude.settings import project_root
from .._dialects.copilot.config import POLICY_DIR, json_files
from .._dialects.copilot.events import HOOK_NAMES
from .._dialects.copilot.installed import exec_without_args, view
from .._errors import ConfigError
from .._text import printable
from .._wrapped import UNTRUSTED
from . import claude as _claude
from . import jsonspan
from .files import BackupStore, read_bytes
from .record import Record
from .shape import CLAUDE, Handlers, Shape
from .targets import inside_project
from .unwrapped import file_notes

if TYPE_CHECKING:
    from .registry import Request

# (file, trusted: the user's or an administrator's, its Shape, the `install` arguments
# that rewrite it: files with the same arguments are installed together)
RecordedFile = tuple[str, bool, Shape, str]

AGENT = "copilot"
USER_DIR = ".copilot"
EVENT = "\0event"  # a view's key for the entry's event (no key of a JSON file: a NUL)


@dataclass(frozen=True, slots=True)
class CopilotShape(Shape):
    """Copilot's flat `hooks.<event>[]` entries, each viewed by `installed.view`: the
    field rewritten is the one the CLI runs here (`bash`, `command` or `exec`)."""

    nested: bool = False
    key: str = "bash"
    timeout_key: str = "timeoutSec"

    def _view(self, where: jsonspan.Path, hook: Any) -> Handlers:
        seen = view(hook)
        if seen is not None:
            yield where, {**seen, EVENT: where[-2]}

    def options(self, view: dict[str, Any]) -> list[str]:
        """`--event NAME`: Copilot's input names no event (a name it does not know is
        never fired: nothing to name)."""
        event = view.get(EVENT)
        return ["--event", event] if isinstance(event, str) and event in HOOK_NAMES else []

    def field(self, hook: dict[str, Any]) -> str:
        return str(hook.get("field") or self.key)


COPILOT = CopilotShape()


def workspace_files(project: str) -> list[str]:
    """A repository's hook files, as the CLI finds them."""
    paths = json_files(os.path.join(project, ".github", "hooks"))
    settings = os.path.join(project, ".github", "copilot")
    return paths + [os.path.join(settings, n) for n in ("settings.json", "settings.local.json")]


def user_files(home: str) -> list[str]:
    """The user's hook files (a dotfiles symlink is followed: they are the user's)."""
    folder = os.path.join(home, USER_DIR)
    paths = [*json_files(os.path.join(folder, "hooks")), os.path.join(folder, "settings.json")]
    return [os.path.realpath(p) for p in paths]


def managed_files(args: argparse.Namespace) -> list[str]:
    if args.managed_file:
        return [os.path.abspath(args.managed_file)]
    return json_files(POLICY_DIR)


def plan(
    args: argparse.Namespace, home: str, record: Record, undo: bool,
    launch: Sequence[str], options: Sequence[str],
) -> tuple[list[_claude.Change], list[str]]:  # fmt: skip
    """`install`/`uninstall --agent copilot` (see the module): each file's change, and
    lines to print after them. `options`: those of every installed `exec`."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; Copilot has --user and --managed")
    project = None
    if args.managed or args.managed_file:
        paths = managed_files(args)
    elif args.user:
        paths = user_files(home)
    else:
        project = project_root(os.path.abspath(args.workspace or os.getcwd()), home, ".github")
        # Each must lie in the repository: a symlinked one pointing out stops the install,
        # naming it, before anything changes (it may be the user's own file).
        paths = [inside_project(p, project) for p in workspace_files(project)]
        # A repository's commands: their approvals and rewrites never reach Copilot, and
        # their `cwd` never chooses what is mounted.
        options = [UNTRUSTED, "--workspace", project, *options]
    if undo:
        return _claude.plan_uninstall(paths, BackupStore(home), record, COPILOT), []
    changes = []
    for path, folder in zip(paths, _folders(args, home, project), strict=True):
        # COPILOT_HOOK_DIR inside: the folder of the entry's file (`exec --hook-dir`)
        more = ["--hook-dir", folder] if folder else []
        changes += _claude.plan_install([path], launch, AGENT, [*options, *more], record,
                                        COPILOT)  # fmt: skip
    changes = [replace(c, note=c.note + _warnings(c, project)) for c in changes]
    claude = [p for p in _claude_files(project) if _unwrapped_claude(p, record)] if project else []
    lines = [
        f"Copilot also runs the hooks of {', '.join(claude)}: "
        f"`sandboxrun install --agent claude --workspace {project}` wraps them"
    ] if claude else []  # fmt: skip
    return changes, lines


def _folders(args: argparse.Namespace, home: str, project: str | None) -> list[str | None]:
    """The folder Copilot names each file's hooks by (COPILOT_HOOK_DIR: the folder the
    file is in, as the CLI found it, before a dotfiles symlink), in `plan`'s order of
    paths; None for a file in no folder of Copilot's (`--managed-file` elsewhere)."""
    if args.managed or args.managed_file:
        folders = [os.path.dirname(p) for p in managed_files(args)]
        return [f if f == POLICY_DIR else None for f in folders]
    if args.user:
        user = os.path.join(home, USER_DIR)
        hooks = os.path.join(user, "hooks")
        return [*(hooks for _ in json_files(hooks)), user]
    assert project is not None
    return [os.path.dirname(p) for p in workspace_files(project)]


def _warnings(change: _claude.Change, project: str | None) -> str:
    """What install left as it is in one file, in words: an `exec` entry without `args`
    (not wrapped), and a repository entry's `env` (set on the host, see the module)."""
    if change.old is None:
        return ""
    data = _claude.parse(change.path, change.old)[1]
    out = ""
    bare = [w for w, h in _entries(data) if exec_without_args(h)]
    if bare:
        out += (
            f"; NOT wrapped, runs unsandboxed: {', '.join(bare)} (an exec entry without"
            ' "args": add "args": [] and install again)'
        )
    if project is not None:
        named = [f"{w} ({', '.join(sorted(h['env']))})" for w, h in _entries(data)
                 if isinstance(h.get("env"), dict) and h["env"] and view(h)]  # fmt: skip
        if named:
            out += (
                f"; read the env of {', '.join(named)}: Copilot sets it on the host for"
                " the shell that starts the sandbox (BASH_ENV, LD_PRELOAD... run code"
                " there, unsandboxed)"
            )
    return out


def _entries(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(JSON path in words, entry) of every entry of a Copilot hooks file."""
    table = data.get("hooks")
    if not isinstance(table, dict):
        return
    for event, entries in table.items():
        for i, hook in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(hook, dict):
                yield f"hooks.{event}[{i}]", hook


def _claude_files(project: str) -> list[str]:
    return [os.path.join(project, ".claude", n) for n in ("settings.json", "settings.local.json")]


def _unwrapped_claude(path: str, record: Record) -> bool:
    """Whether a `.claude` settings file has a command hook no install wrapped."""
    try:
        raw = read_bytes(path)
        data = _claude.parse(path, raw)[1] if raw is not None else {}
    except ConfigError:
        return False
    ours = _claude.recorded_in(record, path)
    return any(ours(h) is None for _, h in _claude.command_handlers(data))


def note_files(roots: Sequence[str], home: str) -> tuple[str, list[RecordedFile]]:
    """(the project, the files `list`/`doctor` check with `unwrapped.file_notes`):
    every file Copilot runs hooks from that `install` rewrites (`.claude`'s with
    Claude's shape: `install --agent claude` rewrites those)."""
    project = project_root(roots[0] if roots else os.getcwd(), home, ".github")
    files: list[RecordedFile] = []
    files += [(p, False, COPILOT, f"--agent copilot --workspace {project}")
              for p in workspace_files(project)]  # fmt: skip
    files += [(p, True, COPILOT, "--agent copilot --user") for p in user_files(home)]
    files += [(p, True, COPILOT, "--agent copilot --managed") for p in json_files(POLICY_DIR)]
    files += [(p, False, CLAUDE, f"--agent claude --workspace {project}")
              for p in _claude_files(project)]  # fmt: skip
    return project, files


def unwrappable(files: Sequence[RecordedFile], home: str) -> list[str]:
    """`list`/`doctor`: each `exec` entry without `args` in an installed file (install
    cannot wrap it: it runs unsandboxed)."""
    store, record = BackupStore(home), Record(home)
    out = []
    for path, _, shape, again in files:
        with contextlib.suppress(ConfigError):  # `list` names an unreadable file already
            raw = read_bytes(path)
            if shape is not COPILOT or raw is None or not (store.get(path) or record.entries(path)):
                continue
            out += [
                f'not wrapped: {path} {where}: an exec entry without "args" runs'
                f' unsandboxed: add "args": [] and run `sandboxrun install {again}` again'
                for where, hook in _entries(_claude.parse(path, raw)[1])
                if exec_without_args(hook)
            ]
    return out


# -- the agent's module (`registry.Installer`) ------------------------------------------


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent copilot`: its hook files (`plan`), then its lines."""
    args, store, record, undo = request.args, request.store, request.record, request.undo
    options = request.run_options(args, home=False)
    changes, lines = plan(args, request.home, record, undo, [] if undo else request.launcher(),
                          options)  # fmt: skip
    code = request.show(changes, args.dry_run, store, record, undo)
    for line in lines:
        print(printable(line))
    return code


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Copilot's hook files and settings, and the Claude Code files it also runs (those
    installed with --agent claude), plus each `exec` entry install cannot wrap."""
    project, files = note_files(roots, home)
    scoped = [
        (path, "project" if not trusted else "managed" if "--managed" in again else "user",
         shape, "claude" if "--agent claude" in again else "copilot")
        for path, trusted, shape, again in files
    ]  # fmt: skip
    return file_notes("copilot", scoped, project, home) + unwrappable(files, home)
