"""Where Claude-family hooks are configured: the settings files, read and checked.

User, project and local settings files (reference/claude-hooks.md) become one list of
`HookSpec`s, with every malformed entry reported as a `Skipped` that names the file and
the JSON path. The protocol itself (matchers, input, answers) is in `dialect.py`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ..._errors import ConfigError
from ..._sandbox.mounts import confined
from ..._types import Discovery, HookSpec, Skipped
from ..._wrapped import Record, check_in, is_check
from ..base import escape_name, source_of, unique_mounts
from ..files import MAX_SETTINGS_BYTES as MAX_SETTINGS_BYTES  # re-exported for tests
from ..files import Note, read_each, read_json, unreadable
from .handler import MAX_TIMEOUT as MAX_TIMEOUT  # re-exported for tests
from .handler import SESSION_CHECK, Installed, Timeouts, handler, not_run_reason, unicode_ok
from .matchers import MATCH_FIELDS, SIMPLE_MATCHER, check, matches_all
from .plugins import data_dir, installed, plugin_spec, plugins


class ClaudeDialect(Protocol):
    """What reading the settings files needs of a Claude-family dialect (`dialect.py`
    implements it; the protocol keeps this module from importing the dialect back)."""

    @property
    def agent(self) -> str: ...
    @property
    def user_dir(self) -> str: ...
    @property
    def project_dir(self) -> str: ...
    @property
    def project_dir_var(self) -> str | None: ...
    @property
    def hook_names(self) -> Sequence[str]: ...
    @property
    def config_files(self) -> Sequence[ConfigFile]: ...
    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def project_vars(self) -> tuple[str, ...]: ...
    @property
    def table_keys(self) -> frozenset[str]: ...


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """One file an agent reads hooks from (a Claude-shaped agent's table, `dialect.py`).

    `path`: `~/...` in the home, `/...` absolute (a system level), else relative to the
    project root. `shape`: "hooks" (the event table is the file's `hooks` key), "events"
    (the file IS the event table: Devin's hooks.v1.json), or "either" (a `hooks` object
    if there is one, else the file). `unless`: the file is a fallback, read only when
    none of these (same notation) exists (Factory's settings.json behind its hooks.json).
    """

    path: str
    source: str  # managed | user | project | local
    shape: str = "hooks"
    unless: tuple[str, ...] = ()


# Levels the user (or the machine's admin) controls; project and local files come
# with the workspace.
_TRUSTED = frozenset({"user", "explicit", "plugin", "managed"})


def project_root(start: str, home: str, marker: str) -> str:
    """The Claude project a session in `start` belongs to: the nearest folder from
    `start` upward that holds `marker` (the dialect's `.claude`) or a `.git`, else `start`.

    Found from the filesystem only, never from a variable (a repository's settings `env`
    block sets the hook's environment). The walk never reaches the user's home, its
    ancestors or `/`, nor leaves the allowed_roots of the server answering
    (`_sandbox.mounts.confined`: a tenant's folder never makes the platform's checkout above it
    its project), and stops at a folder owned by another user than `start`: a project is
    one user's folder tree.
    """
    start = os.path.abspath(start)
    homes = {os.path.abspath(home), os.path.realpath(home)}
    try:
        owner = os.stat(start).st_uid
    except OSError:
        return start
    folder = start
    while True:
        if folder == "/" or any(Path(h).is_relative_to(folder) for h in homes):
            return start
        if not confined(folder):
            return start
        try:
            if os.stat(folder).st_uid != owner:
                return start
        except OSError:
            return start
        here = os.path.join(folder, marker)
        if os.path.isdir(here) or os.path.lexists(os.path.join(folder, ".git")):
            return folder
        folder = os.path.dirname(folder)


def project_env(dialect: ClaudeDialect, project: str) -> dict[str, str]:
    """The variables naming the project root for a hook, those the agent sets."""
    return dict.fromkeys(dialect.project_vars, project)


def settings_files(
    dialect: ClaudeDialect, project: str, home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, str | None]]:
    """(settings file, source, hooks folder to mount) in order (`config_levels`)."""
    return [(path, source, folder) for path, source, folder, _ in
            config_levels(dialect, project, home, explicit)]  # fmt: skip


def config_levels(
    dialect: ClaudeDialect, project: str, home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, str | None, str]]:
    """(file, source, hooks folder to mount, shape) in order: the classic user, project
    and local settings files, or the dialect's own `config_files` (trusted levels first).

    Only a user-level file mounts a folder of its own (`<its folder>/hooks`), never the
    folder itself: it holds credentials. Explicit files (or folders holding a
    `settings.json`) replace all the levels.
    """
    bare = any(f.shape != "hooks" for f in dialect.config_files)
    if explicit:
        found: list[tuple[str, str, str | None, str]] = []
        for given in explicit:
            path = os.path.normpath(given)  # absolute (`_runner.reply.absolute_paths`)
            if os.path.isdir(path):
                path = os.path.join(path, "settings.json")
            # A settings file inside the workspace is the project's, however it was named.
            source = source_of(path, [project], "explicit").replace("workspace", "project")
            folder = os.path.join(os.path.dirname(path), "hooks")
            found.append((path, source, folder, "either" if bare else "hooks"))
        return found
    user = os.path.join(home, dialect.user_dir)
    if not dialect.config_files:
        folder = os.path.join(project, dialect.project_dir)
        return [
            (os.path.join(user, "settings.json"), "user", os.path.join(user, "hooks"), "hooks"),
            (os.path.join(folder, "settings.json"), "project", None, "hooks"),
            (os.path.join(folder, "settings.local.json"), "local", None, "hooks"),
        ]

    def where(path: str) -> str:
        if path.startswith("~/"):
            return os.path.join(home, path[2:])
        return path if os.path.isabs(path) else os.path.join(project, path)

    levels: list[tuple[str, str, str | None, str]] = []
    for f in dialect.config_files:
        # A fallback, and what it stands in for is there: a file (a dangling link or a
        # folder a repository ships in its place leaves the fallback read, and listed).
        if any(os.path.isfile(where(u)) for u in f.unless):
            continue
        path = where(f.path)
        mount: str | None = None
        if f.source == "user":  # the agent's own hooks folder, or the file's neighbour
            parent = user if Path(path).is_relative_to(user) else os.path.dirname(path)
            mount = os.path.join(parent, "hooks")
        levels.append((path, f.source, mount, f.shape))
    return levels


def discover(
    dialect: ClaudeDialect,
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    """The hooks for `hook_name` (every event if None), and the skipped entries.

    Levels are concatenated in order, and entries of different sources are never
    merged: each keeps its own matcher and its own trust. Within one source, a command
    already found for the same event runs once when the two matchers can be joined
    safely (equal, one matches everything, or both are name lists); otherwise both
    entries stay (a tool both match runs it twice). `disableAllHooks: true` turns hooks
    off -- but a project or local file (which may come with a cloned repository) turns
    off only the workspace's own hooks, never the user's.

    The project is `project_root` of the first root (the event's `cwd`, at least one:
    `_runner.resolve_workspaces`): hooks run in that `cwd`, with the project mounted and
    named by the dialect's variable.
    """
    roots = list(workspaces)
    project = project_root(roots[0], home, dialect.project_dir)
    found: list[tuple[HookSpec, str, str]] = []  # (spec, its file, its JSON path)
    skipped: list[Skipped] = []
    not_run: list[Skipped] = []  # handlers of other types than command: listed, never run
    disabled: set[str] = set()  # the sources whose files say disableAllHooks
    user_settings: dict[str, Any] = {}
    levels = config_levels(dialect, project, home, explicit)
    for (path, source, hooks_dir, shape), shown, data in read_each(levels, skipped):
        if source == "user":
            user_settings = data
        elif source in ("project", "local") and data.get("enabledPlugins"):
            why = "enabledPlugins: not read here (plugins come only from your user settings)"
            skipped.append(Skipped(shown, source, why))
        flag = data.get("disableAllHooks")
        if flag is True:
            disabled.add(source)
            off = "every hook" if source in _TRUSTED else "this workspace's hooks"
            skipped.append(Skipped(shown, source, f"disableAllHooks is true: {off} off"))
        elif flag is not None and not isinstance(flag, bool):
            why = "disableAllHooks must be true or false; ignored"
            skipped.append(Skipped(shown, source, why))
        extra = [hooks_dir] if hooks_dir and os.path.isdir(hooks_dir) else []
        template = HookSpec(
            hook_name="",
            name="",
            source=source,
            argv=(),
            workdir=roots[0],
            mounts=unique_mounts([project, *roots, *extra]),
            env=project_env(dialect, project),
        )
        installed = recorded(home, path, source)
        table = {"hooks": _table(data, shape)}
        for item in _entries(dialect, table, hook_name, template, installed):
            if isinstance(item, str):
                skipped.append(unreadable(shown, source, item))
            elif item[0].kind != "command":
                not_run.append(Skipped(shown, source, f"{item[1]}: {not_run_reason(item[0])}",
                                       item[0]))  # fmt: skip
            else:
                found.append((item[0], shown, item[1]))
    if dialect.agent == "claude" and not explicit:
        found += _plugin_hooks(dialect, user_settings, hook_name, home, project, roots, skipped)
    if disabled & _TRUSTED:
        return Discovery((), tuple(skipped))
    if disabled:
        found = [f for f in found if f[0].source in _TRUSTED]
        not_run = [s for s in not_run if s.source in _TRUSTED]
    hooks = _once_per_source(found, skipped)
    return Discovery(tuple(hooks), (*skipped, *not_run))


def recorded(home: str, path: str, source: str) -> Installed:
    """The lookup of the wrappers `install` recorded for one settings file (a project
    or local file's wrappers carry `--untrusted`, as `install` writes them there)."""
    record = Record(home)
    try:
        entries = record.entries(path)
    except ConfigError:
        entries = {}  # unreadable: nothing counts as installed, so nothing is unwrapped
    untrusted = source in ("project", "local")
    check = check_in(home, path) if source == "user" else None  # never a repository's

    def original(hook: dict[str, Any]) -> tuple[str, tuple[str, ...] | None] | None:
        if is_check(check, hook):
            return SESSION_CHECK
        return record.original(path, hook, untrusted, entries) if entries else None

    return original


def _plugin_hooks(
    dialect: ClaudeDialect, user_settings: Mapping[str, Any], hook_name: str | None,
    home: str, project: str, roots: Sequence[str], skipped: list[Skipped],
) -> list[tuple[HookSpec, str, str]]:  # fmt: skip
    """The hooks of the plugins the user enabled (`plugins`), as (spec, file,
    JSON path); what cannot be used is added to `skipped`."""
    found: list[tuple[HookSpec, str, str]] = []
    for plugin, root, problem in plugins(user_settings, home, dialect.user_dir, read_json):
        if root is None:
            skipped.append(unreadable(escape_name(plugin), "plugin", problem or Note("not used")))
            continue
        path = os.path.join(root, "hooks", "hooks.json")
        shown = escape_name(path)
        data, problem = read_json(path, must_exist=False)
        if problem is not None:
            skipped.append(unreadable(shown, "plugin", problem))
        if data is None:
            continue
        template = HookSpec(
            hook_name="", name="", source="plugin", argv=(), workdir=roots[0],
            mounts=unique_mounts([project, *roots, root]),
            env=project_env(dialect, project),
        )  # fmt: skip
        data_path = data_dir(home, dialect.user_dir, plugin)
        for item in _entries(dialect, data, hook_name, template):
            if isinstance(item, str):
                skipped.append(unreadable(shown, "plugin", item))
            elif item[0].kind != "command":
                reason = f"{item[1]}: {not_run_reason(item[0])}"
                skipped.append(Skipped(shown, "plugin", reason, item[0]))
            else:
                found.append((plugin_spec(item[0], plugin, root, data_path), shown, item[1]))
    return found


def installed_plugins(home: str, user_dir: str) -> list[tuple[str, str]]:
    """(id, root) of every usable install of the user's plugins (`plugins.installed`),
    read as discovery reads installed_plugins.json."""
    return installed(home, user_dir, read_json)


def _once_per_source(
    found: list[tuple[HookSpec, str, str]], skipped: list[Skipped]
) -> list[HookSpec]:
    """The hooks in order, a command repeated within one source and event kept once
    where the matchers join safely (`_joined`); never across sources."""
    hooks: list[HookSpec] = []
    for spec, path, where in found:
        for i, first in enumerate(hooks):
            same = _identity(first) == _identity(spec)
            joined = _joined(first, spec) if same else None
            if joined is not None:
                hooks[i] = joined
                why = f"{where}: the same command is already configured here; runs once"
                skipped.append(Skipped(path, spec.source, why))
                break
        else:
            hooks.append(spec)
    return hooks


def _identity(spec: HookSpec) -> tuple[Any, ...]:
    """What makes two entries the same hook: where, when, what runs and how."""
    env = tuple(sorted(spec.env.items()))  # two plugins' same command are two hooks
    return (spec.source, spec.hook_name, spec.argv, spec.condition, spec.run_async, env)


def _joined(first: HookSpec, again: HookSpec) -> HookSpec | None:
    """One spec applying wherever either applies, or None if no safe matcher does."""
    a, b = first.matcher, again.matcher
    if first.hook_name not in MATCH_FIELDS or a == b or matches_all(a):
        matcher = a
    elif matches_all(b):
        matcher = b
    elif a is not None and b is not None and SIMPLE_MATCHER.fullmatch(a + "|" + b):
        matcher = "|".join(dict.fromkeys([*a.split("|"), *b.split("|")]))
    else:
        return None
    return replace(first, matcher=matcher, mounts=unique_mounts([*first.mounts, *again.mounts]))


def _table(data: Mapping[str, Any], shape: str) -> Any:
    """The event table of a file of this `shape` (`ConfigFile`)."""
    if shape == "events" or (shape == "either" and not isinstance(data.get("hooks"), dict)):
        return data
    return data.get("hooks")


def _entries(
    dialect: ClaudeDialect, data: Mapping[str, Any], wanted: str | None, template: HookSpec,
    installed: Installed | None = None,
) -> list[tuple[HookSpec, str] | str]:  # fmt: skip
    """Each valid hook of `data`'s `hooks` table as (spec, JSON path), each invalid entry
    as 'path: why'. Keys the dialect lists in `table_keys` are settings, not events."""
    table = data.get("hooks")
    if table is None:
        return []
    if not isinstance(table, dict):
        return ["hooks: must be an object mapping event names to lists"]
    out: list[tuple[HookSpec, str] | str] = []
    for event, entries in table.items():
        where = _key_path("hooks", event)
        if event in dialect.table_keys:
            continue
        if event not in dialect.hook_names:
            near = next((n for n in dialect.hook_names if n.lower() == event.lower()), None)
            hint = f" (did you mean {near}?)" if near else ""
            out.append(Note(f"{where}: unknown event name{hint}"))
            continue
        if wanted is not None and event != wanted:
            continue
        if not isinstance(entries, list):
            out.append(f"{where}: must be a list of matcher entries")
            continue
        for i, entry in enumerate(entries):
            out += _entry(entry, f"{where}[{i}]", event, template, installed,
                          dialect.timeouts)  # fmt: skip
    return out


def _entry(
    entry: Any, where: str, event: str, template: HookSpec, installed: Installed | None,
    timeouts: Timeouts | None = None,
) -> list[tuple[HookSpec, str] | str]:  # fmt: skip
    """One matcher entry `{"matcher": ..., "hooks": [...]}` -> its hooks and problems."""
    if not isinstance(entry, dict):
        return [f"{where}: must be an object with a hooks list"]
    matcher = entry.get("matcher")
    out: list[tuple[HookSpec, str] | str] = []
    if matcher is not None and not isinstance(matcher, str):
        return [f"{where}.matcher: must be a string"]
    if matcher is not None and not unicode_ok(matcher):
        return [f"{where}.matcher: not valid Unicode (a lone surrogate)"]
    if matcher is not None and event in MATCH_FIELDS:
        keep, problem = check(matcher, template.source)
        if problem:  # a matcher kept is a warning; one refused drops its hooks
            line = f"{where}.matcher: {problem}"
            out.append(Note(line) if keep else line)
        if not keep:
            return out
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        return [*out, f"{where}: has no hooks list"]
    for j, hook in enumerate(hooks):
        at = f"{where}.hooks[{j}]"
        spec = handler(hook, event, replace(template, matcher=matcher), installed,
                       timeouts or Timeouts())  # fmt: skip
        out.append(f"{at}: {spec}" if isinstance(spec, str) else (spec, at))
    return out


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if key.isidentifier() else f"{prefix}[{json.dumps(key)}]"
