"""`sandboxrun install` / `uninstall`: make an agent run its existing hooks through the
sandbox, without the user rewriting them, and undo it byte for byte.

- Claude family (`claude.py`): every command hook of the chosen settings files runs
  through `sandboxrun exec`; `--managed` writes Claude Code's managed settings instead.
- Cline family (`cline.py`): shims in the folders the agent scans, the originals moved
  aside; `--global` adds forwarding hooks in the user's global folders.

`notes` says what `list` and `doctor` must tell the user: a hook that runs unsandboxed
although the workspace was installed (a pull brought it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import project_root, settings_files
from .._dialects.claude.wrapped import chosen_files
from .._dialects.cline import ClineDialect
from .._dialects.installed import MOVED, moved_folder, read_shim
from .._errors import ConfigError
from .._runner import DIALECTS
from .._settings import account_home
from .._text import printable
from . import claude as _claude
from . import cline as _cline
from .files import BackupStore, diff, read_bytes


def add_commands(sub: Any) -> None:
    """The `install` and `uninstall` subcommands (`sub`: the CLI's subparsers)."""
    for name, text in (
        ("install", "make an agent run its existing hooks in the sandbox"),
        ("uninstall", "undo install: the files as they were, byte for byte"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--agent", required=True, choices=sorted(DIALECTS))
        where = cmd.add_mutually_exclusive_group()
        where.add_argument("--workspace", metavar="DIR", help="the project (default: the cwd)")
        where.add_argument("--user", action="store_true", help="the user's own hooks")
        where.add_argument(
            "--managed", action="store_true",
            help="claude: managed settings (allowManagedHooksOnly + forwarding hooks)",
        )  # fmt: skip
        where.add_argument(
            "--global", dest="global_", action="store_true",
            help="Cline family: forwarding hooks in the user's global hook folders",
        )  # fmt: skip
        cmd.add_argument(
            "--managed-file", metavar="FILE",
            help="with --managed: this file instead of the system's managed settings",
        )  # fmt: skip
        cmd.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
        cmd.add_argument(
            "--fail-closed", action="store_true",
            help="the installed hooks block when a hook fails or cannot run",
        )  # fmt: skip
        cmd.add_argument(
            "--home", metavar="DIR",
            help="the user's home (default: your account's; also passed to the installed"
            " `sandboxrun run` commands when given)",
        )  # fmt: skip


def command(args: argparse.Namespace) -> int:
    """Run `install` or `uninstall` as parsed by `add_commands`."""
    dialect = DIALECTS[args.agent]
    home = os.path.abspath(args.home) if args.home else account_home()
    store = BackupStore(home)
    undo = args.command == "uninstall"
    if isinstance(dialect, ClaudeDialect):
        if args.global_:
            raise ConfigError("--global is for the Cline family; the Claude family has --managed")
        if args.managed or args.managed_file:
            return _managed(args, dialect, home, store, undo)
        workspace = None if args.user else os.path.abspath(args.workspace or os.getcwd())
        paths = _claude.settings_paths(dialect, workspace, home)
        if undo:
            changes = _claude.plan_uninstall(paths, store)
        else:
            options = _run_options(args, home=False)
            changes = _claude.plan_install(paths, executable(), dialect.agent, options)
        return _show_files(changes, args.dry_run, store, undo)
    assert isinstance(dialect, ClineDialect)
    if args.managed or args.managed_file:
        raise ConfigError("--managed is for Claude Code; the Cline family has --global")
    return _cline_command(args, dialect, home, undo)


def _managed(
    args: argparse.Namespace, dialect: ClaudeDialect, home: str, store: BackupStore, undo: bool
) -> int:
    if dialect.agent != "claude":
        raise ConfigError(f"--managed: {dialect.agent} documents no managed settings file")
    path = os.path.abspath(args.managed_file) if args.managed_file else _claude.managed_file()
    if undo:
        change = _claude.plan_unmanage(path, store)
        return _show_files([change] if change else [], args.dry_run, store, True, managed=True)
    options = _run_options(args)
    change = _claude.plan_managed(path, executable(), dialect.hook_names, options)
    return _show_files([change], args.dry_run, store, False, managed=True)


def _show_files(
    changes: Sequence[_claude.Change], dry_run: bool, store: BackupStore, undo: bool,
    managed: bool = False,
) -> int:  # fmt: skip
    if not changes:
        print("nothing to do: no settings file found")
    for change in changes:
        if dry_run:
            sys.stdout.write(diff(change.path, change.old, change.new))
        elif managed and not undo:
            _claude.apply_managed(change, store)
        elif undo:
            _claude.apply_uninstall(change, store)
        else:
            _claude.apply_install(change, store)
        print(printable(f"{change.path}: {change.note}"))
    if dry_run:
        print("(dry run: nothing changed)")
    return 0


def _run_options(args: argparse.Namespace, home: bool = True) -> list[str]:
    """Options of the installed `sandboxrun run` (`exec`: without `--home`) commands:
    the ones given to `install` (the config file only when given explicitly)."""
    options = ["--fail-closed"] if args.fail_closed else []
    if args.config:
        options += ["--config", os.path.abspath(args.config)]
    if args.home and home:
        options += ["--home", os.path.abspath(args.home)]
    return options


def _cline_command(args: argparse.Namespace, dialect: ClineDialect, home: str, undo: bool) -> int:
    forwarding = forwarders_installed(dialect, home)
    user = args.user or args.global_
    if args.user and forwarding:  # keep the global forwarders whole
        args.global_ = True
    base = home if user else os.path.abspath(args.workspace or os.getcwd())
    rels = dialect.global_dirs if user else dialect.workspace_dirs
    plans = []
    for rel in rels:
        folder, moved = os.path.join(base, rel), moved_folder(base, rel)
        if undo:
            plans.append(_cline.plan_uninstall(folder, moved))
            continue
        dirs = [moved]
        if args.global_:  # relative: Cline runs global hooks in the primary workspace root
            dirs += [os.path.join(MOVED, d) for d in dialect.workspace_dirs]
        options = [w for d in dirs for w in ("--hooks-dir", d)] + _run_options(args)
        shims = user or not forwarding
        plans.append(_cline.plan_install(dialect, folder, moved, home, executable(), options,
                                         all_names=args.global_, shims=shims))  # fmt: skip
    for plan in plans:
        if args.dry_run:
            for preview in plan.previews:
                sys.stdout.write(preview)
        else:
            _cline.apply(plan)
        for path in plan.unlink:
            print(printable(f"removed shim {path}"))
        for note in plan.notes:
            print(printable(note))
    if not any(p.notes or p.unlink for p in plans):
        installed = any(
            read_shim(os.path.join(p.folder, e)) for p in plans for e in _listdir(p.folder)
        )
        if undo:
            print("nothing to do: nothing installed")
        else:
            print("no change: already installed" if installed else "nothing to do: no hooks found")
    if not undo and not args.global_ and not user and forwarding:
        print("global forwarding hooks are installed: they run these hooks (no shims here)")
    if args.dry_run:
        print("(dry run: nothing changed)")
    return 0


def forwarders_installed(dialect: ClineDialect, home: str) -> bool:
    """Whether `install --global` put forwarding shims in the user's global folders."""
    for rel in dialect.global_dirs:
        folder = os.path.join(home, rel)
        for entry in _listdir(folder):
            shim = read_shim(os.path.join(folder, entry))
            if shim and any(not os.path.isabs(d) for d in shim.hooks_dirs):
                return True
    return False


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def executable() -> str:
    """The absolute path of this sandboxrun's command, for the agent to find it without
    its PATH: the script beside this Python (a venv), else the one on PATH."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "sandboxrun")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("sandboxrun")
    if found:
        return os.path.abspath(found)
    if os.path.basename(sys.argv[0]) == "sandboxrun":
        return os.path.abspath(sys.argv[0])
    raise ConfigError("cannot find the sandboxrun command (not beside Python, not on PATH)")


# -- what list and doctor say -----------------------------------------------------------


def notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """One sentence per hook that runs unsandboxed although sandboxrun was installed
    for it (e.g. a pull brought it), and per installed hook that cannot work."""
    dialect = DIALECTS[agent]
    if isinstance(dialect, ClaudeDialect):
        return _claude_notes(dialect, roots, home)
    assert isinstance(dialect, ClineDialect)
    return _cline_notes(dialect, roots, home)


def _claude_notes(dialect: ClaudeDialect, roots: Sequence[str], home: str) -> list[str]:
    if dialect.agent == "claude" and _managed_forwarding():
        return []  # the agent runs none of these itself: the forwarding hooks run them
    store = BackupStore(home)
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    files = []  # (path, scope, command handlers)
    for path, source, _ in settings_files(dialect, project, home):
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw)[1] if raw is not None else {}
        except ConfigError:
            continue  # `list` names the unparsable file already
        scope = "user" if source == "user" else "project"
        files.append((path, scope, list(_claude.command_handlers(data))))
    # A scope was installed if one of its files was: a pull may bring a new local file.
    installed = {
        scope for path, scope, handlers in files
        if store.get(path) is not None or any(_claude.wrapped(h) for _, h in handlers)
    }  # fmt: skip
    out = []
    for path, scope, handlers in files:
        if scope not in installed:
            continue
        again = "--user" if scope == "user" else f"--workspace {project}"
        for where, hook in handlers:
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            if _claude.wrapped(hook):
                chosen = chosen_files(hook["command"], hook.get("args"))
                inside = [f for f in chosen if _inside(f, project)]
                if inside:
                    out.append(
                        f"not trusted: {path} {at} runs {inside[0]!r} from the workspace or"
                        " PATH: a repository's own sandboxrun or config can loosen the sandbox"
                    )
                elif not os.access(chosen[0], os.X_OK):
                    out.append(_missing(f"{path} {at}", chosen[0], dialect.agent, again))
            elif hook.get("shell") != "powershell":
                out.append(
                    f"not wrapped: {path} {at}: {hook['command'][:120]!r} runs unsandboxed"
                    f" (new since install?): run `sandboxrun install --agent {dialect.agent}"
                    f" {again}` again"
                )
    return out


def _managed_forwarding() -> bool:
    try:
        raw = read_bytes_quiet(_claude.managed_file())
        data = _claude.parse("managed", raw)[1] if raw else {}
    except ConfigError:
        return False
    hooks = data.get("hooks")
    return data.get("allowManagedHooksOnly") is True and isinstance(hooks, dict) and any(
        isinstance(e, dict) and isinstance(e.get("hooks"), list)
        and any(_claude.is_forwarder(h) for h in e["hooks"])
        for entries in hooks.values() if isinstance(entries, list) for e in entries
    )  # fmt: skip


def _cline_notes(dialect: ClineDialect, roots: Sequence[str], home: str) -> list[str]:
    forwarding = forwarders_installed(dialect, home)
    out = []
    for folder, source, workdir in dialect.folders(roots, home):
        if MOVED in folder:
            continue
        base = home if source == "global" else workdir
        moved = moved_folder(base, os.path.relpath(folder, base))
        entries = [os.path.join(folder, e) for e in _listdir(folder)]
        has_shims = any(read_shim(p) for p in entries)
        if not (has_shims or os.path.isdir(moved) or (forwarding and source == "workspace")):
            continue
        found = dialect.discover(None, [], home, [folder]).hooks
        again = "--user" if source == "global" else f"--workspace {base}"
        for path in entries:
            shim = read_shim(path)
            chosen = [shim.executable, *filter(None, [shim.config])] if shim else []
            inside = [f for f in chosen if source == "workspace" and _inside(f, base)]
            if inside:
                out.append(
                    f"not trusted: {path} runs {inside[0]!r} from the workspace or PATH:"
                    " a repository's own sandboxrun or config can loosen the sandbox"
                )
            elif shim and not os.access(shim.executable, os.X_OK):
                out.append(_missing(path, shim.executable, dialect.agent, again))
        for hook in found:
            if read_shim(hook.name) is None:
                out.append(
                    f"not wrapped: {hook.name} runs unsandboxed (new since install?): run"
                    f" `sandboxrun install --agent {dialect.agent} {again}` again"
                )
        if forwarding and source == "workspace":
            continue  # the forwarding hooks run every moved hook
        shimmed = {s.hook_name for s in map(read_shim, entries) if s}
        for hook in dialect.discover(None, [], home, [moved]).hooks if os.path.isdir(moved) else ():
            if hook.hook_name not in shimmed:
                out.append(
                    f"no shim: {hook.name} does not run at all (enabled since install?): run"
                    f" `sandboxrun install --agent {dialect.agent} {again}` again"
                )
    return out


def _missing(where: str, executable: str, agent: str, again: str) -> str:
    """A wrapper or shim whose sandboxrun is gone (moved, uninstalled): the agent gets
    exit 127, a failed hook that does not block, so a guard stops guarding."""
    return (
        f"broken: {where} runs {executable!r}, which is missing: the hook fails and blocks"
        f" nothing; run `sandboxrun install --agent {agent} {again}` again"
    )


def _inside(path: str, root: str) -> bool:
    """Whether `path` (relative: to the workspace, where the agent runs hooks; a bare
    name: from a PATH a repository's `env` block can set) may come with the workspace."""
    if os.sep not in path:
        return True
    return Path(os.path.realpath(os.path.join(root, path))).is_relative_to(os.path.realpath(root))


def read_bytes_quiet(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except ConfigError:
        return None
