"""Where Kiro's hooks are configured: the `hooks` field of each agent file, read and
checked as the CLI's serde types read it, and the hook files Kiro's other hook systems
keep, listed as not run (the rules and sources: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..._types import Discovery, HookSpec, Skipped
from ..base import escape_name, unique_mounts
from ..claude.handler import Installed, brief, unicode_ok
from ..claude.settings import _installed, _load  # the same checked read of a JSON file

HOOK_NAMES = ("agentSpawn", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
DEFAULT_TIMEOUT_MS = 30_000  # `cli/agent/hook.rs` DEFAULT_TIMEOUT_MS
DEFAULT_MAX_OUTPUT = 10 * 1024  # DEFAULT_MAX_OUTPUT_SIZE (bytes of stdout/stderr kept)
_U64 = (1 << 64) - 1
MAX_AGENT_FILES = 200  # per folder: a repository's thousand files are named, not read


@dataclass(frozen=True, slots=True)
class KiroHook(HookSpec):
    """A Kiro hook: a `HookSpec` with the entry's output cap and cache time."""

    max_output: int = DEFAULT_MAX_OUTPUT
    cache_ttl: int = 0  # seconds Kiro reuses a success; sandboxrun keeps no cache


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
    read: set[str] = set()
    for folder, source in ((os.path.join(home, user_dir), "user"),
                           (os.path.join(roots[0], project_dir), "project")):  # fmt: skip
        note = agent_files(folder)[1]
        if note and not explicit:
            skipped.append(Skipped(escape_name(folder), source, note))
    user_hooks = os.path.join(home, os.path.dirname(user_dir), "hooks")
    for path, source in config_files(user_dir, project_dir, roots, home, explicit):
        real = os.path.realpath(path)
        if real in read:
            continue
        read.add(real)
        shown = escape_name(path)
        data, problem = _load(path, must_exist=source == "explicit")
        if problem is not None:
            skipped.append(Skipped(shown, source, problem))
        if data is None:
            continue
        extra = [user_hooks] if source == "user" and os.path.isdir(user_hooks) else []
        # Kiro runs every hook in its own working directory, the project (`hooks.rs`
        # `run_hook` sets no cwd): a user's hook too.
        template = KiroHook(
            hook_name="", name="", source=source, argv=(), workdir=roots[0],
            mounts=unique_mounts([*roots, *extra]),
        )  # fmt: skip
        installed = _installed(home, path, "project" if source == "project" else "user")
        found = _entries(data, hook_name, template, installed)
        if isinstance(found, str):  # Kiro refuses the whole agent: none of its hooks run
            skipped.append(Skipped(shown, source, f"{found}: Kiro does not load this agent"))
            continue
        for spec in found:
            if spec.cache_ttl and spec.hook_name != "agentSpawn":
                why = (f"cache_ttl_seconds {spec.cache_ttl}: Kiro reuses a success that long;"
                       " sandboxrun keeps no cache and runs it every time")  # fmt: skip
                skipped.append(Skipped(shown, source, why))
        hooks += found
    skipped += other_hook_files(roots[0], home, project_dir)
    return Discovery(tuple(hooks), tuple(skipped))


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


V3_REASON = (
    "not run: a Kiro CLI v3 hook file (its stdin fields are unconfirmed;"
    " sandboxrun runs the agent-config hooks of .kiro/agents/*.json)"
)


def other_hook_files(project: str, home: str, project_dir: str) -> list[Skipped]:
    """The hook files of Kiro's IDE (`*.kiro.hook`) and of Kiro CLI v3 (`.kiro/hooks/
    <name>.json`), named as not run: the IDE documents no stdin protocol for its
    `runCommand` action, and v3's input fields are unconfirmed."""
    out = []
    kiro = os.path.dirname(project_dir) or ".kiro"
    for folder, source in ((os.path.join(home, kiro, "hooks"), "user"),
                           (os.path.join(project, kiro, "hooks"), "project")):  # fmt: skip
        try:
            names = sorted(os.listdir(folder))[:MAX_AGENT_FILES]
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(".kiro.hook"):
                why = _ide_reason(path)
            elif name.endswith(".json"):
                why = V3_REASON
            else:
                continue
            out.append(Skipped(escape_name(path), source, why))
    return out


def _ide_reason(path: str) -> str:
    data, problem = _load(path, must_exist=True)
    then = data.get("then") if data else None
    action = then.get("type") if isinstance(then, dict) else None
    if action == "runCommand":
        command = then.get("command") if isinstance(then, dict) else None
        shown = f" {command[:120]!r}" if isinstance(command, str) and unicode_ok(command) else ""
        return (f"not run: a Kiro IDE runCommand hook{shown} (the IDE documents no stdin"
                " protocol for it; the IDE runs it on the host)")  # fmt: skip
    if action == "askAgent":
        return "not run: a Kiro IDE askAgent hook (a prompt for the agent, no process)"
    return f"not run: a Kiro IDE hook file ({problem or 'no then.type'})"


def _under(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")
