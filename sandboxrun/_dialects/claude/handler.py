"""One handler of a Claude-family settings entry (`{"type": "command", ...}`), checked.

Current Claude Code (reference/claude-hooks.md, "beyond the classic semantics"):

- `type`: only `command` is run. `http`, `prompt`, `agent` and `mcp_tool` handlers are
  kept as not-run specs (`kind`), so `list` and `run` name them with the reason.
- `command` is a shell string (`/bin/sh -c`, or `bash -c` with `shell: "bash"`); with
  `args` (a list of strings) it is the program, run with those arguments as its argv,
  no shell: `$HOME` or spaces in an argument reach the hook literally.
  `shell: "powershell"` is not run (no PowerShell in the sandbox).
- `if`: a permission rule (`_claude_match.condition_matches`); checked here like a matcher.
- `async`: the agent does not wait for it and its answer decides nothing. `run` runs it
  to completion within its timeout (no process outlives `run`) and drops its answer.
- `once`: once per session. sandboxrun keeps no session state: such a hook runs every
  time (for a guard, the safe reading).
- `timeout` in seconds, more than 0 and at most `MAX_TIMEOUT`; read by the agent's own
  `Timeouts` rule where it counts otherwise (Augment: milliseconds; Qwen Code: seconds,
  but 1000 and more are milliseconds, and a value that is not a positive number is
  ignored: the default applies).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from ..._types import HookSpec
from .matchers import CONDITION_EVENTS, check_condition

# The handler a wrapper `install` recorded for this file runs ((command, args)), or None.
Installed = Callable[[dict[str, Any]], tuple[str, tuple[str, ...] | None] | None]
# What `Installed` answers for the session-start check install wrote in the user's file
# (`install`'s session module): no hook to run in the sandbox, sandboxrun's own check.
SESSION_CHECK: tuple[str, None] = ("", None)
CHECK_SKIPPED = (
    "sandboxrun's session-start check (install added it): it names unsandboxed hooks when"
    " a session starts; not a hook to run in the sandbox"
)

MAX_TIMEOUT = 3600  # seconds, as Settings.timeout


class Timeouts(NamedTuple):
    """How an agent reads a handler's `timeout` (a `ClaudeDialect`'s `timeouts`)."""

    unit: float = 1.0  # seconds per unit
    ms_from: float | None = None  # a value at least this is in milliseconds (legacy)
    lenient: bool = False  # a value that is not a positive number is ignored, not an error


SECONDS = Timeouts()
NOT_RUN = {
    "http": "an http hook (POSTs the event to a URL)",
    "prompt": "a prompt hook (asks a model)",
    "agent": "an agent hook (runs a subagent)",
    "mcp_tool": "an mcp_tool hook (calls an MCP server's tool)",
}


def not_run_reason(spec: HookSpec) -> str:
    """Why a not-run handler is not run, in one sentence."""
    if spec.kind == "powershell":
        return 'not run: shell "powershell" (there is no PowerShell in the sandbox)'
    what = NOT_RUN.get(spec.kind, f"a {spec.kind} hook")
    return f"not run: {what}; sandboxrun runs only command hooks, in the sandbox"


def handler(
    hook: Any, event: str, template: HookSpec, installed: Installed | None = None,
    timeouts: Timeouts = SECONDS,
) -> HookSpec | str:  # fmt: skip
    """The spec of one handler (a not-run one has `kind` != "command"), or why it is
    invalid. `installed`: install's record of the file (a wrapper runs its original)."""
    if not isinstance(hook, dict):
        return "must be an object"
    kind = hook.get("type")
    if kind is None:
        return f'has no type (one of "command", {", ".join(map(repr, NOT_RUN))})'
    if kind in NOT_RUN:
        label = hook.get("url") or hook.get("prompt") or hook.get("tool") or kind
        name = label if isinstance(label, str) and unicode_ok(label) else kind
        return replace(template, hook_name=event, name=f"{kind}: {name[:200]}", kind=kind)
    if kind != "command":
        return f"type {brief(kind)} is unknown"
    fields = _command(hook, installed)
    if isinstance(fields, str):
        return fields
    options = _options(hook, event, template.source, timeouts)
    if isinstance(options, str):
        return options
    return replace(template, hook_name=event, **fields, **options)


