"""The command line. stdout is the protocol: only answers go there; logs go to stderr.

Exit codes: 0 when the hooks ran (whatever they decided), 1 when `doctor` finds a
problem, 2 for a usage, configuration or engine error (one line on stderr).
With `--fail-closed`, an engine that cannot run the hooks answers a cancel on
stdout instead, in the agent's own terms, so the agent blocks rather than goes on.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from .. import _log, _userconfig
from .._runner.reply import error_reply
from .._text import printable
from .common import write_reply
from .parser import parser as _parser

# One module per command, imported when it runs: `run` is called for every event an
# agent sees, and docker, pydantic and loguru are most of its start-up.
COMMANDS = {
    "run": "run", "exec": "execute", "list": "listing", "images": "images", "state": "state",
    "check": "check", "reap": "reap", "doctor": "doctor", "serve": "serve",
    "install": "install", "uninstall": "install", "audit": "audit",
    "review": "review",
}  # fmt: skip


def log_level(verbose: int) -> str:
    return {0: "WARNING", 1: "INFO"}.get(verbose, "DEBUG")


def _setup_logging(verbose: int) -> None:
    level = log_level(verbose)

    def setup(loguru: Any) -> None:
        loguru.remove()
        loguru.add(_log.to_stderr, level=level, format=_log_format)  # `exec` may hold it
        # Every log line carries names, paths and messages a hook or repository chose:
        # escaped here, in one place, after loguru has formatted the message.
        loguru.configure(patcher=_escape_message)
        loguru.enable("sandboxrun")

    _log.configure(setup, level)  # loguru itself is imported by the first line logged


def _escape_message(record: Any) -> None:
    record["message"] = printable(record["message"])


def _log_format(record: Any) -> str:
    return f"sandboxrun: {record['level'].name.lower()}: {{message}}\n{{exception}}"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args.verbose)
    if args.command != "serve":
        _userconfig.distrust_environment()
    try:
        name = COMMANDS[args.command]
        if getattr(args, "session_start", False):  # light: no engine, started per session
            name = "sessionstart"
        module = importlib.import_module(f"{__name__}.{name}")
        code: int = module.command(args)
        return code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # ours: one line, never a traceback on the agent
        return write_reply(error_reply(exc))
