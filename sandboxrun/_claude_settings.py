"""Where Claude-family hooks are configured: the settings files, read and checked.

User, project and local settings files (reference/claude-hooks.md) become one list of
`HookSpec`s, with every malformed entry reported as a `Skipped` that names the file and
the JSON path. The protocol itself (matchers, input, answers) is in `_claude.py`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._dialect import source_of, unique_mounts
from ._types import Discovery, HookSpec, Skipped

if TYPE_CHECKING:
    from ._claude import ClaudeDialect

# Levels the user controls; project and local files come with the workspace.
_TRUSTED = frozenset({"user", "explicit"})
# The event field a matcher is tested against; events absent here ignore matchers.
MATCH_FIELDS = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "PreCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}
SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")  # exact names, or a `|` list of them


def settings_files(
    dialect: ClaudeDialect, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, str | None]]:
    """(settings file, source, hooks folder to mount) in order: user, project, local.

    Only the user level mounts a folder of its own (`<user dir>/hooks`), never the
    user dir itself: it holds credentials. Explicit files (or folders holding a
    `settings.json`) replace all three levels.
    """
    if explicit:
        found: list[tuple[str, str, str | None]] = []
        for given in explicit:
            path = os.path.abspath(given)
            if os.path.isdir(path):
                path = os.path.join(path, "settings.json")
            # A settings file inside the workspace is the project's, however it was named.
            source = source_of(path, workspaces, "explicit").replace("workspace", "project")
            found.append((path, source, os.path.join(os.path.dirname(path), "hooks")))
        return found
    user = os.path.join(home, dialect.user_dir)
    project = os.path.join(workspaces[0] if workspaces else os.getcwd(), dialect.project_dir)
    return [
        (os.path.join(user, "settings.json"), "user", os.path.join(user, "hooks")),
        (os.path.join(project, "settings.json"), "project", None),
        (os.path.join(project, "settings.local.json"), "local", None),
    ]


def discover(
    dialect: ClaudeDialect,
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    """The hooks for `hook_name` (every event if None), and the skipped entries.

    Levels are concatenated in order; a command already found for the same event
    runs once (the first is kept, its matcher widened to cover both entries);
    `disableAllHooks: true` turns hooks off -- but a project or local file (which
    may come with a cloned repository) turns off only the workspace's own hooks,
    never the user's: the workspace cannot disarm the user's guards.
    """
    roots = list(workspaces) or [os.getcwd()]
    found: list[tuple[HookSpec, str, str]] = []  # (spec, its file, its JSON path)
    skipped: list[Skipped] = []
    disabled: set[str] = set()  # the sources whose files say disableAllHooks
    read: set[str] = set()
    for path, source, hooks_dir in settings_files(dialect, roots, home, explicit):
        real = os.path.realpath(path)
        if real in read:  # e.g. the project is $HOME: its settings are the user's
            continue
        read.add(real)
        data, problem = _load(path, must_exist=source == "explicit")
        if problem is not None:
            skipped.append(Skipped(path, source, problem))
        if data is None:
            continue
        flag = data.get("disableAllHooks")
        if flag is True:
            disabled.add(source)
            off = "every hook" if source in _TRUSTED else "this workspace's hooks"
            skipped.append(Skipped(path, source, f"disableAllHooks is true: {off} off"))
        elif flag is not None and not isinstance(flag, bool):
            why = "disableAllHooks must be true or false; ignored"
            skipped.append(Skipped(path, source, why))
        extra = [hooks_dir] if hooks_dir and os.path.isdir(hooks_dir) else []
        template = HookSpec(
            hook_name="",
            name="",
            source=source,
            argv=(),
            workdir=roots[0],
            mounts=unique_mounts([*roots, *extra]),
            env={dialect.project_dir_var: roots[0]},
        )
        for item in _entries(dialect, data, hook_name, template):
            if isinstance(item, str):
                skipped.append(Skipped(path, source, item))
            else:
                found.append((item[0], path, item[1]))
    if disabled & _TRUSTED:
        return Discovery((), tuple(skipped))
    if disabled:
        found = [f for f in found if f[0].source in _TRUSTED]
    hooks: list[HookSpec] = []
    index: dict[tuple[str, str], int] = {}
    for spec, path, where in found:
        key = (spec.hook_name, spec.name)
        if key not in index:
            index[key] = len(hooks)
            hooks.append(spec)
            continue
        first = hooks[index[key]]
        hooks[index[key]] = _merge(first, spec)
        why = f"{where}: the same command is already configured ({first.source}); runs once"
        skipped.append(Skipped(path, spec.source, why))
    return Discovery(tuple(hooks), tuple(skipped))


def _entries(
    dialect: ClaudeDialect, data: Mapping[str, Any], wanted: str | None, template: HookSpec
) -> list[tuple[HookSpec, str] | str]:
    """Each valid hook as (spec, JSON path), each invalid entry as 'path: why'."""
    table = data.get("hooks")
    if table is None:
        return []
    if not isinstance(table, dict):
        return ["hooks: must be an object mapping event names to lists"]
    out: list[tuple[HookSpec, str] | str] = []
    for event, entries in table.items():
        where = _key_path("hooks", event)
        if event not in dialect.hook_names:
            near = next((n for n in dialect.hook_names if n.lower() == event.lower()), None)
            hint = f" (did you mean {near}?)" if near else ""
            out.append(f"{where}: unknown event name{hint}")
            continue
        if wanted is not None and event != wanted:
            continue
        if not isinstance(entries, list):
            out.append(f"{where}: must be a list of matcher entries")
            continue
        for i, entry in enumerate(entries):
            out += _entry(entry, f"{where}[{i}]", event, template)
    return out


def _load(path: str, must_exist: bool) -> tuple[dict[str, Any] | None, str | None]:
    """(settings, None), (None, why it is skipped), or (None, None) for a missing file."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None, "not found" if must_exist else None
    except IsADirectoryError:
        return None, "is a directory, not a settings file"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror}"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    if not text.strip():
        return {}, None  # an empty settings file configures nothing
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg}: line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"
    if not isinstance(data, dict):
        return None, f"not a JSON object (a {type(data).__name__})"
    return data, None


