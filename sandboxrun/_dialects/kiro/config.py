"""Where Kiro's hooks are configured: the `hooks` field of each agent file, read and
checked as the CLI's serde types read it, and the standalone hook files of Kiro CLI v3
and the Kiro IDE (`files.py`) (the rules and sources: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._types import Discovery, HookSpec, Skipped
from ..base import escape_name, unique_mounts
from ..claude.handler import Installed, brief, unicode_ok
from ..claude.settings import recorded
from ..files import read_each, unreadable  # the checked read of each config file
from .files import discover_files
from .hook import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
from .hook import KiroHook as KiroHook

HOOK_NAMES = ("agentSpawn", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
DEFAULT_TIMEOUT_MS = 30_000  # `cli/agent/hook.rs` DEFAULT_TIMEOUT_MS
_U64 = (1 << 64) - 1
MAX_AGENT_FILES = 200  # per folder: a repository's thousand files are named, not read


def agent_files(folder: str) -> tuple[list[str], str | None]:
    """The `*.json` files of an agents folder, sorted, and a note when there are more
    than `MAX_AGENT_FILES` (the rest are not read)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return [], None
    note = None
    if len(names) > MAX_AGENT_FILES:
        note = f"{len(names)} agent files: only the first {MAX_AGENT_FILES} are read"
        names = names[:MAX_AGENT_FILES]
    return [os.path.join(folder, n) for n in names], note


def config_files(
    user_dir: str, project_dir: str, workspaces: Sequence[str], home: str,
    explicit: Sequence[str] = (),
) -> list[tuple[str, str]]:  # fmt: skip
    """(agent file, source) in listing order: the user's first, then the project's (so a
    repository's many hooks can only push its own past `max_hooks`)."""
    if explicit:
        out = []
        for given in map(os.path.normpath, explicit):
            inside = any(_under(given, r) for r in workspaces)
            paths = agent_files(given)[0] if os.path.isdir(given) else [given]
            out += [(p, "project" if inside else "explicit") for p in paths]
        return out
    user = agent_files(os.path.join(home, user_dir))[0]
    project = agent_files(os.path.join(workspaces[0], project_dir))[0] if workspaces else []
    return [*((p, "user") for p in user), *((p, "project") for p in project)]


def discover(
    user_dir: str, project_dir: str, hook_name: str | None, workspaces: Sequence[str],
    home: str, explicit: Sequence[str] = (),
) -> Discovery:  # fmt: skip
    roots = list(workspaces) or [home]
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    for folder, source in ((os.path.join(home, user_dir), "user"),
                           (os.path.join(roots[0], project_dir), "project")):  # fmt: skip
        note = agent_files(folder)[1]
        if note and not explicit:
            skipped.append(Skipped(escape_name(folder), source, note))
    user_hooks = os.path.join(home, os.path.dirname(user_dir), "hooks")
    listed = config_files(user_dir, project_dir, roots, home, explicit)
    for (path, source), shown, data in read_each(listed, skipped):
        extra = [user_hooks] if source == "user" and os.path.isdir(user_hooks) else []
        # Kiro runs every hook in its own working directory, the project (`hooks.rs`
        # `run_hook` sets no cwd): a user's hook too.
        template = KiroHook(
            hook_name="", name="", source=source, argv=(), workdir=roots[0],
            mounts=unique_mounts([*roots, *extra]),
        )  # fmt: skip
        installed = recorded(home, path, "project" if source == "project" else "user")
        found = _entries(data, hook_name, template, installed)
        if isinstance(found, str):  # Kiro refuses the whole agent: none of its hooks run
            skipped.append(unreadable(shown, source, f"{found}: Kiro does not load this agent"))
            continue
        for spec in found:
            if spec.cache_ttl and spec.hook_name != "agentSpawn":
                why = (f"cache_ttl_seconds {spec.cache_ttl}: Kiro reuses a success that long;"
                       " sandboxrun keeps no cache and runs it every time")  # fmt: skip
                skipped.append(Skipped(shown, source, why))
        hooks += found
    template = KiroHook(hook_name="", name="", source="", argv=(), workdir=roots[0],
                        mounts=unique_mounts(roots))  # fmt: skip
    more, not_run = discover_files(template, hook_name, roots[0], home)
    # A user's hook files run with `~/.kiro/hooks` mounted (their scripts live there).
    user_mounts = unique_mounts([*roots, user_hooks]) if os.path.isdir(user_hooks) else None
    hooks += [replace(h, mounts=user_mounts) if user_mounts and h.source == "user" else h
              for h in more]  # fmt: skip
    return Discovery(tuple(hooks), tuple(skipped + not_run))


def _entries(
    data: Mapping[str, Any], wanted: str | None, template: KiroHook,
    installed: Installed | None = None,
) -> list[KiroHook] | str:  # fmt: skip
    """Every hook of one agent file, or the first reason Kiro refuses the file: its
    `hooks` is a map from a closed enum of events to lists of `Hook`s (`agent/mod.rs`,
    `agent/hook.rs`), so one unknown event or one ill-typed field fails the whole agent."""
    table = data.get("hooks")
    if table is None:
        return []
    if not isinstance(table, dict):
        return "hooks: must be an object mapping event names to lists"
    out: list[KiroHook] = []
    for event, entries in table.items():
        where = f"hooks.{event}" if str(event).isidentifier() else f"hooks[{event!r}]"
        if event not in HOOK_NAMES:
            near = next((n for n in HOOK_NAMES if n.lower() == str(event).lower()), None)
            hint = f" (did you mean {near}?)" if near else ""
            return f"{where}: unknown event name{hint}"
        if not isinstance(entries, list):
            return f"{where}: must be a list of hook entries"
        for i, entry in enumerate(entries):
            spec = _entry(entry, event, template, installed)
            if isinstance(spec, str):
                return f"{where}[{i}]: {spec}"
            if wanted is None or event == wanted:
                out.append(spec)
    return out


def _whole(value: Any, limit: int = _U64) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit


def _entry(
    entry: Any, event: str, template: KiroHook, installed: Installed | None = None
) -> KiroHook | str:
    """One `{command, matcher?, timeout_ms?, max_output_size?, cache_ttl_seconds?}` entry
    (unknown fields are ignored, as serde does without `deny_unknown_fields`). A wrapper
    `install` recorded (`installed`) runs what it wraps; anything else, however shaped
    like a wrapper, runs as written."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    command = entry.get("command")
    if not isinstance(command, str):
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    for key in ("timeout_ms", "max_output_size", "cache_ttl_seconds"):
        if key in entry and not _whole(entry[key]):
            return f"{key} must be a whole number of at least 0, not {brief(entry[key])}"
    matcher = entry.get("matcher")
    if matcher is not None and (not isinstance(matcher, str) or not unicode_ok(matcher)):
        return f"matcher must be a string, not {brief(matcher)}"
    original = installed(entry) if installed is not None else None
    if original is not None and original[1] is None:
        command = original[0]
    timeout_ms = entry.get("timeout_ms", DEFAULT_TIMEOUT_MS)
    return replace(
        template, hook_name=event, name=command, argv=("bash", "-c", command),
        matcher=matcher, timeout=timeout_ms / 1000,
        max_output=entry.get("max_output_size", DEFAULT_MAX_OUTPUT),
        cache_ttl=entry.get("cache_ttl_seconds", 0),
    )  # fmt: skip


def _under(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")
