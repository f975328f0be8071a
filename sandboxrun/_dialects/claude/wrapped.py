"""Hook commands that `sandboxrun install` wrapped in `sandboxrun exec`, recognised.

`install` turns `"command": "./hooks/guard.sh"` into
`"command": "'/…/bin/sandboxrun' exec --agent claude -- ./hooks/guard.sh"` (and an
`args` handler into `"command": "/…/sandboxrun", "args": ["exec", …, "--", argv…]`).
Reading it back serves three readers: `uninstall` (what was the original?), `list`
and `doctor` (which hooks run unsandboxed?), and `run` (which must run the original
in its own sandbox: there is no sandboxrun inside the container).

Only the options `install` writes count as a wrapper. A command a repository wrote as
`sandboxrun exec --network bridge -- …` is not "wrapped": it chose its own sandbox,
so `list` flags it, and `run` runs it as written (it then fails in the sandbox); so
does `list` a wrapper whose sandboxrun or `--config` file lies in the workspace.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

EXECUTABLE = "sandboxrun"
# Options `install` may put before `--`, and whether each takes a value.
_OPTIONS = {"--agent": True, "--timeout": True, "--fail-closed": False, "--config": True}


@dataclass(frozen=True, slots=True)
class Original:
    """The handler a wrapper runs: `command` (a shell string, or the program when
    `args` is not None) and `args`."""

    command: str
    args: tuple[str, ...] | None


def missing_guard(executable: str) -> str:
    """The prefix of a fail-closed wrapper: if sandboxrun is gone (moved, uninstalled),
    the hook blocks (exit 2, the reason on stderr) instead of failing with 127, which
    the agent would read as a non-blocking error: a guard that stopped guarding."""
    why = shlex.quote(f"sandboxrun (fail-closed): {executable} is missing")
    return f"[ -x {shlex.quote(executable)} ] || {{ echo {why} >&2; exit 2; }}; "


def unguarded(command: str) -> str:
    """`command` without the `missing_guard` of its own sandboxrun (exactly that one)."""
    _, sep, rest = command.partition("; exit 2; }; ")
    try:
        first = shlex.split(rest)[0] if sep else ""
    except (ValueError, IndexError):
        return command
    return rest if sep and command == missing_guard(first) + rest else command


def unwrap(command: str, args: Sequence[str] | None, shell: object = None) -> Original | None:
    """The original of an install wrapper, or None if `command`/`args` is not one."""
    if args is not None:
        words = [command, *args]
    else:
        try:
            words = shlex.split(unguarded(command))
        except ValueError:
            return None
    rest = _after_options(words)
    if rest is None or not rest:
        return None
    if args is not None:
        if len(rest) == 1:  # a lone program, quoted so exec does not read it as a shell string
            try:
                program = shlex.split(rest[0])
            except ValueError:
                return None
            return Original(program[0], ()) if len(program) == 1 else None
        return Original(rest[0], tuple(rest[1:]))
    if len(rest) == 1:
        return Original(rest[0], None)
    if shell == "bash" and len(rest) == 3 and rest[:2] == ["bash", "-c"]:
        return Original(rest[2], None)
    return None


def chosen_files(command: str, args: Sequence[str] | None) -> list[str]:
    """The files a wrapper makes the agent trust: the sandboxrun it starts and the config
    file it names (`list` checks that neither comes with the workspace)."""
    try:
        words = [command, *args] if args is not None else shlex.split(unguarded(command))
    except ValueError:
        return []
    head = words[: words.index("--")] if "--" in words else words
    return [head[0], *(head[i + 1] for i in range(len(head) - 1) if head[i] == "--config")]


def _after_options(words: Sequence[str]) -> list[str] | None:
    """The words after `--` of `<…/sandboxrun> exec [install's options] -- …`, or None."""
    if len(words) < 3 or os.path.basename(words[0]) != EXECUTABLE or words[1] != "exec":
        return None
    i = 2
    while i < len(words) and words[i] != "--":
        takes_value = _OPTIONS.get(words[i])
        if takes_value is None:
            return None
        i += 2 if takes_value else 1
    return list(words[i + 1 :]) if i < len(words) else None


def wrap(
    executable: str, agent: str, command: str, args: Sequence[str] | None, shell: object,
    options: Sequence[str] = (),
) -> tuple[str, list[str] | None]:  # fmt: skip
    """(command, args) of the wrapper that runs this handler through `sandboxrun exec`
    in its whole-command form: the shell string is ONE argument, so pipes, redirections
    and `${CLAUDE_PLUGIN_ROOT}` are the sandbox's shell's, not the agent's."""
    head = ["exec", "--agent", agent, *options, "--"]
    if args is not None:
        argv = [command, *args]
        tail = [shlex.quote(command)] if not args else argv
        return executable, [*head, *tail]
    tail = ["bash", "-c", command] if shell == "bash" else [command]
    guard = missing_guard(executable) if "--fail-closed" in options else ""
    return guard + shlex.join([executable, *head, *tail]), None
