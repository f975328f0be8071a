"""Where Codex's hooks are: requirements.toml, then the system, user and project layers'
hooks.json and config.toml `[hooks]`. See the package docstring for the sources."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._types import Discovery, HookSpec, Skipped
from ..._wrapped import is_forwarder
from ..base import escape_name, source_of, unique_mounts
from ..claude.dialect import ClaudeDialect
from ..claude.handler import Installed, not_run_reason
from ..claude.matchers import MATCH_FIELDS, SIMPLE_MATCHER, matches_all
from ..claude.settings import _entries, project_env, project_root, recorded
from ..files import read_json, read_regular, unreadable
from ..patterns import invalid
from .schema import BOOL, STR, Check, _opt

HOOK_NAMES = (
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "Interrupt",
)
DEFAULT_TIMEOUT = 600  # seconds (discovery.rs)
SHORT_EVENTS = frozenset({"SessionEnd", "Interrupt"})  # default 1 s, at most 3 s
SYSTEM_DIR = "/etc/codex"  # config.toml, hooks.json, requirements.toml (Unix)


def discover(
    dialect: ClaudeDialect, hook_name: str | None, workspaces: Sequence[str], home: str,
    explicit: Sequence[str] = (),
) -> Discovery:  # fmt: skip
    """Every level Codex reads (module docstring), in Codex's order; what it would not
    run, or cannot be read, as `Skipped` with the reason.

    With sandboxrun's forwarding hooks in requirements.toml and `allow_managed_hooks_only`
    (`install --agent codex --managed`), Codex itself runs only the managed levels (the
    requirements' hooks and the system layer: `is_managed` in discovery.rs), and the
    forwarders run `sandboxrun run`: then the user and project hooks are the ones to run,
    and the managed ones, the forwarders first (no recursion), are Codex's own."""
    roots = list(workspaces)
    project = project_root(roots[0], home, ".git")
    skipped: list[Skipped] = []
    found: list[HookSpec] = []
    user_dir = os.path.join(home, dialect.user_dir)
    system = SYSTEM_DIR
    states = _states(os.path.join(user_dir, "config.toml"))
    levels = _levels(explicit, system, user_dir, project, roots[0])
    managed_only, managed = _requirements(os.path.join(system, "requirements.toml"), skipped)
    forwarding = managed_only and managed is not None and _forwarders(managed[1])
    if managed is not None:
        path, table, folder = managed
        if forwarding:
            why = "managed: Codex runs these itself (sandboxrun's forwarding hooks are here)"
            skipped.append(Skipped(escape_name(path), "managed", why))
        else:
            table = {k: _not_forwarders(v) for k, v in table.items()}  # no recursion
            template = _template(dialect, "managed", project, roots, folder)
            found += _specs(dialect, {"hooks": table}, path, hook_name, template, skipped, {})
    read: set[str] = set()
    for folder, source, mount in levels:
        for path, data in _layer_files(folder, source, skipped):
            if os.path.realpath(path) in read:
                continue  # the project is $HOME: its files are the user's
            read.add(os.path.realpath(path))
            if managed_only and not forwarding and source != "system":
                why = "allow_managed_hooks_only in requirements.toml: Codex runs only managed hooks"
                skipped.append(Skipped(escape_name(path), source, why))
                continue
            if forwarding and source == "system":
                why = "managed: Codex runs these itself, beside sandboxrun's forwarding hooks"
                skipped.append(Skipped(escape_name(path), source, why))
                continue
            template = _template(dialect, source, project, roots, mount)
            installed = recorded(home, path, source)
            found += _specs(dialect, data, path, hook_name, template, skipped, states, installed)
    return Discovery(tuple(found), tuple(skipped))


def _forwarders(table: Mapping[str, Any]) -> bool:
    """Whether the requirements' managed hooks hold a forwarding hook of sandboxrun's."""
    groups = [g for v in table.values() if isinstance(v, list) for g in v]
    return any(_has_forwarder(g) for g in groups)


def _has_forwarder(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(is_forwarder(h) for h in hooks)


def _not_forwarders(groups: Any) -> Any:
    """A managed event's groups less sandboxrun's forwarders (recognised by shape: only an
    administrator writes requirements.toml), each group's place kept for the state keys."""
    if not isinstance(groups, list):
        return groups
    return [{**g, "hooks": []} if _has_forwarder(g) else g for g in groups]


def _levels(
    explicit: Sequence[str], system: str, user_dir: str, project: str, cwd: str
) -> list[tuple[str, str, str | None]]:
    """(folder or file, source, folder to mount) in Codex's order, lowest first."""
    if explicit:
        out: list[tuple[str, str, str | None]] = []
        for given in explicit:
            path = os.path.normpath(given)
            source = source_of(path, [project], "explicit").replace("workspace", "project")
            out.append((path, source, os.path.dirname(path) if os.path.isfile(path) else path))
        return out
    levels: list[tuple[str, str, str | None]] = [
        (system, "system", None),
        (user_dir, "user", os.path.join(user_dir, "hooks")),  # never ~/.codex: auth.json
    ]
    return levels + [(f, "project", None) for f in project_folders(project, cwd)]


def project_folders(project: str, cwd: str) -> list[str]:
    """Each `.codex` folder Codex reads as a project layer: the project root's down to
    the cwd's (`load_project_layers`)."""
    folder, chain = os.path.abspath(cwd), []
    while True:
        chain.append(os.path.join(folder, ".codex"))
        if folder == project or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    return chain[::-1]


def _layer_files(
    folder: str, source: str, skipped: list[Skipped]
) -> list[tuple[str, dict[str, Any]]]:
    """(file, {"hooks": table}) of a layer's hooks.json and config.toml [hooks]; an
    explicit file alone."""
    if os.path.isfile(folder):
        candidates = [folder]
    else:
        candidates = [os.path.join(folder, "hooks.json"), os.path.join(folder, "config.toml")]
    out = []
    for path in candidates:
        data, problem = _toml_hooks(path) if path.endswith(".toml") else read_json(path, False)
        if problem is None and data is not None:
            problem = _shape(data.get("hooks"))
            if problem:
                problem += ": Codex skips this whole file"
        if problem is not None:
            skipped.append(unreadable(escape_name(path), source, problem))
        elif data:
            out.append((path, {"hooks": data.get("hooks")}))
    return out


def _toml(path: str) -> tuple[dict[str, Any] | None, str | None]:
    raw, problem = read_regular(path)
    if raw is None:
        return None, problem
    try:
        return tomllib.loads(raw.decode("utf-8")), None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, f"not valid TOML: {str(exc)[:100]}"


def _toml_hooks(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """config.toml's `[hooks]` events (its `state` table is not an event)."""
    data, problem = _toml(path)
    if data is None:
        return None, problem
    table = data.get("hooks")
    if not isinstance(table, dict):
        return ({}, None) if table is None else (None, "hooks: must be a table")
    return {"hooks": {k: v for k, v in table.items() if k != "state"}}, None


def _requirements(
    path: str, skipped: list[Skipped]
) -> tuple[bool, tuple[str, dict[str, Any], str | None] | None]:
    """(allow_managed_hooks_only, (file, managed hooks table, managed_dir) or None)."""
    data, problem = _toml(path)
    if problem is not None:
        skipped.append(unreadable(escape_name(path), "managed", problem))
    if not data:
        return False, None
    only = data.get("allow_managed_hooks_only") is True
    table = data.get("hooks")
    if not isinstance(table, dict):
        return only, None
    folder = table.get("managed_dir")
    events = {k: v for k, v in table.items() if k not in ("managed_dir", "windows_managed_dir")}
    problem = _shape(events)
    if problem:
        skipped.append(unreadable(escape_name(path), "managed", f"{problem}: Codex skips these"))
        return only, None
    mount = folder if isinstance(folder, str) and os.path.isabs(folder) else None
    return only, (path, events, mount)


def _states(config: str) -> dict[str, Any]:
    """`[hooks.state]` of the user's config.toml: per-hook `enabled`, keyed by
    `<file>:<event_label>:<group>:<handler>`."""
    data, _problem = _toml(config)
    hooks = data.get("hooks") if data else None
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


_HANDLER_FIELDS: dict[str, dict[str, Check]] = {
    "command": {"command": lambda v: isinstance(v, str), "commandWindows": STR,
                "command_windows": STR, "timeout": _opt(lambda v: _u64(v)),
                "timeoutSec": _opt(lambda v: _u64(v)), "async": BOOL, "statusMessage": STR,
                "additionalContextLimit": _opt(lambda v: _u64(v))},
    "mcp_tool": {"server": lambda v: isinstance(v, str), "tool": lambda v: isinstance(v, str)},
    "prompt": {},
    "agent": {},
}  # fmt: skip


def _u64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64


def _shape(table: Any) -> str | None:
    """Why Codex's serde rejects this hooks table (it then skips the whole file)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        return "hooks: must be an object mapping event names to lists"
    for event, groups in table.items():
        if event not in HOOK_NAMES:
            continue  # not a Codex event: serde ignores the key (reported by `_entries`)
        if not isinstance(groups, list):
            return f"hooks.{event}: must be a list"
        for i, group in enumerate(groups):
            where = f"hooks.{event}[{i}]"
            if not isinstance(group, dict) or not STR(group.get("matcher")):
                return f"{where}: must be an object with a string matcher"
            if not isinstance(group.get("hooks", []), list):
                return f"{where}.hooks: must be a list"
            for j, hook in enumerate(group.get("hooks", [])):
                kind = hook.get("type") if isinstance(hook, dict) else None
                fields = _HANDLER_FIELDS.get(kind) if isinstance(kind, str) else None
                if fields is None:
                    return f"{where}.hooks[{j}]: type must be command, prompt, agent or mcp_tool"
                for key, check in fields.items():
                    if key in hook and not check(hook[key]):
                        return f"{where}.hooks[{j}].{key}: invalid value"
                if kind == "command" and "command" not in hook:
                    return f"{where}.hooks[{j}]: has no command"
    return None


def _template(
    dialect: ClaudeDialect, source: str, project: str, roots: Sequence[str], mount: str | None
) -> HookSpec:
    extra = [mount] if mount and os.path.isdir(mount) else []
    return HookSpec(
        hook_name="", name="", source=source, argv=(), workdir=roots[0],
        mounts=unique_mounts([project, *roots, *extra]), env=project_env(dialect, project),
    )  # fmt: skip


_INDEX = re.compile(r"\[(\d+)\]\.hooks\[(\d+)\]$")
_LABELS = {name: re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() for name in HOOK_NAMES}


def _specs(
    dialect: ClaudeDialect, data: dict[str, Any], path: str, hook_name: str | None,
    template: HookSpec, skipped: list[Skipped], states: Mapping[str, Any],
    installed: Installed | None = None,
) -> list[HookSpec]:  # fmt: skip
    """The hooks of one file as Codex runs them: in `sh -lc`, with Codex's timeouts,
    minus those the user's `[hooks.state]` turned off. `installed`: install's record of
    the file (a wrapper it wrote runs its original: there is no sandboxrun inside)."""
    shown = escape_name(path)
    out = []
    problems: list[str] = []
    table = _as_claude(data, problems)
    skipped += [unreadable(shown, template.source, why) for why in problems]
    for item in _entries(dialect, table, hook_name, template, installed):
        if isinstance(item, str):
            skipped.append(unreadable(shown, template.source, item))
            continue
        spec, where = item
        found = _INDEX.search(where)
        key = f"{path}:{_LABELS[spec.hook_name]}:{found[1]}:{found[2]}" if found else ""
        state = states.get(key)
        off = isinstance(state, dict) and state.get("enabled") is False
        if off and template.source != "managed":  # a managed hook cannot be turned off
            why = f"{where}: disabled in config.toml [hooks.state]"
            skipped.append(Skipped(shown, template.source, why))
            continue
        if spec.kind != "command":  # listed with the reason, never run
            skipped.append(
                Skipped(shown, template.source, f"{where}: {not_run_reason(spec)}", spec)
            )
            continue
        out.append(replace(spec, argv=(*dialect.shell, spec.name), timeout=_timeout(spec)))
    return out


def _timeout(spec: HookSpec) -> float | None:
    return None if spec.timeout is None and spec.hook_name not in SHORT_EVENTS else \
        float(deadline(spec.hook_name, spec.timeout))  # fmt: skip


def deadline(event: str, timeout: float | None) -> int:
    """Codex's seconds for a handler: at least 1, 600 without a timeout; SessionEnd and
    Interrupt 1 by default, at most 3."""
    if event in SHORT_EVENTS:
        return min(max(int(timeout or 1), 1), 3)
    return DEFAULT_TIMEOUT if timeout is None else max(int(timeout), 1)


def _as_claude(data: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """The table with each handler reduced to what Codex reads, in the Claude handler's
    terms: Codex ignores `args`, `shell`, `if`, `once`; its `timeout` may be 0 (read as
    1) or spelled `timeoutSec`. A group whose matcher does not compile is emptied (its
    place kept for `[hooks.state]` keys) and named in `problems`: Codex skips it,
    whoever configured it (discovery.rs `validate_matcher_pattern`)."""
    table = data.get("hooks") or {}
    out: dict[str, Any] = {}
    for event, groups in table.items():
        if event not in HOOK_NAMES:
            out[event] = groups
            continue
        out[event] = []
        for i, group in enumerate(groups):
            matcher = group.get("matcher")
            hooks = [_handler(h) for h in group.get("hooks", [])]
            if event in MATCH_FIELDS and _broken(matcher):
                problems.append(f"hooks.{event}[{i}].matcher: invalid regular expression "
                                f"{matcher!r}: Codex skips this group")  # fmt: skip
                matcher, hooks = None, []
            out[event].append({"matcher": matcher, "hooks": hooks})
    return {"hooks": out}


def _broken(matcher: str | None) -> bool:
    if matcher is None or matches_all(matcher) or SIMPLE_MATCHER.fullmatch(matcher):
        return False
    return invalid(matcher) is not None  # never compiled here: it could be huge


def _handler(hook: dict[str, Any]) -> dict[str, Any]:
    kind = hook["type"]
    if kind != "command":
        label = hook.get("tool") if kind == "mcp_tool" else None
        return {"type": kind, **({"tool": label} if isinstance(label, str) else {})}
    handler: dict[str, Any] = {"type": "command", "command": hook["command"]}
    timeout = hook.get("timeout", hook.get("timeoutSec"))
    if timeout is not None:
        handler["timeout"] = min(max(timeout, 1), 3600)
    if hook.get("async") is True:
        handler["async"] = True
    return handler
