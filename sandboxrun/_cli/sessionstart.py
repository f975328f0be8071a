"""`sandboxrun doctor --session-start --agent A`: the session-start check `install`
adds to the user's own settings (`_install/session.py`). At the start of a session it
names, in the agent's message to the user (`systemMessage`: Claude Code, Codex, Gemini
CLI), the hooks `doctor` names for the session's folder (`status.notes`: a hook a pull
brought, which runs unsandboxed; an installed wrapper that cannot start), and nothing
else: never a decision, never added context, nothing at all when all is well.

It also starts the user's server (`sandboxrun serve`) without waiting for it, where the
hooks' own `run` and `exec` would start one on first use (`_client.warm_up`: `serve =
"auto"`, not in CI, none running): the session's first hook then finds it, instead of
answering cold and starting it only then.

It must never harm the session: any failure of its own (a config that does not parse,
an unreadable record, a bug) is exit 0 with nothing on stdout, and one line on stderr
only where the agent shows a hook's stderr harmlessly (not Gemini, which would read it
as the hook's message); a deadline (`DEADLINE`) ends it the same way.

Every name in the message comes from a repository (file names, commands): each note is
cut to printable ASCII by an allow-list (anything else, a newline, an ANSI escape, a
quote, becomes `?`) and to a length, and the JSON is written ASCII-only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import string
import sys
import threading

DEADLINE = 5  # seconds: a session start must not wait on us
SHOWN = 3  # notes quoted in full; the rest are counted
_SAFE = frozenset(string.ascii_letters + string.digits + " ._-/:,()[]'=+@~")
_STDERR_SHOWN_HARMLESSLY = frozenset({"claude", "codex"})


class _Late(Exception):
    pass


def clean(text: str, limit: int = 240) -> str:
    """`text` as printable ASCII of the allow-list (`_SAFE`), at most `limit` long."""
    out = "".join(c if c in _SAFE else "?" for c in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def message(agent: str, notes: list[str], folder: str) -> str:
    """What the user reads: how many, the first few notes, what to do."""
    lines = [
        f"sandboxrun: {len(notes)} hook problem(s) here: a hook that runs UNSANDBOXED"
        " (a pull may have brought it) or an installed hook that cannot start:"
    ]
    # Each note's own "run `sandboxrun install ...` again" is said once, below.
    lines += [f"- {clean(n.split(': run `sandboxrun install', 1)[0])}" for n in notes[:SHOWN]]
    if len(notes) > SHOWN:
        lines.append(f"- and {len(notes) - SHOWN} more (`sandboxrun doctor` names them all)")
    lines.append(
        f"Run `sandboxrun install --agent {agent} --workspace {clean(folder, 200)}` again"
        " to sandbox them (review them first)."
    )
    return "\n".join(lines)


def _folder(stdin: bytes) -> str:
    """The session's folder: the event's `cwd` when it is an absolute folder, else ours."""
    try:
        event = json.loads(stdin) if stdin.strip() else {}
    except (ValueError, RecursionError):
        event = {}
    cwd = event.get("cwd") if isinstance(event, dict) else None
    if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd):
        return cwd
    return os.getcwd()


def check(agent: str, stdin: bytes, home: str | None = None) -> str | None:
    """The message for this session, or None when nothing runs unsandboxed."""
    from .._install.status import notes
    from .._settings import account_home

    folder = _folder(stdin)
    found = notes(agent, [folder], os.path.abspath(home) if home else account_home())
    return message(agent, found, folder) if found else None


def _start_server(config: str | None) -> None:
    """The user's server for the session's hooks, started now, never waited for; a
    failure to start it costs the session nothing (its first hook starts one)."""
    from .._client import warm_up
    from .._log import logger

    try:
        warm_up(os.path.abspath(config) if config else None)
    except _Late:
        raise
    except Exception as exc:  # the check goes on: a server is an optimisation
        logger.debug("session start: no server started: {}", exc)


def command(args: argparse.Namespace) -> int:
    agent = args.agent or "claude"
    if agent not in _STDERR_SHOWN_HARMLESSLY:  # no line may reach the agent as an answer
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def late(signum: int, frame: object) -> None:
        raise _Late(f"took more than {DEADLINE} s")

    # (signals reach the main thread only; elsewhere, no deadline of ours)
    alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGALRM, late) if alarm else None
    try:
        if alarm:
            signal.alarm(DEADLINE)
        _start_server(args.config)
        stdin = sys.stdin.buffer.read(1 << 20) if not sys.stdin.isatty() else b""
        text = check(agent, stdin, args.home)
    except Exception as exc:  # never fail the session: say it (where harmless), go on
        why = clean(f"{type(exc).__name__}: {exc}", 300)
        sys.stderr.write(f"sandboxrun: session-start check not done: {why}\n")
        return 0
    finally:
        if alarm:  # whatever happened: no alarm left to go off later
            signal.alarm(0)
            signal.signal(signal.SIGALRM, before)
    if text:
        sys.stdout.write(json.dumps({"systemMessage": text}, ensure_ascii=True) + "\n")
        sys.stdout.flush()
    return 0
