"""`install` / `uninstall` from parsed arguments to exit code: see the package's docstring."""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
from collections.abc import Callable, Sequence

from .._dialects.base import Dialect
from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.wrapped import HOOK_SCRIPT
from .._dialects.cline import ClineDialect
from .._dialects.cursor import CursorDialect
from .._dialects.installed import MOVED, moved_folder, read_shim
from .._dialects.kiro import KiroDialect
from .._dialects.registry import DIALECTS
from .._dialects.windsurf import WindsurfDialect
from .._errors import ConfigError
from .._settings import account_home
from .._text import printable
from . import claude as _claude
from . import claudelike as _claudelike
from . import cline as _cline
from . import copilot as _copilot
from . import crush as _crush
from . import cursor as _cursor
from . import gemini as _gemini
from . import goose as _goose
from . import managed as _managed_file
from . import windsurf as _windsurf
from .cline import forwarder_folder, forwarders_installed, listdir
from .files import BackupStore, diff
from .record import UNTRUSTED, Record

# Agents `run`, `exec` and `list` speak for, whose config `install` cannot rewrite yet
# (none today; `list`/`doctor` give such an agent's hooks the hand wrapper's line).
NOT_YET: frozenset[str] = frozenset()


def command(args: argparse.Namespace) -> int:
    """Run `install` or `uninstall` as parsed by `add_commands`."""
    dialect = DIALECTS[args.agent]
    if dialect.agent in NOT_YET:
        raise ConfigError(
            f"install does not support {dialect.agent} yet: wrap commands with "
            f"`sandboxrun exec --agent {dialect.agent} --untrusted -- '...'` by hand"
            f" (`sandboxrun list --agent {dialect.agent}` prints the exact line for each hook)"
        )
    home = os.path.abspath(args.home) if args.home else account_home()
    store, record = BackupStore(home), Record(home)
    undo = args.command == "uninstall"
    launch = launch_for(args, home)
    if dialect.agent == "codex":  # its own files and formats: `codex.py`
        from . import codex as _codex

        return _codex.command(args, home, store, record, _Tools(launch))
    if isinstance(dialect, CursorDialect | WindsurfDialect):  # hooks.json, Claude's machinery
        files = _windsurf if isinstance(dialect, WindsurfDialect) else _cursor
        paths, untrusted = files.hooks_files(dialect, args, home)
        if undo:
            changes = _claude.plan_uninstall(paths, store, record, files.SHAPE)
        else:
            options = ([UNTRUSTED] if untrusted else []) + _run_options(args, home=False)
            changes = _claude.plan_install(
                paths, launch(), dialect.agent, options, record, files.SHAPE
            )
        return _show_files(changes, args.dry_run, store, record, undo)
    if dialect.agent == "goose":  # each plugin's hooks.json, Claude's machinery (`goose.py`)
        changes = _goose.plan(args, home, store, record, launch, _run_options(args, False))
        return _show_files(changes, args.dry_run, store, record, undo)
    if dialect.agent == "crush":  # crush.json, each command a script it writes (`crush.py`)
        return _crush.command(args, home, store, record, launch, _run_options, _show_files)
    if dialect.agent == "kiro":  # its agent files, Claude's machinery (`kiro.py`)
        return _kiro_command(args, dialect, home, store, record, undo)
    if dialect.agent == "gemini":  # its settings files, rewritten in place (`gemini.py`)
        changes = _gemini.plan(args, home, store, record, launch, _run_options(args, False))
        then = None
        if not (args.user or args.managed or args.managed_file):
            folder = os.path.abspath(args.workspace or os.getcwd())
            then = functools.partial(session_check, args, "gemini", home, folder, undo,
                                     bool(changes))  # fmt: skip
        return _show_files(changes, args.dry_run, store, record, undo, then=then)
    if dialect.agent == "copilot":
        options = _run_options(args, home=False)
        changes, lines = _copilot.plan(args, home, record, undo, [] if undo else launch(), options)
        code = _show_files(changes, args.dry_run, store, record, undo)
        for line in lines:
            print(printable(line))
        return code
    if isinstance(dialect, ClaudeDialect):
        if args.global_:
            raise ConfigError("--global is for the Cline family; the Claude family has --managed")
        if dialect.agent in _claudelike.AGENTS:
            return _claudelike_command(args, dialect, home, store, record, undo)
        if args.managed or args.managed_file:
            return _managed(args, dialect, home, store, undo)
        workspace = None if args.user else os.path.abspath(args.workspace or os.getcwd())
        paths = _claude.settings_paths(dialect, workspace, home)
        if undo:
            changes = _claude.plan_uninstall(paths, store, record)
        else:
            # A project's commands come with the repository: their env lines, approvals
            # and input rewrites must never reach the agent.
            options = [UNTRUSTED] if workspace else []
            options += _run_options(args, home=False)
            changes = _claude.plan_install(paths, launch(), dialect.agent, options, record)
        then = None
        if workspace is not None:
            then = functools.partial(session_check, args, dialect.agent, home, workspace, undo,
                                     bool(changes))  # fmt: skip
        return _show_files(changes, args.dry_run, store, record, undo, then=then)
    assert isinstance(dialect, ClineDialect)
    if args.managed or args.managed_file:
        raise ConfigError("--managed is for Claude Code; the Cline family has --global")
    return _cline_command(args, dialect, home, record, undo)


