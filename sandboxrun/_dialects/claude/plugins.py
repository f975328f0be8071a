"""Claude Code plugin hooks, found the way the agent finds them, from the user's own files.

A plugin is enabled by `enabledPlugins: {"name@marketplace": true}` in the user's
`~/.claude/settings.json`, and installed where `~/.claude/plugins/installed_plugins.json`
says (`{"version": 2, "plugins": {"name@marketplace": [{"scope": "user", "installPath":
...}]}}`; version 1 maps each id to one `{"installPath": ...}`; the older
`installed_plugins_v2.json` is read when the main file is missing). Its hooks are in
`<installPath>/hooks/hooks.json`, shaped like a settings file's `hooks`.

Only the user's own folder decides: `enabledPlugins` in a project or local file is not
read (a repository cannot add a plugin's hooks, nor turn a user's plugin off), and an
install path must lie in `~/.claude/plugins` (not its `data/`), never a path a workspace
names. Left out: hooks a plugin's `.claude-plugin/plugin.json` declares inline or in
other files, `--plugin-dir` sessions, managed (enterprise) plugin settings, and
`${user_config.*}` options.

Each hook runs with the plugin root mounted read-only, `CLAUDE_PLUGIN_ROOT` set to it (and
`${CLAUDE_PLUGIN_ROOT}` replaced in the command, as the agent does), and
`CLAUDE_PLUGIN_DATA` naming `~/.claude/plugins/data/<id>` (letters, digits, `_` and `-`
kept, the rest `-`), a private folder inside (`_sandbox.state.plugin_data`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from ..._log import logger
from ..._sandbox.mounts import under
from ..._types import HookSpec
from ..base import ExecPlugin
from ..files import Note, read_json

ROOT_VAR = "CLAUDE_PLUGIN_ROOT"
DATA_VAR = "CLAUDE_PLUGIN_DATA"
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
Loader = Callable[[str, bool], "tuple[dict[str, Any] | None, str | None]"]


def data_dir(home: str, user_dir: str, plugin: str) -> str:
    """The agent's data folder for a plugin id (its own sanitising)."""
    return os.path.join(home, user_dir, "plugins", "data", _UNSAFE.sub("-", plugin))


def enabled(settings: Mapping[str, Any]) -> list[str]:
    """The plugin ids a (user) settings file enables, in its order."""
    table = settings.get("enabledPlugins")
    if not isinstance(table, dict):
        return []
    return [k for k, v in table.items() if isinstance(k, str) and v is True]


def plugins(
    settings: Mapping[str, Any], home: str, user_dir: str, load: Loader
) -> Iterator[tuple[str, str | None, str | None]]:
    """(id, its root, None) for each enabled, installed plugin; (id, None, why) for
    an enabled one that cannot be used."""
    wanted = enabled(settings)
    if not wanted:
        return
    folder = os.path.join(home, user_dir, "plugins")
    installs, problem = _plugin_paths(folder, load)
    for plugin in wanted:
        paths = installs.get(plugin)
        if not paths:
            # (the agent has no such plugin either: a remark, unless the file is unreadable)
            yield plugin, None, problem or Note("enabled, but not in installed_plugins.json")
            continue
        path = paths[0]  # the user's own scope first
        why = _unusable(path, folder)
        yield (plugin, None, why) if why else (plugin, os.path.normpath(path), None)


def installed(home: str, user_dir: str, load: Loader) -> list[tuple[str, str]]:
    """(id, root) for every install of every plugin installed_plugins.json lists (each
    scope's), whose install path is usable (`_unusable`): the only folders of the
    plugins tree a hook command may have mounted (`_runner.exec`). Roots are normalised."""
    folder = os.path.join(home, user_dir, "plugins")
    installs, _problem = _plugin_paths(folder, load)
    return [
        (plugin, os.path.normpath(path))
        for plugin, paths in installs.items()
        for path in paths
        if _unusable(path, folder) is None
    ]


