"""Where GitHub Copilot CLI hooks are configured: its files, read and checked.

Source: github/docs `content/copilot/reference/hooks-reference.md` (commit 05da5bc3,
"Hooks locations", "Hook configuration format", "Disable all hooks"). The CLI itself is
closed source (npm `@github/copilot` ships a compiled binary), so the docs are the source.

Levels, in the order the CLI loads and runs them ("policy, then user, then project,
then plugins"; every entry of every level runs, nothing is merged):

- `policy`: `/etc/github-copilot/policy.d/*.json`, alphabetical; a file must be owned by
  root and not group- or world-writable, else the CLI skips it (so do we, naming it).
  `disableAllHooks` elsewhere never turns these off.
- `user`: `~/.copilot/hooks/*.json` (alphabetical), then the `hooks` of
  `~/.copilot/settings.json`. `$COPILOT_HOME` moves that folder for the agent; a dialect
  never reads the environment, so the account's home is used (`list` says where it looked).
- `project`/`local` (the repository's: untrusted): `.github/hooks/*.json`, then the
  `hooks` of `.github/copilot/settings.json`, `.github/copilot/settings.local.json`,
  `.claude/settings.json`, `.claude/settings.local.json`, all at the repository root.
- plugins: not read (where the CLI keeps installed plugins is not documented).

A file is `{"version": 1, "hooks": {"<event>": [entry, ...]}}`. A `version` other than 1,
invalid JSON or an event whose value is not a list rejects the whole file; a missing
`version` is read as 1 (public repositories ship such files, e.g.
Azure/azure-sdk-for-python `.github/hooks/hooks.json`; unconfirmed what the CLI does).
A malformed entry drops only itself in a hooks folder's file, but the whole `hooks` of a
settings file (the docs: "inline hooks remain strict"). `disableAllHooks: true` turns off
its own file; in the repository's `.github/copilot/settings(.local).json` it turns off
every hook for the agent, but here only the repository's own (a cloned repository must
not switch off the user's guards).

An entry is `{"type": "command", "bash" | "command" | "exec"+"args", "cwd", "env",
"timeoutSec" | "timeout", "matcher"}`; `.claude/settings*.json` (and Claude-format plugin
files) nest entries as `{"matcher", "hooks": [...]}`, read the same. `bash` (else
`command`) runs as `bash -c`; `exec` runs directly with `args`; a `powershell`-only, an
`http` and a `prompt` entry are listed and never run.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._types import Discovery, HookSpec, Skipped
from ..base import entry_env, escape_name, source_of, unique_mounts
from ..claude.handler import MAX_TIMEOUT, brief, unicode_ok
from ..claude.settings import project_root
from ..files import read_json, unreadable
from .events import HOOK_NAMES, MATCH_FIELDS, check_matcher
from .installed import Installed, installed

POLICY_DIR = "/etc/github-copilot/policy.d"
# Set by the CLI for every hook (1.0.102; not in its docs): the project root (under both
# names: CLAUDE_PROJECT_DIR for the Claude-style hooks it also runs), and the folder of
# the file the hook is configured in. Inside, the root mounted and that folder.
PROJECT_DIR_VAR = "COPILOT_PROJECT_DIR"
PROJECT_VARS = (PROJECT_DIR_VAR, "CLAUDE_PROJECT_DIR")
HOOK_DIR_VAR = "COPILOT_HOOK_DIR"
DEFAULT_TIMEOUT = 30.0  # seconds ("timeoutSec ... Default: 30")
_TRUSTED = frozenset({"policy", "user", "explicit"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_RUN = {"http": "an http hook (POSTs the event to a URL)",
            "prompt": "a prompt hook (submits text as the user)"}  # fmt: skip


def config_files(
    project: str, home: str, policy_dir: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, bool, str | None]]:
    """(file, source, strict, hooks folder to mount) in the CLI's order. `strict`: a
    settings file, whose `hooks` is rejected whole for one bad entry. Explicit files (or
    folders of `*.json`) replace every level."""
    if explicit:
        found: list[tuple[str, str, bool, str | None]] = []
        for given in map(os.path.normpath, explicit):
            files = json_files(given) if os.path.isdir(given) else [given]
            source = source_of(given, [project], "explicit").replace("workspace", "project")
            found += [(f, source, False, os.path.dirname(f)) for f in files]
        return found
    user = os.path.join(home, ".copilot")
    user_hooks = os.path.join(user, "hooks")
    repo = os.path.join(project, ".github")
    out: list[tuple[str, str, bool, str | None]] = []
    out += [(f, "policy", False, None) for f in json_files(policy_dir)]
    out += [(f, "user", False, user_hooks) for f in json_files(user_hooks)]
    out.append((os.path.join(user, "settings.json"), "user", True, None))
    out += [(f, "project", False, None) for f in json_files(os.path.join(repo, "hooks"))]
    for folder in (os.path.join(repo, "copilot"), os.path.join(project, ".claude")):
        out.append((os.path.join(folder, "settings.json"), "project", True, None))
        out.append((os.path.join(folder, "settings.local.json"), "local", True, None))
    return out


def hook_dirs(project: str, home: str, policy_dir: str = POLICY_DIR,
              project_only: bool = False) -> list[str]:  # fmt: skip
    """The folders of the files Copilot reads hooks from that `install --agent copilot`
    rewrites: what `exec --hook-dir` may name (only the repository's: `project_only`)."""
    ours = [os.path.join(project, ".github", "hooks"), os.path.join(project, ".github", "copilot")]
    if project_only:
        return ours
    user = os.path.join(home, ".copilot")
    return [*ours, os.path.join(user, "hooks"), user, policy_dir]


def json_files(path: str) -> list[str]:
    """The `*.json` files of a folder, alphabetical (none when it is missing)."""
    try:
        names = sorted(n for n in os.listdir(path) if n.endswith(".json"))
    except OSError:
        return []
    return [os.path.join(path, n) for n in names]


def _policy_problem(path: str) -> str | None:
    """Why the CLI would not load a policy file (its docs: root-owned, not writable by
    group or others), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    if st.st_uid != 0:
        return "a policy file must be owned by root: not loaded (as the agent)"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "a policy file must not be group- or world-writable: not loaded (as the agent)"
    return None


def discover(
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
    policy_dir: str = POLICY_DIR,
) -> Discovery:
    """The hooks for `hook_name` (every event if None), and what was skipped and why."""
    roots = list(workspaces)
    project = project_root(roots[0], home, ".github")
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    read: set[str] = set()
    workspace_off = False
    for path, source, strict, folder in config_files(project, home, policy_dir, explicit):
        real = os.path.realpath(path)
        if real in read:  # e.g. the project is the home: one file, read once
            continue
        read.add(real)
        shown = escape_name(path)
        problem = _policy_problem(path) if source == "policy" else None
        data, problem = (None, problem) if problem else read_json(path, must_exist=False)
        if problem is not None:
            skipped.append(unreadable(shown, source, problem))
        if data is None:
            continue
        if data.get("disableAllHooks") is True:
            whose = "its own hooks"
            if strict and source in ("project", "local"):
                workspace_off, whose = True, "the repository's hooks (never yours or policy's)"
            skipped.append(Skipped(shown, source, f"disableAllHooks is true: {whose} off"))
            continue
        version = data.get("version", 1)
        if version != 1 or isinstance(version, bool):
            why = f"version must be 1, not {brief(version)}: the whole file is rejected"
            skipped.append(unreadable(shown, source, why))
            continue
        mounts = unique_mounts([project, *roots, *([folder] if folder else [])])
        env = {**dict.fromkeys(PROJECT_VARS, project), HOOK_DIR_VAR: os.path.dirname(path)}
        template = HookSpec(hook_name="", name="", source=source, argv=(), workdir=roots[0],
                            mounts=mounts, env=env)  # fmt: skip
        lookup = installed(home, path, source not in _TRUSTED)
        found, problems, notes = _hooks(data, hook_name, template, project, lookup)
        if strict and problems:
            problems.append("inline hooks are strict: none of this file's hooks is loaded")
            found = [h for h in found if h.kind != "command"]  # still listed, never run
        skipped += [unreadable(shown, source, p) for p in problems]
        skipped += [Skipped(shown, source, n) for n in notes]
        for spec in found:
            if spec.kind == "command":
                hooks.append(spec)
            else:
                skipped.append(Skipped(shown, source, _not_run(spec), spec))
    if workspace_off:
        hooks = [h for h in hooks if h.source in _TRUSTED]
        skipped = [s for s in skipped if s.spec is None or s.source in _TRUSTED]
    return Discovery(tuple(hooks), tuple(skipped))


def _not_run(spec: HookSpec) -> str:
    if spec.kind == "powershell":
        return f"{spec.hook_name}: not run: a powershell-only hook (no PowerShell in the sandbox)"
    what = _NOT_RUN.get(spec.kind, f"a hook of type {spec.kind!r}, unknown to Copilot")
    return f"{spec.hook_name}: not run: {what}; sandboxrun runs only command hooks"


def _hooks(
    data: Mapping[str, Any], wanted: str | None, template: HookSpec, project: str,
    lookup: Installed | None = None,
) -> tuple[list[HookSpec], list[str], list[str]]:  # fmt: skip
    """(specs, problems that drop an entry, notes on entries that still run).
    `lookup`: install's record of the file (a wrapper runs its original)."""
    table = data.get("hooks")
    if table is None:
        return [], [], []
    if not isinstance(table, dict):
        return [], ["hooks: must be an object mapping event names to lists"], []
    found: list[HookSpec] = []
    problems: list[str] = []
    notes: list[str] = []
    items: list[tuple[str, Any, str]] = []  # (JSON path, entry, event)
    for event, entries in table.items():
        where = f"hooks.{event}" if event.isidentifier() else f"hooks[{json.dumps(event)}]"
        if event not in HOOK_NAMES:
            near = next((n for n in HOOK_NAMES if n.lower() == event.lower()), None)
            hint = f" (did you mean {near}?)" if near else ""
            notes.append(f"{where}: unknown event name{hint}: never fired")
            continue
        if not isinstance(entries, list):
            return [], [f"{where}: must be a list: the whole file is rejected"], []
        if wanted is not None and event != wanted:
            continue
        for i, entry in enumerate(entries):
            at = f"{where}[{i}]"
            if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                matcher = entry.get("matcher")  # the Claude shape: {matcher, hooks: [...]}
                for j, inner in enumerate(entry["hooks"]):
                    if isinstance(inner, dict) and matcher is not None and "matcher" not in inner:
                        inner = {**inner, "matcher": matcher}
                    items.append((f"{at}.hooks[{j}]", inner, event))
            else:
                items.append((at, entry, event))
    for at, entry, event in items:
        mine: list[str] = []
        item = _entry(entry, event, template, project, mine, lookup)
        notes += [f"{at}: {n}" for n in mine]
        if isinstance(item, str):
            problems.append(f"{at}: {item}")
        elif item is not None:
            found.append(item)
    return found, problems, notes


def _entry(
    hook: Any, event: str, template: HookSpec, project: str, notes: list[str],
    lookup: Installed | None = None,
) -> HookSpec | str | None:  # fmt: skip
    """One entry's spec (a not-run one has `kind` != "command"), or why it is invalid, or
    None for an entry the agent skips without rejecting its file (said in `notes`)."""
    if not isinstance(hook, dict):
        return "must be an object"
    kind = hook.get("type", "command")
    matcher = hook.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str) or not unicode_ok(matcher):
            return "matcher must be a string"
        if event in MATCH_FIELDS:
            problem = check_matcher(event, matcher, template.source)
            if problem:  # the agent skips that entry; its file still loads
                notes.append(f"matcher: {problem}")
                return None
    spec = replace(template, hook_name=event, matcher=matcher)
    if kind in _NOT_RUN:
        label = hook.get("url") or hook.get("prompt") or kind
        name = label[:200] if isinstance(label, str) and unicode_ok(label) else kind
        return replace(spec, name=f"{kind}: {name}", kind=kind)
    if kind != "command":  # e.g. a Claude `agent` handler in .claude/settings.json
        name = kind if isinstance(kind, str) and unicode_ok(kind) else "?"
        return replace(spec, name=f"type {name[:40]}", kind=name[:40] or "?")
    command = _command(hook)
    original = lookup(hook) if lookup is not None and not isinstance(command, str) else None
    if original is not None:  # a wrapper `install` recorded: its original runs here
        program, args = original
        argv = ("bash", "-c", program) if args is None else (program, *args)
        command = (program if args is None else " ".join(argv)), argv
    if isinstance(command, str):
        return command
    name, argv = command
    if not argv:
        return replace(spec, name=name, kind="powershell")
    options = _options(hook, template, project, notes, name)
    if isinstance(options, str):
        return options
    return replace(spec, name=name, argv=argv, **options)


