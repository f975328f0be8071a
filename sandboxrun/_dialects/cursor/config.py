"""Where Cursor's hooks are configured: the `hooks.json` of each level, read and
checked, every malformed entry a `Skipped` naming the file and the JSON path (the
levels, working directories and mounts: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ..._types import Discovery, HookSpec, Skipped
from ..base import unique_mounts
from ..claude.handler import Installed, brief, timeout_seconds, unicode_ok
from ..claude.settings import recorded
from ..files import Note, read_each, unreadable  # the checked read of each config file
from .answer import DEFAULT_LOOP_LIMIT, FOLLOWUP_EVENTS

EntryReader = Callable[[Any, str, HookSpec, "Installed | None"], "HookSpec | str"]


class CursorLike(Protocol):
    """What reading the files needs of the dialect (`dialect.CursorDialect`)."""

    @property
    def user_dir(self) -> str: ...
    @property
    def project_dir(self) -> str: ...
    @property
    def enterprise_dir(self) -> str: ...
    @property
    def project_dir_var(self) -> str: ...
    @property
    def hook_names(self) -> tuple[str, ...]: ...


def config_files(
    dialect: CursorLike, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, str, str | None]]:
    """(hooks.json, source, working directory, folder to mount) in listing order."""
    if explicit:
        out: list[tuple[str, str, str, str | None]] = []
        for given in map(os.path.normpath, explicit):
            path = os.path.join(given, "hooks.json") if os.path.isdir(given) else given
            folder = os.path.dirname(path)
            inside = workspaces and any(_under(path, r) for r in workspaces)
            out.append((path, "project" if inside else "explicit", folder, folder))
        return out
    user = os.path.join(home, dialect.user_dir)
    project = workspaces[0]
    return [
        (os.path.join(dialect.enterprise_dir, "hooks.json"), "enterprise", dialect.enterprise_dir,
         os.path.join(dialect.enterprise_dir, "hooks")),
        (os.path.join(user, "hooks.json"), "user", user, os.path.join(user, "hooks")),
        (os.path.join(project, dialect.project_dir, "hooks.json"), "project", project, None),
    ]  # fmt: skip


def discover(
    dialect: CursorLike,
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    roots = list(workspaces) or [home]
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    listed = config_files(dialect, roots, home, explicit)
    for (path, source, workdir, folder), shown, data in read_each(listed, skipped):
        version = data.get("version")
        if version != 1:
            # Cursor documents only version 1 (unconfirmed what it does with others):
            # the hooks are still read, and the file is named.
            why = f"version is {brief(version)}, not 1: read as version 1"
            skipped.append(Skipped(shown, source, why))
        extra = [folder] if folder and os.path.isdir(folder) else []
        template = HookSpec(
            hook_name="", name="", source=source, argv=(), workdir=workdir,
            mounts=unique_mounts([*roots, *extra]),
            env={dialect.project_dir_var: roots[0], "CLAUDE_PROJECT_DIR": roots[0]},
        )  # fmt: skip
        installed = recorded(home, path, "project" if source == "project" else "user")
        for item in _entries(dialect.hook_names, data, hook_name, template, installed):
            if isinstance(item, str):
                skipped.append(unreadable(shown, source, item))
            elif item.kind != "command":
                reason = "not run: a prompt hook (asks a model); sandboxrun runs only commands"
                skipped.append(Skipped(shown, source, reason, item))
            else:
                hooks.append(item)
    return Discovery(tuple(hooks), tuple(skipped))


def _entries(
    names: Sequence[str], data: Mapping[str, Any], wanted: str | None, template: HookSpec,
    installed: Installed | None = None, read: EntryReader | None = None, agent: str = "Cursor",
) -> list[HookSpec | str]:  # fmt: skip
    """Each entry of `hooks: {event: [entry...]}` read by `read` (Cursor's `_entry`;
    Windsurf's shares the walk), or why it is not used, named by its JSON path."""
    read = read or _entry
    table = data.get("hooks")
    if table is None:
        return []
    if not isinstance(table, dict):
        return ["hooks: must be an object mapping event names to lists"]
    out: list[HookSpec | str] = []
    for event, entries in table.items():
        where = f"hooks.{event}" if str(event).isidentifier() else f"hooks[{event!r}]"
        if event not in names:
            near = next((n for n in names if _folded(n) == _folded(event)), None)
            hint = f" (did you mean {near}?)" if near else ""
            out.append(Note(f"{where}: unknown event name{hint}: {agent} ignores it"))
            continue
        if wanted is not None and event != wanted:
            continue
        if not isinstance(entries, list):
            out.append(f"{where}: must be a list of hook entries")
            continue
        for i, entry in enumerate(entries):
            spec = read(entry, event, template, installed)
            out.append(f"{where}[{i}]: {spec}" if isinstance(spec, str) else spec)
    return out


def _folded(name: str) -> str:
    """An event name without case, `_` or `-` (`before_shell_execution`, `PreRunCommand`)."""
    return name.lower().replace("_", "").replace("-", "")


def _under(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _entry(
    entry: Any, event: str, template: HookSpec, installed: Installed | None = None
) -> HookSpec | str:
    """One `{command, matcher?, timeout?, failClosed?, loop_limit?, type?}` entry. A
    wrapper `install` recorded (`installed`) runs what it wraps: there is no sandboxrun
    in the sandbox; anything else, however shaped like a wrapper, runs as written."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    kind = entry.get("type", "command")
    if kind == "prompt":
        prompt = entry.get("prompt")
        label = prompt[:200] if isinstance(prompt, str) and unicode_ok(prompt) else "prompt"
        return replace(template, hook_name=event, name=f"prompt: {label}", kind="prompt")
    if kind != "command":
        return f'type must be "command" or "prompt", not {brief(kind)}'
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    original = installed(entry) if installed is not None else None
    if original is not None and original[1] is None:
        command = original[0]
    spec = replace(template, hook_name=event, name=command, argv=("/bin/sh", "-c", command))
    matcher = entry.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str) or not unicode_ok(matcher):
            return "matcher must be a string (a regular expression)"
        # judged where it is used (`patterns.search`): a workspace one that cannot be
        # evaluated is its hook's error, a user's broken one runs: never dropped here
        spec = replace(spec, matcher=matcher)
    if entry.get("timeout") is not None:  # seconds, as Cursor counts them
        seconds = timeout_seconds(entry["timeout"])
        if isinstance(seconds, str):
            return seconds
        spec = replace(spec, timeout=seconds)
    closed = entry.get("failClosed")
    if closed is not None and not isinstance(closed, bool):
        return f"failClosed must be true or false, not {brief(closed)}"
    spec = replace(spec, fail_closed=closed is True)
    if event in FOLLOWUP_EVENTS:
        limit = entry.get("loop_limit", DEFAULT_LOOP_LIMIT)  # null: no limit
        whole = isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
        if limit is not None and not whole:
            return f"loop_limit must be a whole number or null, not {brief(limit)}"
        spec = replace(spec, loop_limit=limit)
    return spec
