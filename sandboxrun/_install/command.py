"""`install` / `uninstall` from parsed arguments to exit code: see the package's docstring."""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
from collections.abc import Callable, Sequence

from .._dialects.registry import DIALECTS
from .._errors import ConfigError
from .._settings import account_home
from .._text import printable
from .._wrapped import HOOK_SCRIPT
from . import claude as _claude
from . import managed as _managed_file
from .files import BackupStore, diff
from .record import Record
from .registry import installer


def command(args: argparse.Namespace) -> int:
    """Run `install` or `uninstall` as parsed by `add_commands`: the agent's install
    module does it (`registry`), with what `Request` lends it."""
    dialect = DIALECTS[args.agent]
    module = installer(dialect.agent)
    if module is None:  # its row names no install module (`list` gives the hand wrapper)
        raise ConfigError(
            f"install does not support {dialect.agent} yet: wrap commands with "
            f"`sandboxrun exec --agent {dialect.agent} --untrusted -- '...'` by hand"
            f" (`sandboxrun list --agent {dialect.agent}` prints the exact line for each hook)"
        )
    home = os.path.abspath(args.home) if args.home else account_home()
    return module.install(Request(args, home), dialect)


class Request:
    """One install or uninstall (`registry.Request`): its arguments, the user's backups
    and install's record, and the helpers every agent's module borrows from here."""

    def __init__(self, args: argparse.Namespace, home: str) -> None:
        self.args, self.home = args, home
        self.store, self.record = BackupStore(home), Record(home)

    @property
    def undo(self) -> bool:
        return bool(self.args.command == "uninstall")

    def launcher(self) -> list[str]:
        return launch_for(self.args, self.home)()

    def shared_launcher(self) -> list[str]:
        return launcher()

    def run_options(self, args: argparse.Namespace, home: bool = True) -> list[str]:
        return _run_options(args, home)

    def show(
        self, changes: Sequence[_claude.Change], dry_run: bool, store: BackupStore,
        record: Record, undo: bool, managed: bool = False, then: Callable[[], None] | None = None,
    ) -> int:  # fmt: skip
        return _show_files(changes, dry_run, store, record, undo, managed, then)

    def session(
        self, args: argparse.Namespace, agent: str, home: str, workspace: str, undo: bool,
        found: bool,
    ) -> None:  # fmt: skip
        session_check(args, agent, home, workspace, undo, found)


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
