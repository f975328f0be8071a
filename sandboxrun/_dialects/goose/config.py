"""Where Goose's hooks are: the plugins of the user and of the project, which of them
the settings files disable, and each plugin's `hooks/hooks.json` read as Goose reads it
(the sources and the rules: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ..._types import Discovery, HookSpec, Skipped
from ..base import escape_name, unique_mounts
from ..claude.handler import MAX_TIMEOUT, brief, unicode_ok
from ..claude.settings import recorded
from ..files import read_json, unreadable  # the checked read of a JSON file
from ..patterns import invalid

# Regex syntax Python's `regex` reads but Rust's `regex` crate refuses (Goose then skips
# the rule): lookaround, backreferences, atomic groups, possessive quantifiers.
OUTSIDE = "leads out of the project (a symlink): not run"
_RUST_REFUSES = ("(?=", "(?!", "(?<=", "(?<!", "(?>", "*+", "++", "?+", "}+")


class GooseLike(Protocol):
    @property
    def plugins_dir(self) -> str: ...
    @property
    def settings_dir(self) -> str: ...
    @property
    def hook_names(self) -> tuple[str, ...]: ...


def plugins(dialect: GooseLike, root: str | None, home: str) -> list[tuple[str, str, str]]:
    """(name, plugin folder, source) of every plugin folder, the user's first: a
    repository's plugins can then only push its own past `max_hooks`. Goose lists the
    project's first; the order decides only whose reason a deny gives."""
    found: list[tuple[str, str, str]] = []
    places = [(os.path.join(home, dialect.plugins_dir), "user")]
    if root:
        places.append((os.path.join(root, dialect.plugins_dir), "project"))
    for folder, source in places:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isdir(path):  # Goose's `is_dir()`: a symlink is followed
                found.append((name, path, source))
    return found


def _settings(path: str) -> tuple[tuple[set[str], set[str]] | None, str | None]:
    """(enabled, disabled) plugin names of one settings file, or why it is ignored
    (Goose ignores a file it cannot read as `{enabledPlugins?: [str], disabledPlugins?:
    [str]}`, with a warning)."""
    data, problem = read_json(path, must_exist=False)
    if data is None:
        return None, problem
    lists = []
    for key in ("enabledPlugins", "disabledPlugins"):
        value = data.get(key)
        if value is None:
            value = []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None, f"{key} must be a list of names: Goose ignores this file"
        lists.append(set(value))
    return (lists[0], lists[1]), None


def enabled(
    name: str, source: str, scopes: Sequence[tuple[str, tuple[set[str], set[str]]]]
) -> tuple[bool, str | None]:
    """Whether plugin `name` runs, by Goose's rule (the first scope, local, project,
    user, that lists it decides: disabled first), and a note. A repository's settings
    never disable a user's plugin (issue 20): for those, only its `enabledPlugins` counts
    (Goose would then run it too)."""
    for scope, (on, off) in scopes:
        if name in off:
            if source == "user" and scope != "user":
                note = (
                    f"disabled by the repository's {scope} settings: Goose skips it,"
                    " sandboxrun runs it (a repository never turns off the user's hooks)"
                )
                return True, note
            return False, f"disabled in the {scope} settings (disabledPlugins)"
        if name in on:
            return True, None
    return True, None