def _claudelike_command(
    args: argparse.Namespace, dialect: ClaudeDialect, home: str, store: BackupStore,
    record: Record, undo: bool,
) -> int:  # fmt: skip
    """Factory, Qwen, CodeBuddy, iFlow, Devin, Augment: `claudelike.plan`."""
    managed = bool(args.managed or args.managed_file)
    scope = "managed" if managed else "user" if args.user else "workspace"
    workspace = os.path.abspath(args.workspace or os.getcwd()) if scope == "workspace" else None
    launch = [] if undo else launch_for(args, home)()
    changes = _claudelike.plan(dialect, scope, workspace, args.managed_file, home, launch,
                               _run_options(args, home=False), undo)  # fmt: skip
    return _show_files(changes, args.dry_run, store, record, undo)


def _kiro_command(
    args: argparse.Namespace, dialect: Dialect, home: str, store: BackupStore,
    record: Record, undo: bool,
) -> int:  # fmt: skip
    from . import kiro as _kiro

    assert isinstance(dialect, KiroDialect)
    files, untrusted = _kiro.agent_files(dialect, args, home)
    options = ([UNTRUSTED] if untrusted else []) + _run_options(args, home=False)
    changes = []  # each file read as its kind (agent file, v3 or IDE), in the listed order
    launch = [] if undo else launch_for(args, home)()
    for path, shape in files:
        if undo:
            changes += _claude.plan_uninstall([path], store, record, shape)
        else:
            changes += _claude.plan_install([path], launch, dialect.agent, options, record,
                                            shape)  # fmt: skip
    return _show_files(changes, args.dry_run, store, record, undo)


class _Tools:
    """What `codex.py` borrows from here (`codex.Tools`)."""

    def __init__(self, launch: Callable[[], list[str]]) -> None:
        self.launcher = launch

    shared_launcher = staticmethod(lambda: launcher())
    run_options = staticmethod(lambda args, home=True: _run_options(args, home))
    show = staticmethod(lambda *a, **k: _show_files(*a, **k))
    session = staticmethod(lambda *a: session_check(*a))


def session_check(
    args: argparse.Namespace, agent: str, home: str, workspace: str, undo: bool, found: bool
) -> None:
    """With a workspace's install (that found files: `found`), the session-start check
    in the user's own settings; with its uninstall, off again when no other workspace
    of the agent is installed (`session.py`). Printed, or shown as a diff (`--dry-run`)."""
    from .._dialects.claude.settings import project_root
    from . import session

    if agent not in session.AGENTS or not (found or undo):
        return
    project = os.path.realpath(project_root(workspace, home, f".{agent}"))
    options = ["--home", home] if args.home else []  # where the record is, as for `run`
    if args.config:  # the hooks' config file: the server it starts is the one they use
        options += ["--config", os.path.abspath(args.config)]
    try:
        launch = [] if undo else launch_for(args, home)()
        change = session.plan(agent, home, project, launch, undo, options)
    except ConfigError as exc:  # the workspace's own change stands: say what is missing
        print(printable(f"no session-start check: {exc}"))
        return
    if change is None:
        return
    if args.dry_run:
        sys.stdout.write(diff(change.path, change.old, change.new))
    else:
        session.apply(change, home)
    print(printable(f"{change.path}: {change.note}"))


def _managed(
    args: argparse.Namespace, dialect: ClaudeDialect, home: str, store: BackupStore, undo: bool
) -> int:
    if dialect.agent != "claude":
        raise ConfigError(f"--managed: {dialect.agent} documents no managed settings file")
    path = os.path.abspath(args.managed_file) if args.managed_file else _managed_file.managed_file()
    if undo:
        change = _managed_file.plan_unmanage(path, store)
        changes = [change] if change else []
        return _show_files(changes, args.dry_run, store, Record(home), True, managed=True)
    options = _run_options(args)
    change = _managed_file.plan_managed(path, launcher(), dialect.hook_names, options)
    return _show_files([change], args.dry_run, store, Record(home), False, managed=True)


def _show_files(
    changes: Sequence[_claude.Change], dry_run: bool, store: BackupStore, record: Record,
    undo: bool, managed: bool = False, then: Callable[[], None] | None = None,
) -> int:  # fmt: skip
    """Apply (or, `dry_run`, show) each change, saying what it did; `then`: more to do
    (the session-start check) before the dry run's last line."""
    if not changes:
        print("nothing to do: no settings file found")
    for change in changes:
        if dry_run:
            sys.stdout.write(diff(change.path, change.old, change.new))
        elif managed and not undo:
            _managed_file.apply_managed(change, store)
        elif undo:
            _claude.apply_uninstall(change, store, record)
        else:
            _claude.apply_install(change, store, record)
        print(printable(f"{change.path}: {change.note}"))
    if then is not None:
        then()
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


