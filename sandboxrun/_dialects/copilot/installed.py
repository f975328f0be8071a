"""A Copilot entry as `install` rewrites it and as discovery reads a wrapper back.

Source: github/docs `content/copilot/reference/hooks-reference.md` (commit 05da5bc3,
"Command hooks"): an entry runs `bash` on Linux and macOS, else its cross-platform
`command` (copied to `bash` when `bash` is absent), or `exec` with `args` without a
shell (never combined with the others); `powershell` is the Windows command; the
timeout is `timeoutSec`, else its alias `timeout`, default 30 seconds.

`view` gives the one field the CLI runs here as the handler's `command` (and `args`
for an `exec` entry), the field's name in `field`, and the timeout in seconds. Its
`shell` is always None and its `args` None for a shell entry, whatever the entry
holds: Copilot ignores keys it does not know, so a repository's stray `"shell":
"powershell"` or `"args"` beside `bash` must neither hide the entry from `install` nor
change how it is wrapped. A `powershell` field, and a `command` beside a `bash`, are
the Windows command: left as they are (no PowerShell in the sandbox).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import ConfigError
from ..._wrapped import Record
from ..claude.handler import MAX_TIMEOUT

DEFAULT_TIMEOUT = 30.0  # seconds ("timeoutSec ... Default: 30")
Installed = Callable[[dict[str, Any]], tuple[str, tuple[str, ...] | None] | None]


def view(hook: Any) -> dict[str, Any] | None:
    """The handler view of a command entry (see the module), or None for an entry the
    CLI does not run here as a command (http, prompt, powershell-only, malformed)."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    args: list[str] | None = None
    if "exec" in hook:
        program, given = hook["exec"], hook.get("args")
        if any(k in hook for k in ("bash", "command", "powershell")):
            return None  # the CLI rejects the entry: nothing to wrap
        if not isinstance(given, list) or not all(isinstance(a, str) for a in given):
            return None  # without an `args` list there is no field to hold the wrapper's
        field, command, args = "exec", program, given
    else:
        field = next((k for k in ("bash", "command") if k in hook), "")
        command = hook.get(field)
    if not isinstance(command, str) or not command.strip():
        return None
    timeout = hook.get("timeoutSec", hook.get("timeout"))
    seconds = DEFAULT_TIMEOUT  # what the CLI gives an entry without a (valid) one
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        seconds = float(timeout) if 0 < timeout <= MAX_TIMEOUT else seconds
    return {**hook, "command": command, "args": args, "shell": None, "field": field,
            "timeout": seconds}  # fmt: skip


def exec_without_args(hook: Any) -> bool:
    """An `exec` entry `install` cannot wrap: it has no `args` list to hold the wrapper's
    arguments (and `install` changes values, never adds keys)."""
    return (
        isinstance(hook, dict) and hook.get("type", "command") == "command" and "exec" in hook
        and not any(k in hook for k in ("bash", "command", "powershell"))
        and not isinstance(hook.get("args"), list)
    )  # fmt: skip


def installed(home: str, path: str, untrusted: bool) -> Installed:
    """The lookup of the wrappers `install` recorded for one file: a recorded wrapper's
    (command, args) original, or None (anything else, however shaped, runs as written).
    `untrusted` (a repository's file): the wrapper must carry `--untrusted` too."""
    record = Record(home)
    try:
        entries = record.entries(path)
    except ConfigError:
        entries = {}  # unreadable: nothing counts as installed, so nothing is unwrapped

    def lookup(hook: dict[str, Any]) -> tuple[str, tuple[str, ...] | None] | None:
        seen = view(hook) if entries else None
        return record.original(path, seen, untrusted, entries) if seen else None

    return lookup
