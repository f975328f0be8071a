"""Where Crush's hooks are configured: the `hooks` of every JSON config Crush merges,
read and checked; each entry Crush would refuse is a `Skipped` naming the file and the
JSON path (the files and their order: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..._types import Discovery, HookSpec, Skipped
from ..base import escape_name, from_repository, unique_mounts
from ..claude.handler import Installed, brief, unicode_ok
from ..claude.settings import recorded
from ..files import read_each, unreadable  # the checked read of each config file
from ..patterns import invalid

SYSTEM_FILE = "/etc/crush/crush.json"  # `systemConfigPath` (config_unix.go)
USER_DIR = ".config/crush"  # `GlobalConfig()`: $XDG_CONFIG_HOME/crush/crush.json
DATA_FILE = ".local/share/crush/crush.json"  # `GlobalConfigData()`
# Per project folder, in the order Crush merges them (later ones take precedence for
# single values; hook lists from all of them are appended).
PROJECT_FILES = ("crush.json", ".crush.json", ".crush/crush.json")
SHELL_CONFIGS = ("crushrc", ".crushrc")  # shell configs: a `hook add` there is not read
DEFAULT_TIMEOUT = 30  # seconds (`HookConfig.TimeoutDuration`)
MAX_TIMEOUT = 600  # seconds; sandboxrun's cap (exec's own deadline is lower still)


def canonical(event: str) -> str:
    """`normalizeHookEvent` (load.go): case and underscores ignored for known names."""
    return "PreToolUse" if event.replace("_", "").lower() == "pretooluse" else event


def config_files(
    workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(file, source) in Crush's merge order (`lookupConfigs`, then the data folder's)."""
    if explicit:
        out = []
        for given in map(os.path.normpath, explicit):
            path = os.path.join(given, "crush.json") if os.path.isdir(given) else given
            inside = any(_under(path, r) for r in workspaces)
            out.append((path, "project" if inside else "explicit"))
        return out
    files = [
        (SYSTEM_FILE, "system"),
        (os.path.join(home, USER_DIR, "crush.json"), "user"),
        (os.path.join(home, DATA_FILE), "user"),
    ]
    if workspaces:
        files += [(os.path.join(workspaces[0], name), "project") for name in PROJECT_FILES]
    return files


def discover(
    hook_names: Sequence[str],
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    roots = list(workspaces) or [home]
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    user_hooks = os.path.join(home, USER_DIR, "hooks")
    extra = [user_hooks] if os.path.isdir(user_hooks) else []
    listed = config_files(workspaces, home, explicit)
    for (path, source), shown, data in read_each(listed, skipped, " (Crush does not start)"):
        template = HookSpec(
            hook_name="", name="", source=source, argv=(), workdir=roots[0],
            mounts=unique_mounts([*roots, *([] if from_repository(source) else extra)]),
        )  # fmt: skip
        installed = recorded(home, path, source)
        for item in _entries(hook_names, data.get("hooks"), hook_name, template, installed):
            if isinstance(item, str):
                skipped.append(unreadable(shown, source, item))
            elif any(h.argv == item.argv and h.matcher == item.matcher for h in hooks):
                # Crush runs one hook per command string (`Runner.Run`): the first kept
                why = f"the same command is already configured: runs once ({brief(item.name)})"
                skipped.append(Skipped(shown, source, why))
            else:
                hooks.append(item)
    for root in roots[:1]:
        for name in SHELL_CONFIGS:
            if os.path.isfile(os.path.join(root, name)):
                why = "a shell config: hooks it adds (`hook add`) are not read by sandboxrun"
                skipped.append(Skipped(escape_name(os.path.join(root, name)), "project", why))
    return Discovery(tuple(hooks), tuple(skipped))


def _entries(
    hook_names: Sequence[str], table: Any, wanted: str | None, template: HookSpec,
    installed: Installed,
) -> list[HookSpec | str]:  # fmt: skip
    if table is None:
        return []
    if not isinstance(table, dict):
        return ["hooks: must be an object mapping event names to lists (Crush does not start)"]
    out: list[HookSpec | str] = []
    for key, entries in table.items():
        where = f"hooks[{key!r}]"
        event = canonical(key)
        if not isinstance(entries, list):
            out.append(f"{where}: must be a list of hook entries (Crush does not start)")
            continue
        if event not in hook_names:
            out.append(f"{where}: Crush fires no {key!r} event: never run")
            continue
        if wanted is not None and event != wanted:
            continue
        for i, entry in enumerate(entries):
            spec = _entry(entry, event, template, installed)
            out.append(f"{where}[{i}]: {spec}" if isinstance(spec, str) else spec)
    return out


def _entry(entry: Any, event: str, template: HookSpec, installed: Installed) -> HookSpec | str:
    """One `{name?, matcher?, command, timeout?}` (`config.HookConfig`). Crush refuses to
    start on a missing command, a matcher that is not a regexp, a field of the wrong
    type: such an entry is never run. A wrapper `install` recorded runs what it wraps."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        return "has no command string (Crush does not start)"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    original = installed({"command": command})
    if original is not None and original[1] is None:
        command = original[0]
    name = entry.get("name")
    if name is not None and not (isinstance(name, str) and unicode_ok(name)):
        return "name must be a string (Crush does not start)"
    spec = replace(template, hook_name=event, name=name or command,
                   argv=("bash", "-c", command))  # fmt: skip
    matcher = entry.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str) or not unicode_ok(matcher):
            return "matcher must be a string (Crush does not start)"
        # A workspace pattern is judged where it is used (`patterns.search`): never dropped.
        trusted = not from_repository(template.source)
        if trusted and matcher and invalid(matcher) is not None:
            return f"matcher {brief(matcher)} is not a regular expression (Crush does not start)"
        spec = replace(spec, matcher=matcher or None)
    timeout = entry.get("timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            return f"timeout must be a whole number of seconds, not {brief(timeout)}"
        if timeout > 0:  # 0 or less: Crush's default (`TimeoutDuration`); capped, never
            spec = replace(spec, timeout=float(min(timeout, MAX_TIMEOUT)))  # skipped
    return spec


def _under(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")