def _cline_command(
    args: argparse.Namespace, dialect: ClineDialect, home: str, record: Record, undo: bool
) -> int:
    forwarding = forwarders_installed(dialect, home, record)
    user = args.user or args.global_
    if args.user and forwarding:  # keep the global forwarders whole
        args.global_ = True
    base = home if user else os.path.abspath(args.workspace or os.getcwd())
    rels = dialect.global_dirs if user else dialect.workspace_dirs
    plans = []
    launch = [] if undo else launch_for(args, home)()
    # `--global`: one folder forwards; the others get shims for their own hooks only.
    forwarder = forwarder_folder(dialect) if args.global_ else None
    for rel in rels:
        folder, moved = os.path.join(base, rel), moved_folder(base, rel)
        if undo:
            plans.append(_cline.plan_uninstall(folder, moved, record, user=user))
            continue
        dirs = [moved]
        if rel == forwarder:  # relative: Cline runs global hooks in the primary workspace root
            dirs += [os.path.join(MOVED, d) for d in dialect.workspace_dirs]
        options = [w for d in dirs for w in ("--hooks-dir", d)] + _run_options(args)
        shims = user or not forwarding
        plans.append(_cline.plan_install(
            dialect, folder, moved, home, launch, options, record,
            all_names=rel == forwarder, shims=shims, user=user,
        ))  # fmt: skip
    for plan in plans:
        if args.dry_run:
            for preview in plan.previews:
                sys.stdout.write(preview)
        else:
            _cline.apply(plan, record)
        for path in plan.unlink:
            print(printable(f"removed shim {path}"))
        for note in plan.notes:
            print(printable(note))
    if not any(p.notes or p.unlink for p in plans):
        installed = any(
            read_shim(os.path.join(p.folder, e), record) for p in plans for e in listdir(p.folder)
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


def launcher(home: str | None = None, write: bool = False) -> list[str]:
    """How an installed hook starts this sandboxrun: `PYTHON -I SCRIPT`, both absolute;
    with `home` (files of the user's own, or a project's), the launcher file that
    starts them (`launcher.py`: a short fixed path in what an agent shows the model),
    written there when `write`.
    `-I` before anything else: the agent starts hooks with the environment a
    repository's settings `env` block sets, and Python would otherwise run a
    `sitecustomize.py` from its `PYTHONPATH` (or honour `PYTHONHOME`...) on the host,
    before any code of ours. pip writes console scripts with a bare `#!PYTHON` (it
    drops flags), so the interpreter is named here, not left to the shebang.
    SCRIPT is `hook_script()`: the command without the entry point launcher's cost."""
    python, flag, script = _isolated()
    if home is None:
        return [python, flag, script]
    from . import launcher as _launcher

    return [_launcher.write(home, python, script) if write else _launcher.path(home)]


def launch_for(args: argparse.Namespace, home: str) -> Callable[[], list[str]]:
    """The `launcher` of an install: the system's files (`--managed`), read by every
    account, start the venv's Python by its path; the others, the user's launcher file
    (written unless it is a dry run)."""
    if args.managed or args.managed_file:
        return launcher
    return functools.partial(launcher, home, not args.dry_run)


def _isolated() -> tuple[str, str, str]:
    """`PYTHON -I SCRIPT`, checked: PYTHON imports sandboxrun isolated."""
    script = hook_script()
    python = _python_of(script)
    import subprocess  # only here: checking the launcher is install's alone

    try:  # what `-I` leaves out may be where sandboxrun lives (`pip install --user`)
        check = [python, "-I", "-c", "import sandboxrun._client"]
        done = subprocess.run(
            check, env={}, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        ok = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        raise ConfigError(
            f"{python} -I cannot import sandboxrun (installed in the user's site folder?):"
            " install it into a virtualenv or with pipx, so hooks can start it isolated"
        )
    return python, "-I", script


def _python_of(script: str) -> str:
    """The interpreter of a console script: its `#!` line when that is one absolute
    path (pip's; a path with spaces gets a `/bin/sh` trampoline), else this Python."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        first = ""
    python = first[2:].strip() if first.startswith("#!") else ""
    named = os.path.basename(python).startswith(("python", "pypy"))
    if named and os.path.isabs(python) and " " not in python and os.access(python, os.X_OK):
        return python
    return os.path.abspath(sys.executable)


def hook_script() -> str:
    """The script installed hooks start: `sandboxrun-hook` beside the `sandboxrun`
    command (`bin/sandboxrun-hook`: the same command, 8 ms sooner on every hook), else,
    for an install without it, the command itself."""
    command = executable()
    beside = os.path.join(os.path.dirname(command), HOOK_SCRIPT)
    return beside if os.path.isfile(beside) else command


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