def discover(
    dialect: GooseLike,
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    roots = list(workspaces) or [home]
    root = roots[0] if workspaces else None
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    scopes: list[tuple[str, tuple[set[str], set[str]]]] = []
    files = [("local", root, "settings.local.json"), ("project", root, "settings.json"),
             ("user", home, "settings.json")]  # fmt: skip
    for scope, base, file in files:
        if base is None:
            continue
        path = os.path.join(base, dialect.settings_dir, file)
        lists, problem = _settings(path)
        if problem:
            skipped.append(unreadable(escape_name(path), scope, problem))
        if lists:
            scopes.append((scope, lists))
    if explicit:
        found = [(os.path.basename(os.path.normpath(p)), os.path.normpath(p), "explicit")
                 for p in explicit]  # fmt: skip
    else:
        found = plugins(dialect, root, home)
    names = {n for n, _, s in found if s == "user"}
    for name, folder, source in found:
        shown = escape_name(folder)
        run, note = enabled(name, source, scopes) if source != "explicit" else (True, None)
        if not run:
            skipped.append(Skipped(shown, source, f"not run: {note}"))
            continue
        if note:
            skipped.append(Skipped(shown, source, note))
        if source == "project" and name in names:
            why = (
                "has the name of a user plugin: Goose runs only this one; sandboxrun"
                " runs both (a repository never replaces the user's hooks)"
            )
            skipped.append(Skipped(shown, source, why))
        if source == "project" and not _inside(folder, root):
            skipped.append(Skipped(shown, source, OUTSIDE))
            continue
        path = os.path.join(folder, "hooks", "hooks.json")
        if source == "project" and os.path.exists(path) and not _inside(path, root):
            skipped.append(Skipped(escape_name(path), source, OUTSIDE))
            continue
        data, problem = read_json(path, must_exist=source == "explicit")
        if problem is not None:
            skipped.append(
                unreadable(escape_name(path), source, f"{problem}: Goose skips the file")
            )
        if data is None:
            continue
        template = HookSpec(
            hook_name="", name="", source=source, argv=(), workdir=roots[0],
            mounts=unique_mounts([*roots, folder]), env={"PLUGIN_ROOT": folder}, plugin=name,
        )  # fmt: skip
        installed = recorded(home, path, "project" if source == "project" else "user")
        items = entries(dialect, data, hook_name, template, folder, installed)
        if isinstance(items, str):
            skipped.append(unreadable(escape_name(path), source, f"{items}: Goose skips the file"))
            continue
        for item in items:
            if isinstance(item, str):
                skipped.append(unreadable(escape_name(path), source, item))
            else:
                hooks.append(item)
    return Discovery(tuple(hooks), tuple(skipped))


def _inside(path: str, root: str | None) -> bool:
    if root is None:
        return True
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def entries(
    dialect: GooseLike, data: Mapping[str, Any], wanted: str | None, template: HookSpec,
    folder: str, installed: Any = None,
) -> list[HookSpec | str] | str:  # fmt: skip
    """The hooks of one file, notes for rules Goose skips, or why Goose rejects the
    whole file (what serde refuses: a wrong type anywhere, an unknown `on_failure` on
    a command it would run)."""
    table = data.get("hooks")
    if table is None:
        return []
    if not isinstance(table, dict):
        return "hooks must be an object mapping event names to lists"
    out: list[HookSpec | str] = []
    for event, rules in table.items():
        where = f"hooks.{event}"
        if not isinstance(rules, list):
            return f"{where} must be a list"
        for i, rule in enumerate(rules):
            got = _rule(dialect, event, rule, f"{where}[{i}]", wanted, template, folder, installed)
            if isinstance(got, str):
                return got
            out += got
    return out


def _rule(
    dialect: GooseLike, event: str, rule: Any, where: str, wanted: str | None,
    template: HookSpec, folder: str, installed: Any,
) -> list[HookSpec | str] | str:  # fmt: skip
    """In Goose's order: serde's types (the whole file), the event (unknown: ignored),
    the matcher (invalid: the rule skipped), then each action's `on_failure`."""
    if not isinstance(rule, dict):
        return f"{where} must be an object"
    matcher, actions = rule.get("matcher"), rule.get("hooks")
    if matcher is not None and not isinstance(matcher, str):
        return f"{where}.matcher must be a string"
    if actions is None:
        actions = []
    if not isinstance(actions, list):
        return f"{where}.hooks must be a list"
    for j, action in enumerate(actions):
        problem = _shape_error(action, f"{where}.hooks[{j}]")
        if problem:
            return problem
    if event not in dialect.hook_names:
        return [f"{where}: unknown event {event!r}: Goose ignores it"]
    if matcher:  # "" or null: every event
        problem = _matcher_problem(matcher, template.source)
        if problem:
            return [f"{where}: not run: matcher {matcher!r} {problem}: Goose skips the rule"]
    specs: list[HookSpec | str] = []
    for j, action in enumerate(actions):
        got = _action(action, f"{where}.hooks[{j}]", event, template, folder, installed)
        if isinstance(got, tuple):
            return got[0]
        specs.append(replace(got, matcher=matcher or None) if isinstance(got, HookSpec) else got)
    return specs if wanted is None or event == wanted else []


def _matcher_problem(matcher: str, source: str) -> str | None:
    # Length and size are judged where it is used (`patterns.search`): never dropped.
    if any(bad in matcher for bad in _RUST_REFUSES) or _backreference(matcher):
        return "uses syntax Rust's regex refuses (lookaround, backreference, atomic group)"
    error = invalid(matcher) if source != "project" else None
    return f"is not a valid regular expression ({error})" if error else None


def _backreference(matcher: str) -> bool:
    return any(matcher[i] == "\\" and matcher[i + 1 : i + 2].isdigit() and matcher[i + 1] != "0"
               for i in range(len(matcher)))  # fmt: skip


def _shape_error(action: Any, where: str) -> str | None:
    """Why serde refuses this action (and with it the whole file), or None."""
    if not isinstance(action, dict):
        return f"{where} must be an object"
    for key in ("type", "command"):
        if action.get(key) is not None and not isinstance(action[key], str):
            return f"{where}.{key} must be a string"
    timeout = action.get("timeout")
    whole = isinstance(timeout, int) and not isinstance(timeout, bool) and 0 <= timeout < 2**64
    if timeout is not None and not whole:
        return f"{where}.timeout must be a whole number of seconds, not {brief(timeout)}"
    return None


def _action(
    action: dict[str, Any], where: str, event: str, template: HookSpec, folder: str,
    installed: Any,
) -> HookSpec | str | tuple[str]:  # fmt: skip
    """A spec, a note (an entry Goose ignores), or (why Goose rejects the file,)."""
    kind, command, timeout = action.get("type"), action.get("command"), action.get("timeout")
    if (kind or "command") != "command":
        return f"{where}: not run: type {kind!r} (Goose runs only command hooks)"
    if command is None:
        return f"{where}: has no command: Goose ignores it"
    on_failure = action.get("on_failure")
    if on_failure not in (None, "allow", "block"):
        return (f'{where}.on_failure must be "allow" or "block", not {brief(on_failure)}',)
    original = installed({**action, "command": command}) if installed else None
    if original is not None:  # a wrapper `install` recorded: its original runs here
        command = original[0]
    if not unicode_ok(command) or "\0" in command:
        return f"{where}: command is not valid Unicode text: not run"
    # Goose's timeout 0 ends the hook at once (no decision): a tiny deadline does the same.
    seconds = 30.0 if timeout is None else min(max(float(timeout), 0.001), MAX_TIMEOUT)
    return replace(
        template, hook_name=event, name=command, timeout=seconds,
        argv=("/bin/sh", "-c", expand(command, folder)), fail_closed=on_failure == "block",
    )  # fmt: skip


def expand(command: str, plugin_root: str) -> str:
    """Goose's textual `${PLUGIN_ROOT}` (before `sh -c`; `$PLUGIN_ROOT` is the env's)."""
    return command.replace("${PLUGIN_ROOT}", plugin_root)
