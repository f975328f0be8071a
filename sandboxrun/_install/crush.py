"""`install` / `uninstall --agent crush`: Crush's `crush.json` rewritten in place, each
command pointing at a small `#!` script that `install` writes.

Why a script: Crush runs a hook's `command` in its own embedded shell (`mvdan.cc/sh`,
in-process) and execs a real process only for a path-named file with a `#!` line
(charmbracelet/crush@37f36e93 `internal/hooks/runner.go` `runOne`, `internal/shell/
dispatch.go` `scriptDispatchHandler`). A script with `#!/bin/sh` is therefore run by
the system's `sh` whatever Crush's interpreter does with quoting, builtins (its own
`jq`, coreutils) or a future change to how inline words are dispatched; the original
command reaches `sandboxrun exec` as one single-quoted word, read by `sh` alone.

The scripts live in the user's data folder (`files.store_root`/crush/<file key>/),
never in the workspace, named by the sha256 of their bytes; the config's `command`
becomes the script's absolute path (plus ` --untrusted`, an argument the script
ignores, for a project's file: install's record then counts it only there, as for
every other agent). The rest is the Claude family's machinery (`claude.py`: the
record, byte-exact `uninstall`, `--dry-run`), over Crush's flat entries. `uninstall`
removes the file's scripts after giving the file back.

Files: `--workspace DIR` its `crush.json`, `.crush.json` and `.crush/crush.json` (their
commands come with the repository: `exec --untrusted`), `--user`
`~/.config/crush/crush.json`. Not `~/.local/share/crush/crush.json` (Crush's own state,
which Crush rewrites) and no `--managed`: Crush has no switch that makes it ignore a
project's hooks, so a hook a pull adds runs on the host until `install` runs again
(`list`/`doctor` name it).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._dialects.base import Dialect
from .._dialects.crush import config as _config
from .._errors import ConfigError
from .._wrapped import UNTRUSTED
from . import claude as _claude
from .files import BackupStore, atomic_write, read_bytes, sha256, store_root
from .record import Record
from .shape import Handlers, Shape
from .targets import inside_project
from .unwrapped import unwrapped_note

if TYPE_CHECKING:
    from .registry import Request

AGENT = "crush"


@dataclass(frozen=True, slots=True)
class ScriptShape(Shape):
    """Crush's flat entries; a wrapper is written as the path of its script (`scripts`:
    path -> bytes, filled while planning, written by `command` before the config)."""

    folder: str = ""
    scripts: dict[str, bytes] = field(default_factory=dict)

    def handlers(self, data: dict[str, Any]) -> Handlers:
        for where, view in Shape.handlers(self, data):
            if view["timeout"] is None:  # Crush's own default: the wrapper ends first
                view["timeout"] = float(_config.DEFAULT_TIMEOUT)
            yield where, view

    def written(self, command: str, launcher: Sequence[str], options: Sequence[str]) -> str:
        body = script(command)
        path = os.path.join(self.folder, sha256(body)[:16])
        self.scripts[path] = body
        return shlex.quote(path) + (f" {UNTRUSTED}" if UNTRUSTED in options else "")


def script(command: str) -> bytes:
    """The wrapper script: `sh` execs sandboxrun with the hook's stdin and variables."""
    return (
        "#!/bin/sh\n"
        "# Written by `sandboxrun install --agent crush`: Crush execs only scripts with a\n"
        "# #! line; the hook command runs sandboxed. `sandboxrun uninstall` removes it.\n"
        f"exec {command}\n"
    ).encode()


def folder_of(home: str, path: str) -> str:
    """The scripts folder of one config file (by its real path, as the record)."""
    key = sha256(os.path.realpath(path).encode("utf-8", "surrogateescape"))[:24]
    return str(store_root(home) / "crush" / key)


def config_files(args: argparse.Namespace, home: str) -> tuple[list[str], bool]:
    """(the crush.json files to rewrite, whether their commands come with a repository)."""
    if args.global_ or args.managed or args.managed_file:
        raise ConfigError(
            "install --agent crush takes --workspace or --user: Crush has no managed level"
            " and no switch over a project's hooks"
        )
    user = os.path.realpath(os.path.join(home, _config.USER_DIR, "crush.json"))
    if args.user:
        return [user], False
    root = os.path.abspath(args.workspace or os.getcwd())
    paths = [inside_project(os.path.join(root, n), root) for n in _config.PROJECT_FILES]
    if user in paths:
        raise ConfigError(f"{user} is your user crush.json, not a project's: use --user")
    return paths, True