def _unusable(path: str, folder: str) -> str | None:
    """Why an install path is not used, or None: it must be a folder inside the plugins
    folder, not the folder itself nor in its `data/`, also once symlinks are followed."""
    real_folder = os.path.realpath(folder)
    data = os.path.join(real_folder, "data")
    real = os.path.realpath(path)
    if real == real_folder or not under(real, (real_folder,)) or under(real, (data,)):
        return f"install path {path!r} is not in {folder}: not used"
    if not os.path.isdir(real):
        return f"install path {path!r} is not a folder"
    return None


def _plugin_paths(folder: str, load: Loader) -> tuple[dict[str, list[str]], str | None]:
    """id -> its install paths (the user's scope first), from installed_plugins.json
    (or the older _v2 file). A relative path would be read against some current
    directory: never kept."""
    data, problem = load(os.path.join(folder, "installed_plugins.json"), False)
    if data is None and problem is None:
        data, problem = load(os.path.join(folder, "installed_plugins_v2.json"), False)
    if data is None:
        return {}, f"installed_plugins.json: {problem}" if problem else None
    table = data.get("plugins")
    if not isinstance(table, dict):
        return {}, "installed_plugins.json has no plugins object"
    found: dict[str, list[str]] = {}
    for plugin, entry in table.items():
        entries = [entry]
        if data.get("version") == 2 and isinstance(entry, list):
            # Several scopes may be installed: the user's own first.
            entries = sorted(
                (e for e in entry if isinstance(e, dict)), key=lambda e: e.get("scope") != "user"
            )
        paths = [e.get("installPath") for e in entries if isinstance(e, dict)]
        kept = [p for p in paths if isinstance(p, str) and os.path.isabs(p) and "\0" not in p]
        if kept:
            found[plugin] = kept
    return found, None


def plugin_spec(spec: HookSpec, plugin: str, root: str, data: str) -> HookSpec:
    """A hook of a plugin's hooks.json, as the agent runs it (module docstring)."""
    argv = tuple(a.replace("${" + ROOT_VAR + "}", root) for a in spec.argv)
    env = {**spec.env, ROOT_VAR: root, DATA_VAR: data}
    return replace(spec, argv=argv, env=env, plugin=plugin)


def exec_plugin(home: str, user_dir: str, environ: Mapping[str, str]) -> ExecPlugin | None:
    """The plugin Claude Code names in `CLAUDE_PLUGIN_ROOT` for a plugin's hook run by
    `exec`: only when the value is exactly the install path of a plugin the user's
    installed_plugins.json lists (absolute, normalised, no `..`; `installed` refuses one a
    symlink leads out of the plugins folder). The variable could also come from a
    repository's `env` block: it can then only name an installed plugin, never the plugins
    folder, its `data/`, a marketplace's clone (with its git credentials). Its
    `CLAUDE_PLUGIN_DATA` is kept when it is exactly that plugin's own data folder
    (`data_dir`); only its path is used: a private folder is there."""
    value = environ.get(ROOT_VAR)
    if not value:
        return None
    if os.path.isabs(value) and ".." not in value.split("/"):
        path = os.path.normpath(value)
        for plugin, root in installed(home, user_dir, read_json):
            if root == path:
                data = _own_data(home, user_dir, environ, plugin)
                env = {ROOT_VAR: root, **({DATA_VAR: data} if data else {})}
                return ExecPlugin(plugin, root, env, data)
    logger.warning(
        "{} ignored: {} is not the install path of a plugin in {}",
        ROOT_VAR, value, os.path.join(home, user_dir, "plugins", "installed_plugins.json"),
    )  # fmt: skip
    return None


def _own_data(home: str, user_dir: str, environ: Mapping[str, str], plugin: str) -> str | None:
    """The `CLAUDE_PLUGIN_DATA` the agent gave, when it is exactly `plugin`'s own data folder."""
    value = environ.get(DATA_VAR)
    if not value:
        return None
    own = data_dir(home, user_dir, plugin)
    if os.path.isabs(value) and ".." not in value.split("/") and os.path.normpath(value) == own:
        return own
    logger.warning("{} ignored: {} is not the data folder of {} ({})", DATA_VAR, value, plugin, own)
    return None
