"""`sandboxrun run --answer agent`: the combined answer in the agent's own hook protocol,
so that `run` can itself be the hook the agent calls (Cline shims, Claude Code's and
Codex's managed forwarding hooks, any agent's hook configured by hand).

Each agent's form is its dialect's (`Dialect.agent_answer`): Cline's JSON; the Claude
family's exit 2 or JSON (Codex's made valid for its stricter parser); Copilot's,
Cursor's and Gemini's JSON; Windsurf's and Kiro's exit codes; Goose's `decision`; Crush's
exit 2 and 49 or envelope. A deny stays a deny. An agent without an answer form is
refused: its `wrapper_failure` under fail-closed (a block in its terms) and one line
naming it on stderr; `install` never writes `--answer agent` for one (`answer_form`).
An error of ours (no engine, a bad config file) is the dialect's `wrapper_failure`:
non-blocking, or a block under fail-closed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from .._dialects.base import Dialect
from .._dialects.registry import DIALECTS
from .._errors import ConfigError, SandboxrunError
from .._log import logger
from .._settings import env_fail_closed
from .._text import printable
from .._types import CombinedResult


@dataclass(frozen=True, slots=True)
class AgentAnswer:
    stdout: bytes
    stderr: bytes
    exit_code: int


def agent_answer(dialect: Dialect, event: str, result: CombinedResult) -> AgentAnswer:
    """What the agent reads from `run` as if it were one of its hooks."""
    notes = [
        printable(f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}")
        for o in result.outcomes
        if o.status != "completed" and o.error
    ]
    # What the sandbox stopped a hook that answered anyway (its `error` says it otherwise):
    # a hint beside the answer, never a change to it.
    notes += [
        printable(f"sandboxrun: hook {o.spec.name}: sandbox stopped: {o.sandbox_stopped}")
        for o in result.outcomes
        if o.status == "completed" and o.sandbox_stopped
    ]
    reply = dialect.agent_answer(event, dict(result.answer), notes)
    if reply is None:
        return refusal(dialect)
    return AgentAnswer(*reply)


def refusal(dialect: Dialect) -> AgentAnswer:
    """`--answer agent` for an agent without an answer form: a block in its terms."""
    why = f"run --answer agent: no answer form for agent {dialect.agent}; use run or exec"
    stdout, stderr, code = dialect.wrapper_failure(why, True)
    if why.encode() not in stderr:  # the block is on stdout (Cline): the line beside it
        stderr += f"sandboxrun: {why}\n".encode()
    return AgentAnswer(stdout, stderr, code)


def answer_form(agent: str) -> None:
    """Nothing when `run --answer agent` answers `agent` in its own protocol; a
    `ConfigError` naming it otherwise (`install` writes no such hook for it)."""
    dialect = DIALECTS[agent]
    if dialect.agent_answer(dialect.hook_names[0], dialect.blocked_answer("probe"), []) is None:
        raise ConfigError(f"{agent}: run --answer agent has no answer form for this agent")


def error_answer(dialect: Dialect, fail_closed: bool, why: str) -> AgentAnswer:
    """An error of ours, before any hook ran (see the module docstring)."""
    return AgentAnswer(*dialect.wrapper_failure(why, fail_closed))


def run_as_hook(
    args: argparse.Namespace, produce: Callable[[argparse.Namespace], CombinedResult]
) -> int:
    """`run --answer agent`: `produce` (the `run` command's work) answered in the agent's
    own protocol on stdout, stderr and the exit code."""
    dialect = DIALECTS[args.agent or "cline"]
    fail_closed = bool(args.fail_closed or env_fail_closed())
    abandoned = False
    try:
        result = produce(args)
        abandoned = result.abandoned
        out = agent_answer(dialect, args.hook, result)
    except SandboxrunError as exc:
        out = error_answer(dialect, fail_closed, _one_line(exc))
    except Exception as exc:  # a bug of ours: one line, never a traceback on the agent
        logger.opt(exception=exc).debug("internal error")
        out = error_answer(
            dialect, fail_closed, f"internal error: {type(exc).__name__}: {_one_line(exc)}"
        )
    sys.stdout.buffer.write(out.stdout)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(out.stderr)
    sys.stderr.buffer.flush()
    if abandoned:  # stuck threads must not keep the agent waiting on us
        os._exit(out.exit_code)
    return out.exit_code


def _one_line(exc: BaseException) -> str:
    return printable(" ".join(str(exc).split()))[:500]
