"""`sandboxrun check`: its flags, and the run from settings to exit code.

Exit codes: 0 every event passed; 1 the gate failed (a block or deny, a failed hook under
fail-closed, an unreadable line, hooks that could not run); 2 a usage, configuration or
engine error before any event was judged (one line on stderr), like every command.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI builds its parser from this module: keep it light
    from .._backends.base import Backend
    from .._settings import Settings
    from .events import EventLine

HELP = "replay recorded events (JSON Lines) through the hooks: the CI gate"
# Events from which a replay runs on the warm path. One event at a time, each kind's first
# cold: the pool pays off only once enough follow; below, its launches past the last
# event and their removal at the end cost more than it saves (bench/run.py, the check
# rows: on 2 cores warm lost at 1-5 events and won from about 8).
WARM_FROM = 8


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """`check`'s own flags (the agent and workspace flags come from the CLI's common set)."""
    cmd.add_argument(
        "--events",
        required=True,
        metavar="FILE",
        help="recorded events, one JSON object per line (- for stdin)",
    )
    cmd.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report here")
    cmd.add_argument(
        "--fail-open",
        action="store_true",
        help="a hook that fails, times out or cannot start does not fail the gate",
    )
    cmd.add_argument("--timeout", type=float, metavar="S", help="seconds per hook")
    cmd.add_argument("--image", help="hook runtime image")
    cmd.add_argument("--runtime", help="OCI runtime, e.g. runsc (gVisor); refused if missing")


def read(args: argparse.Namespace, settings: Settings) -> list[EventLine]:
    """The events file's lines, read once (it may be stdin)."""
    from .._dialects.registry import DIALECTS
    from .events import read_events

    return read_events(args.events, DIALECTS[settings.agent])


def worth_warming(lines: list[EventLine], settings: Settings) -> bool:
    """Whether the replay of `lines` gains from the warm pool (`WARM_FROM`)."""
    events = sum(1 for line in lines if line.problem is None and line.hook_name is not None)
    return settings.pool_size > 0 and events >= WARM_FROM


def run_check(
    args: argparse.Namespace,
    settings: Settings,
    backend: Backend,
    lines: list[EventLine] | None = None,
) -> int:
    """Replay the events of `args.events`; print the summary; return the exit code.

    The workspace is `--workspace`, else the current directory, never the roots the
    recorded events name: they were recorded elsewhere, and the gate checks this one
    (the hooks read it in the events' `workspaceRoots` / `cwd`, as `run` fills them in).
    """
    from .._runner import HookFactory, resolve_workspaces
    from .junit import write_junit
    from .replay import replay
    from .report import Progress, summary

    factory = HookFactory(settings, backend, home=args.home, hooks_dirs=args.hooks_dir)
    workspaces = resolve_workspaces({}, args.workspace, factory.dialect, settings, cwd=factory.cwd)
    if lines is None:
        lines = read(args, settings)
    # The gate cannot vouch for events it could not run: no engine or image is exit 2
    # at once, not one error per line.
    backend.check()
    progress = Progress(sys.stderr, len(lines))
    try:
        results = replay(factory, lines, workspaces, progress.start, progress.done)
    finally:
        progress.close()
    project_var = factory.dialect.project_dir_var
    sys.stdout.write(summary(results, workspaces, settings.fail_closed, project_var))
    sys.stdout.flush()
    if args.junit:
        write_junit(args.junit, results, settings.agent, args.events, workspaces)
    code = 0 if all(r.passed for r in results) else 1
    if any(r.abandoned for r in results):  # stuck hook threads must not hold the job
        sys.stderr.flush()
        os._exit(code)
    return code