def _entry(
    entry: Any, where: str, event: str, template: HookSpec
) -> list[tuple[HookSpec, str] | str]:
    """One matcher entry `{"matcher": ..., "hooks": [...]}` -> its hooks and problems."""
    if not isinstance(entry, dict):
        return [f"{where}: must be an object with a hooks list"]
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        return [f"{where}.matcher: must be a string"]
    if matcher is not None and event in MATCH_FIELDS:
        problem = _check_matcher(matcher)
        if problem:
            return [f"{where}.matcher: {problem}"]
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        return [f"{where}: has no hooks list"]
    out: list[tuple[HookSpec, str] | str] = []
    for j, hook in enumerate(hooks):
        at = f"{where}.hooks[{j}]"
        command, timeout, why = _hook_fields(hook)
        if why is not None:
            out.append(f"{at}: {why}")
            continue
        assert command is not None
        spec = replace(
            template,
            hook_name=event,
            name=command,
            argv=("/bin/sh", "-c", command),
            timeout=timeout,
            matcher=matcher,
        )
        out.append((spec, at))
    return out


def _hook_fields(hook: Any) -> tuple[str | None, float | None, str | None]:
    """(command, timeout in seconds, None) for a valid hook, else (None, None, why)."""
    if not isinstance(hook, dict):
        return None, None, "must be an object"
    kind = hook.get("type")
    if kind != "command":
        if kind is None:
            return None, None, 'has no type (only "command" is supported)'
        return None, None, f'type {kind!r} is not supported (only "command")'
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, None, "has no command string"
    timeout = hook.get("timeout")
    if timeout is None:
        return command, None, None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        return None, None, f"timeout must be a positive number of seconds, not {timeout!r}"
    if timeout == float("inf"):
        return None, None, "timeout must be finite"
    return command, float(timeout), None


def _check_matcher(matcher: str) -> str | None:
    """Why a matcher is unusable (an invalid regular expression), or None."""
    if matcher in ("", "*") or SIMPLE_MATCHER.fullmatch(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"invalid regular expression {matcher!r}: {exc}"
    return None


def _merge(first: HookSpec, again: HookSpec) -> HookSpec:
    """The first spec of a command, applying wherever either entry's matcher applies."""
    matcher = first.matcher
    if first.hook_name in MATCH_FIELDS:
        matcher = _union(first.matcher, again.matcher)
    return replace(first, matcher=matcher, mounts=unique_mounts([*first.mounts, *again.mounts]))


def _union(a: str | None, b: str | None) -> str | None:
    """A matcher that matches what `a` or `b` matches."""
    if a is None or a in ("", "*") or a == b:
        return a
    if b is None or b in ("", "*"):
        return b
    if SIMPLE_MATCHER.fullmatch(a) and SIMPLE_MATCHER.fullmatch(b):
        return "|".join(dict.fromkeys([*a.split("|"), *b.split("|")]))
    return f"{_as_regex(a)}|{_as_regex(b)}"


def _as_regex(matcher: str) -> str:
    if SIMPLE_MATCHER.fullmatch(matcher):
        return rf"\A(?:{matcher})\Z"
    return f"(?:{matcher})"


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if key.isidentifier() else f"{prefix}[{json.dumps(key)}]"


# -- output helpers ----------------------------------------------------------------
