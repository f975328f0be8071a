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

HELP = "replay recorded events or a session's transcript through the hooks: the CI gate"


def _recorded(path: str) -> dict[tuple[str, str], tuple[str, str]]:
    """The audit trail `--diff` compares with (read before any hook runs: a missing file
    is a usage error, exit 2)."""
    from .._audit.log import AuditLog, read_lines
    from .._errors import ConfigError
    from .audit_diff import recorded

    if not os.path.isfile(path):
        raise ConfigError(f"--diff {path}: no such audit file")
    return recorded(read_lines(AuditLog(path, 1, 100).files()))  # with its rotated copies


# Events from which a replay runs on the warm path. One event at a time, each kind's first
# cold: the pool pays off only once enough follow; below, its launches past the last
# event and their removal at the end cost more than it saves (bench/run.py, the check
# rows: on 2 cores warm lost at 1-5 events and won from about 8).
WARM_FROM = 8


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """`check`'s own flags (the agent and workspace flags come from the CLI's common set)."""
    source = cmd.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--events", metavar="FILE", help="recorded events, one JSON object per line (- for stdin)"
    )
    source.add_argument(
        "--transcript", metavar="FILE",
        help="a real session's record (Claude Code transcript, Codex rollout): its tool calls"
        " and prompts, replayed",
    )  # fmt: skip
    cmd.add_argument(
        "--workspace-map", action="append", default=[], metavar="OLD=NEW",
        help="with --transcript: a recorded folder and the one it is here (repeatable; the"
        " session's own folder maps to the workspace by itself)",
    )  # fmt: skip
    cmd.add_argument(
        "--diff", metavar="AUDIT_LOG",
        help="also show where today's hooks decide otherwise than this audit trail recorded"
        " (joined on the tool-use id); any difference fails the gate",
    )  # fmt: skip
    cmd.add_argument(
        "--require-reviewed", action="store_true",
        help="every replayed repository hook must be as approved in --pins (`sandboxrun"
        " review --approve --pins FILE`); any other fails the gate",
    )  # fmt: skip
    cmd.add_argument(
        "--pins", metavar="FILE", help="the approved pins (default: review_pins in your"
        " config); never a file of the workspace under test",
    )  # fmt: skip
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
    """The events to replay, read once (an events file may be stdin): the events file's
    lines, or the events of a session's transcript, its folder mapped to the workspace."""
    from .._dialects.registry import dialect_of
    from .events import read_events

    dialect = dialect_of(settings)  # Cline's variant: only the SDK knows `tool_call`...
    if not args.transcript:
        return read_events(args.events, dialect)
    from .._runner.factory import resolve_workspaces
    from .transcript import read_transcript

    roots = resolve_workspaces({}, args.workspace, dialect, settings, cwd=os.getcwd())
    return read_transcript(args.transcript, settings.agent, roots[0], args.workspace_map)


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
    from .._runner.factory import HookFactory, resolve_workspaces
    from .junit import write_junit
    from .replay import replay
    from .report import Progress, summary

    factory = HookFactory(
        settings, backend, home=args.home, hooks_dirs=args.hooks_dir, entry="check"
    )
    workspaces = resolve_workspaces({}, args.workspace, factory.dialect, settings, cwd=factory.cwd)
    if lines is None:
        lines = read(args, settings)
    audit = _recorded(args.diff) if args.diff else None
    if settings.review_pins and getattr(args, "require_reviewed", False):
        _pins_outside(settings.review_pins, workspaces)
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
        source = args.events or args.transcript
        write_junit(args.junit, results, settings.agent, source, workspaces)
    code = 0 if all(r.passed for r in results) else 1
    if getattr(args, "require_reviewed", False):
        unreviewed = sorted({o.spec.name + (" (removed)" if o.spec.review == "removed" else "")
                             for r in results for o in r.outcomes if o.spec.review}
                            | _removed(settings, workspaces, factory.home))  # fmt: skip
        if unreviewed:  # held, or run though renamed or chmodded: not what was approved
            sys.stdout.write(f"FAILED: {len(unreviewed)} repository hook(s) not as approved in"
                             f" {settings.review_pins}: {', '.join(unreviewed)}\n")  # fmt: skip
            code = 1
    if audit is not None:
        from .audit_diff import differences, report

        diffs, unmatched = differences(results, audit)
        sys.stdout.write(report(diffs, unmatched, len(results)))
        code = 1 if diffs else code
    if any(r.abandoned for r in results):  # stuck hook threads must not hold the job
        sys.stderr.flush()
        os._exit(code)
    return code


def _removed(settings: Settings, workspaces: list[str], home: str) -> set[str]:
    """The approved hooks the workspace no longer has (`_review.removed`), for any event:
    the gate fails on them though no recorded event would have run them."""
    from .._review.show import scan

    return {f"{s.pin.name} (removed)" for s in scan(settings, workspaces, home, [settings.agent])
            if s.status == "removed"}  # fmt: skip


def _pins_outside(pins: str, workspaces: list[str]) -> None:
    """The pins of `--require-reviewed` must not come with the workspace under test:
    the change they gate could rewrite them."""
    from pathlib import Path

    from .._errors import ConfigError

    real = os.path.realpath(pins)
    for root in workspaces:
        if Path(real).is_relative_to(os.path.realpath(root)):
            raise ConfigError(f"--pins {pins}: inside the workspace under test ({root}):"
                              " a change could rewrite them; keep them elsewhere")  # fmt: skip
