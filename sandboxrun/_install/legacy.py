"""What an earlier sandboxrun's `install` wrote, before install kept a record: read only
to migrate it (`install`), to give the originals back (`uninstall`) and to name it
(`list`, `doctor`); never to trust it.

The earlier install wrote `'/…/sandboxrun' exec --agent A [--fail-closed] [--config F]
[--timeout S] -- ORIGINAL` (a fail-closed one behind `[ -x '/…/sandboxrun' ] || {…};`;
an `args` handler: `"command": "/…/sandboxrun", "args": ["exec", …, "--", argv…]`; a
`bash` one: `… -- bash -c ORIGINAL`), and Cline shims of five lines running
`'/…/sandboxrun' run HOOK …`. Nothing proves a repository did not write the same
shape, so a shape is never trusted as it stands: `install` takes the ONE original out
and writes a new recorded wrapper around it, which quotes it whole, so whatever the
old-shaped string held (`"$(…)"`, options such as `--config`) runs in the sandbox or
nowhere. The rules are the earlier version's (`git show 35cbcc0:sandboxrun/_dialects/
claude/wrapped.py`), kept as they were.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._dialects.installed import SHIM_MARK, SHIM_MAX_BYTES

EXECUTABLE = "sandboxrun"
# Options the earlier install put before `--`, and whether each takes a value.
_OPTIONS = {"--agent": True, "--timeout": True, "--fail-closed": False, "--config": True}
_SHIM_OPTIONS = {"--agent": True, "--answer": True, "--hooks-dir": True, "--home": True,
                 "--config": True, "--fail-closed": False}  # fmt: skip


@dataclass(frozen=True, slots=True)
class OldWrapper:
    """An old-shaped wrapper, read: the handler it runs, and whether the handler is
    byte for byte what the earlier install wrote around it (not a hand-written
    `sandboxrun exec`, which uninstall gives back as it was)."""

    command: str
    args: tuple[str, ...] | None
    by_install: bool


def _missing_guard(executable: str) -> str:
    why = shlex.quote(f"sandboxrun (fail-closed): {executable} is missing")
    return f"[ -x {shlex.quote(executable)} ] || {{ echo {why} >&2; exit 2; }}; "


def _unguarded(command: str) -> str:
    _, sep, rest = command.partition("; exit 2; }; ")
    try:
        first = shlex.split(rest)[0] if sep else ""
    except (ValueError, IndexError):
        return command
    return rest if sep and command == _missing_guard(first) + rest else command


def _after_options(words: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(options, words after `--`) of `<…/sandboxrun> exec [old options] -- …`."""
    if len(words) < 3 or os.path.basename(words[0]) != EXECUTABLE or words[1] != "exec":
        return None
    i = 2
    while i < len(words) and words[i] != "--":
        takes_value = _OPTIONS.get(words[i])
        if takes_value is None or (takes_value and i + 1 >= len(words)):
            return None
        i += 2 if takes_value else 1
    return (list(words[2:i]), list(words[i + 1 :])) if i < len(words) else None


def old_wrapper(hook: dict[str, Any]) -> OldWrapper | None:
    """The handler an old-shaped wrapper runs, or None if `hook` is not one."""
    command, args, shell = hook.get("command"), hook.get("args"), hook.get("shell")
    if not isinstance(command, str):
        return None
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        return None
    try:
        words = [command, *args] if args is not None else shlex.split(_unguarded(command))
    except ValueError:
        return None
    found = _after_options(words)
    if found is None or not found[1]:
        return None
    options, rest = found
    original: tuple[str, tuple[str, ...] | None]
    if args is not None:
        if len(rest) == 1:  # a lone program, quoted so exec does not read it as a shell string
            try:
                program = shlex.split(rest[0])
            except ValueError:
                return None
            if len(program) != 1:
                return None
            original = program[0], ()
        else:
            original = rest[0], tuple(rest[1:])
    elif len(rest) == 1:
        original = rest[0], None
    elif shell == "bash" and len(rest) == 3 and rest[:2] == ["bash", "-c"]:
        original = rest[2], None
    else:
        return None
    return OldWrapper(original[0], original[1], _written_by_install(words, options, original, hook))


def _written_by_install(
    words: Sequence[str], options: Sequence[str], original: tuple[str, tuple[str, ...] | None],
    hook: dict[str, Any],
) -> bool:  # fmt: skip
    """Whether `hook` is exactly what the earlier install wrote around `original` (its
    absolute sandboxrun, `--agent` first, shlex's quoting, its own guard)."""
    if not os.path.isabs(words[0]) or options[:1] != ["--agent"]:
        return False
    command, args = original
    head = [words[0], "exec", *options, "--"]
    if args is not None:
        tail = [shlex.quote(command)] if not args else [command, *args]
        return hook.get("args") == [*head[1:], *tail] and hook.get("command") == words[0]
    tail = ["bash", "-c", command] if hook.get("shell") == "bash" else [command]
    guard = _missing_guard(words[0]) if "--fail-closed" in options else ""
    return hook.get("command") == guard + shlex.join([*head, *tail])


@dataclass(frozen=True, slots=True)
class OldShim:
    """An old-shaped Cline shim: the hook name it runs."""

    hook_name: str


def old_shim(path: str) -> OldShim | None:
    """The earlier install's shim at `path` by its shape (five lines, six fail-closed),
    or None."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as f:
            raw = f.read(SHIM_MAX_BYTES + 1)
    except OSError:
        return None
    lines = raw.decode("utf-8", "replace").split("\n")
    if len(lines) == 6:  # a fail-closed shim's guard line: any text (never run by us)
        lines.pop(3)
    if len(raw) > SHIM_MAX_BYTES or len(lines) != 5 or lines[0] != "#!/bin/sh":
        return None
    if not lines[1].startswith(SHIM_MARK) or not lines[2].startswith("# ") or lines[4]:
        return None
    if not lines[3].startswith("exec "):
        return None
    try:
        words = shlex.split(lines[3][5:])
    except ValueError:
        return None
    if len(words) < 3 or os.path.basename(words[0]) != EXECUTABLE or words[1] != "run":
        return None
    i = 3
    while i < len(words):
        takes = _SHIM_OPTIONS.get(words[i])
        if takes is None or (takes and i + 1 >= len(words)):
            return None
        i += 2 if takes else 1
    return OldShim(words[2])
