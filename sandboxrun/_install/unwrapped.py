"""The sentences `list` and `doctor` say of an installed agent's files (`status.py`), which
each agent's install module (`notes`) builds on: a handler of an installed file that no
wrapper install recorded (`unwrapped_note`), a recorded wrapper that starts a workspace's
sandboxrun or one that is gone (`wrapper_notes`), every handler of Claude-shaped files at
once (`file_notes`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._dialects.claude.wrapped import chosen_files
from .._errors import ConfigError
from .._wrapped import check_in, is_check
from . import claude as _claude
from . import legacy
from .files import BackupStore, read_bytes
from .launcher import started
from .record import Record, names_sandboxrun
from .shape import Shape

# An old-shaped wrapper or shim: most likely an earlier sandboxrun's, which kept no
# record, but a repository can write the same shape, so it is not trusted.
EARLIER = (
    "written by an earlier sandboxrun? it is in no record of install's, so it is not"
    " trusted and may run on the host as written"
)


def file_notes(
    agent: str, scoped: Sequence[tuple[str, str, Shape, str]], project: str, home: str
) -> list[str]:
    """The notes for config files whose handlers `install` wraps in place: `scoped`,
    (path, scope "user" | "managed" | "project", its shape, the agent whose install
    writes it: Devin reads Claude Code's files, installed with --agent claude)."""
    store, record = BackupStore(home), Record(home)
    files = []  # (path, scope, command handlers, the recorded wrappers' originals, ...)
    for path, scope, shape, owner in scoped:
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw, shape)[1] if raw is not None else {}
            entries = record.entries(path)
        except ConfigError:
            continue  # `list` names the unparsable file already
        # Trusted only as install wrote it: a project's wrapper carries --untrusted.
        untrusted = scope == "project"
        ours = functools.partial(record.original, path, untrusted=untrusted, entries=entries)
        check = check_in(home, path) if scope == "user" else None  # `session.py`
        handlers = [w for w in _claude.command_handlers(data, shape) if not is_check(check, w[1])]
        files.append((path, scope, handlers, ours, bool(entries), owner))
    # A scope was installed if one of its files was: a pull may bring a new local file.
    installed = {
        scope for path, scope, _, _, recorded, _ in files
        if store.get(path) is not None or recorded
    }  # fmt: skip
    out = []
    for path, scope, handlers, ours, _, owner in files:
        again = {"user": "--user", "managed": "--managed"}.get(scope, f"--workspace {project}")
        for where, hook in handlers:
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            alike = names_sandboxrun(hook)
            if scope not in installed and not alike:
                continue  # never installed: only a look-alike wrapper is worth a word
            if ours(hook):
                out += wrapper_notes(f"{path} {at}", hook, project, owner, again)
            elif hook.get("shell") != "powershell":
                whose = (
                    f"; {agent} reads Claude Code's settings: they are installed with"
                    " --agent claude" if owner != agent else ""
                )  # fmt: skip
                out.append(unwrapped_note(f"{path} {at}", hook, owner, again, whose))
    return out


def unwrapped_note(
    where: str, hook: dict[str, Any], agent: str, again: str, whose: str = ""
) -> str:
    """A handler of an installed file that is no wrapper install recorded: it runs on
    the host (a pull or an edit brought it, or it only looks like a wrapper)."""
    why = (
        EARLIER if legacy.old_wrapper(hook) else
        "install did not write it: a command shaped like a wrapper runs on the host as"
        " written" if names_sandboxrun(hook) else "new since install?"
    )  # fmt: skip
    return (
        f"not wrapped: {where}: {hook['command'][:120]!r} runs unsandboxed ({why}{whose}): run"
        f" `sandboxrun install --agent {agent} {again}` again"
    )


def wrapper_notes(
    where: str, hook: dict[str, Any], project: str, agent: str, again: str,
    chosen: list[str] | None = None,
) -> list[str]:  # fmt: skip
    """What is wrong with a recorded wrapper, if anything: it starts a sandboxrun (or
    config) the workspace brings, or one that is gone (`chosen`: the files it starts,
    when the agent's form is not `chosen_files`' own)."""
    if chosen is None:
        chosen = chosen_files(hook["command"], hook.get("args"))
    chosen = started(chosen)  # the launcher file: what it starts
    inside = [f for f in chosen if in_workspace(f, project)]
    if inside:
        return [
            f"not trusted: {where} runs {inside[0]!r} from the workspace or"
            " PATH: a repository's own sandboxrun or config can loosen the sandbox"
        ]
    if not runnable(chosen):
        return [missing(where, (chosen[:2] or ["?"])[-1], agent, again)]
    return []


def runnable(launcher: Sequence[str]) -> bool:
    """Whether a launcher (`PYTHON SCRIPT`, as `chosen_files` lists it) can start."""
    return len(launcher) > 1 and os.access(launcher[0], os.X_OK) and os.path.isfile(launcher[1])


def missing(where: str, executable: str, agent: str, again: str) -> str:
    """A wrapper or shim whose sandboxrun is gone (moved, uninstalled): the agent gets
    exit 127, a failed hook that does not block, so a guard stops guarding."""
    return (
        f"broken: {where} runs {executable!r}, which is missing: the hook fails and blocks"
        f" nothing; run `sandboxrun install --agent {agent} {again}` again"
    )


def in_workspace(path: str, root: str) -> bool:
    """Whether `path` (relative: to the workspace, where the agent runs hooks; a bare
    name: from a PATH a repository's `env` block can set) may come with the workspace."""
    if os.sep not in path:
        return True
    return Path(os.path.realpath(os.path.join(root, path))).is_relative_to(os.path.realpath(root))


def read_bytes_quiet(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except ConfigError:
        return None