def _text(value: Any) -> bool:
    if not isinstance(value, str) or "\0" in value:
        return False
    return bool(value.strip()) and unicode_ok(value)


def _command(hook: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | str:
    """(name, argv) of an entry; argv () for one that has only a powershell command."""
    program = hook.get("exec")
    shells = [k for k in ("bash", "powershell", "command") if k in hook]
    if program is not None:
        if shells:
            return f"exec cannot be combined with {', '.join(shells)}"
        args = hook.get("args", [])
        if not _text(program):
            return "exec must be a non-empty string"
        if not isinstance(args, list) or not all(_text(a) or a == "" for a in args):
            return "args must be a list of strings"
        argv = (program, *args)
        return " ".join(argv), argv
    for key in ("bash", "command"):  # `command` is the cross-platform fallback
        if key in hook:
            if not _text(hook[key]):
                return f"{key} must be a non-empty command string"
            return hook[key], ("bash", "-c", hook[key])
    if "powershell" in hook and _text(hook["powershell"]):
        return hook["powershell"], ()
    return "has no bash, command or exec"


def _options(
    hook: Mapping[str, Any], template: HookSpec, project: str, notes: list[str], name: str
) -> dict[str, Any] | str:
    """timeout (seconds: timeoutSec, else its alias timeout), cwd and env, checked;
    what is left out of a hook that still runs is added to `notes`."""
    out: dict[str, Any] = {}
    key = "timeoutSec" if "timeoutSec" in hook else "timeout"
    timeout = hook.get(key)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            return f"{key} must be a number of seconds, not {brief(timeout)}"
        if not 0 < timeout <= MAX_TIMEOUT:
            why = f"{key} must be more than 0 and at most {MAX_TIMEOUT} seconds"
            return f"{why}, not {brief(timeout)}"
        out["timeout"] = float(timeout)
    cwd = hook.get("cwd")
    if cwd is not None:
        if not _text(cwd):
            return "cwd must be a non-empty string"
        # Relative to the repository root (the docs); it must be a folder we mount.
        path = os.path.normpath(os.path.join(project, cwd))
        if not any(path == m or path.startswith(m.rstrip("/") + "/") for m in template.mounts):
            return f"cwd {brief(cwd)} is outside what the sandbox mounts: not run"
        out["workdir"] = path
    env = hook.get("env")
    if env is not None:
        if not isinstance(env, dict):
            return "env must be an object of strings"
        kept: dict[str, str] = {}
        for var, value in env.items():
            if not _NAME.fullmatch(var) or not isinstance(value, str) or "\0" in value:
                return f"env {brief(var)}: a variable name and a string value, please"
            if "$" in value:  # the agent expands it from its own environment: never ours
                notes.append(
                    f"env {var}: not set (its value names a variable; the"
                    " agent's environment is not expanded into a sandboxed hook's)"
                )
                continue
            kept[var] = value
        kept = entry_env(template.env, kept, name)  # never over the sandbox's own
        out["env"] = {**template.env, **kept}
        out["entry_env"] = kept  # pinned (`_review.fields`)
    return out