def install(request: Request, dialect: Dialect) -> int:
    """The agent's module (`registry.Installer`): `command`."""
    return command(request.args, request.home, request.store, request.record, request.launcher,
                   request.run_options, request.show)  # fmt: skip


def command(
    args: argparse.Namespace, home: str, store: BackupStore, record: Record,
    launcher: Callable[[], list[str]], run_options: Callable[..., list[str]],
    show: Callable[..., int],
) -> int:  # fmt: skip
    """Plan every file, write the scripts (before any config names them), then the files
    (`show`: command.py's `_show_files`; `run_options`: its `_run_options`); on
    uninstall remove the scripts after."""
    paths, untrusted = config_files(args, home)
    undo = args.command == "uninstall"
    if undo:
        changes = _claude.plan_uninstall(paths, store, record, SHAPE)
        code = show(changes, args.dry_run, store, record, True)
        for path in paths if not args.dry_run else ():
            if store.get(path) is None and not record.entries(path):
                shutil.rmtree(folder_of(home, path), ignore_errors=True)
        return code
    changes = []
    launch = launcher()
    for path in paths:
        shape = ScriptShape(nested=False, typed=False, folder=folder_of(home, path))
        extra = ([UNTRUSTED] if untrusted else []) + run_options(args, False)
        [*planned] = _claude.plan_install([path], launch, AGENT, extra, record, shape)
        for change in planned:
            if not args.dry_run:
                _write_scripts(shape)
            elif shape.scripts:
                change = _with_scripts(change, shape)
            changes.append(change)
    return show(changes, args.dry_run, store, record, False)


SHAPE = ScriptShape(nested=False, typed=False)  # reading only (`status`, uninstall)


def _write_scripts(shape: ScriptShape) -> None:
    """The file's scripts, 0700, and none other of install's left in its folder."""
    os.makedirs(shape.folder, mode=0o700, exist_ok=True)
    for path, body in shape.scripts.items():
        atomic_write(path, body, 0o700)
    for name in os.listdir(shape.folder):
        if os.path.join(shape.folder, name) not in shape.scripts:
            os.unlink(os.path.join(shape.folder, name))


def _with_scripts(change: _claude.Change, shape: ScriptShape) -> _claude.Change:
    from dataclasses import replace

    listed = ", ".join(sorted(shape.scripts))
    return replace(change, note=f"{change.note}; would write script(s) {listed}")


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """`list`/`doctor`: per hook of an installed file that runs on the host (a pull or
    an edit brought it: `unwrapped.unwrapped_note`), and per wrapper whose script is
    gone."""
    store = BackupStore(home)
    record = Record(home)
    project = os.path.abspath(roots[0] if roots else os.getcwd())
    files = [(os.path.join(home, _config.USER_DIR, "crush.json"), False, "--user")]
    files += [(os.path.join(project, n), True, f"--workspace {project}")
              for n in _config.PROJECT_FILES]  # fmt: skip
    out = []
    for path, untrusted, again in files:
        try:
            raw = read_bytes(path)
            data = _claude.parse(path, raw, SHAPE)[1] if raw is not None else {}
            entries = record.entries(path)
        except ConfigError:
            continue  # `list` names the unparsable file already
        if store.get(path) is None and not entries:
            continue  # never installed: nothing promised
        for where, hook in _claude.command_handlers(data, SHAPE):
            json_path = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)
            at = f"{path} {json_path[1:]}"
            if record.original(path, hook, untrusted, entries) is None:
                out.append(unwrapped_note(at, hook, AGENT, again))
                continue
            words = shlex.split(hook["command"])
            if not (words and os.path.isfile(words[0]) and os.access(words[0], os.X_OK)):
                out.append(f"cannot work: {at}: its script {words[:1]} is gone: run"
                           f" `sandboxrun install --agent crush {again}` again")  # fmt: skip
    return out