def _command(hook: dict[str, Any], installed: Installed | None) -> dict[str, Any] | str:
    """name, argv (and kind for powershell) from `command`, `args` and `shell`."""
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    args = hook.get("args")
    # A wrapper `install` recorded: run what it wraps, here (there is no sandboxrun in
    # the sandbox). Anything else, however shaped like a wrapper, runs as written.
    original = installed(hook) if installed is not None else None
    if original == SESSION_CHECK:
        return CHECK_SKIPPED
    if original is not None:
        command, args = original
    if args is not None:
        if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
            return "args must be a list of strings"
        if not all(unicode_ok(a) and "\0" not in a for a in args):
            return "args must be valid Unicode text (no lone surrogate, no NUL)"
        argv = (command, *args)
        return {"name": shlex.join(argv), "argv": argv}
    shell = hook.get("shell")
    if shell == "powershell":
        return {"name": command, "argv": (), "kind": "powershell"}
    if shell not in (None, "bash", "sh"):
        return f'shell must be "bash" or "powershell", not {brief(shell)}'
    return {"name": command, "argv": ("bash" if shell == "bash" else "/bin/sh", "-c", command)}


def _options(
    hook: dict[str, Any], event: str, source: str, timeouts: Timeouts = SECONDS
) -> dict[str, Any] | str:
    """timeout (in seconds, read by the agent's `timeouts` rule), condition, run_async
    and once, range- and type-checked."""
    out: dict[str, Any] = {}
    timeout = hook.get("timeout")
    number = not isinstance(timeout, bool) and isinstance(timeout, int | float)
    if timeout is not None and timeouts.lenient and not (number and timeout > 0):
        timeout = None  # the agent ignores it (its default applies); NaN fails `>`
    if timeout is not None:
        seconds = timeout_seconds(timeout, timeouts)
        if isinstance(seconds, str):
            return seconds
        out["timeout"] = seconds
    for key, field in (("async", "run_async"), ("once", "once")):
        value = hook.get(key)
        if value is not None and not isinstance(value, bool):
            return f"{key} must be true or false, not {brief(value)}"
        out[field] = value is True
    rule = hook.get("if")
    if rule is not None:
        if not isinstance(rule, str) or not unicode_ok(rule):
            return "if must be a string (a permission rule like Bash(git *))"
        if event not in CONDITION_EVENTS:
            return f"has an if on {event}: Claude Code runs such a hook only on tool events"
        keep, problem = check_condition(rule, source)
        if not keep:
            return f"if: {problem}"
        out["condition"] = rule
    return out


def timeout_seconds(timeout: Any, timeouts: Timeouts = SECONDS) -> float | str:
    """A `timeout` in seconds, read by the agent's `timeouts` rule, or why it is not one
    (the Claude family's and Cursor's)."""
    number = not isinstance(timeout, bool) and isinstance(timeout, int | float)
    ms = timeouts.ms_from is not None and number and timeout >= timeouts.ms_from
    unit = 0.001 if ms else timeouts.unit
    name = "seconds" if unit == 1.0 else "milliseconds" if unit == 0.001 else "units"
    top = round(MAX_TIMEOUT / unit)
    # Compared before any float(): a 400-digit integer must not overflow; NaN fails `<`.
    if not number:
        return f"timeout must be a number of {name}, not {brief(timeout)}"
    if not 0 < timeout <= top:
        why = f"timeout must be more than 0 and at most {top} {name}"
        return f"{why}, not {brief(timeout)}"
    return float(timeout) * unit


def unicode_ok(text: str) -> bool:
    """Whether `text` encodes to UTF-8 (no lone surrogate from a `\\ud800` escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def brief(value: Any) -> str:
    """A short repr for a reason: a file's value may be 400 digits long."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... (too long)"
