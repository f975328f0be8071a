"""Where Gemini CLI's hooks are configured, read as the agent reads them.

Checked against google-gemini/gemini-cli at 5411f113 (2026-08-21):
`packages/cli/src/config/settings.ts` (`getSystemSettingsPath`, `getSystemDefaultsPath`,
`mergeSettings`, `_doLoadSettings`), `settingsSchema.ts` (`hooks.*`: `MergeStrategy.CONCAT`;
`hooksConfig.enabled` default true, `hooksConfig.disabled`), `extension-manager.ts`
(`loadExtensionHooks`), `packages/core/src/hooks/{hookRegistry,hookPlanner,types}.ts`.

- Levels: `system-defaults.json` and `settings.json` in `/etc/gemini-cli/`, the user's
  `~/.gemini/settings.json`, the project's `<cwd>/.gemini/settings.json` (not read when
  the cwd is the home), then each extension's `<ext>/hooks/hooks.json` under
  `~/.gemini/extensions/`. Settings files are JSON with comments (`stripJsonComments`).
  The agent concatenates the `hooks` lists in the order system-defaults, user, project,
  system, then extensions; that is the order here, but for the project's hooks, which come
  last (see `discover`). (The `GEMINI_CLI_SYSTEM_SETTINGS_PATH`
  override is an environment variable: a dialect never reads the environment.)
- An entry is `{"matcher", "sequential", "hooks": [{"type": "command", "command", "name",
  "description", "timeout" (milliseconds, default 60000), "env"}]}`. The command runs as
  `bash -c COMMAND` in the event's `cwd`, after the agent textually replaces
  `$GEMINI_PROJECT_DIR`, `$GEMINI_CWD` and `$CLAUDE_PROJECT_DIR` with the shell-quoted cwd
  (done here too; `$GEMINI_SESSION_ID` and `$GEMINI_PLANS_DIR` are left to the shell).
  Extensions' `${extensionPath}`, `${workspacePath}`, `${/}` and `${pathSeparator}` are
  replaced as the agent hydrates them.
- `sequential: true` on any entry of an event makes the agent run all that event's hooks
  in turn, each reading the input as the earlier ones changed it (`HookSpec.sequential`,
  `dialect.next_input`); otherwise they run side by side.
- `hooksConfig.enabled: false` turns hooks off and `hooksConfig.disabled` lists hook names
  (`name`, else the command) not to run. The agent merges these across levels, so a
  project file could turn the user's guard off: here a project file turns off only the
  project's own hooks, never the user's, system or extension hooks.
- Dedup: the agent runs one hook per `name:command` key (the first in order). Here a key
  repeated runs once when both entries have the same matcher and the same trust;
  otherwise both stay (a project copy never stands in for a trusted one).
- Trust: Gemini itself runs no settings hook at all in a folder it does not trust (its
  folder trust, on by default) and warns once about a project hook that is new. Here the
  project's hooks are found and run sandboxed, as untrusted (`dialect.workspace_json`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._errors import ConfigError
from ..._types import Discovery, HookSpec, Skipped
from ..._wrapped import Record, check_in, is_check
from ..base import entry_env, escape_name, from_repository, source_of, unique_mounts
from ..claude.handler import CHECK_SKIPPED, MAX_TIMEOUT, SESSION_CHECK, brief, unicode_ok
from ..files import Note, read_json, unreadable
from ..patterns import invalid

# `getSystemSettingsPath`'s folder (system settings and system defaults) per platform.
SYSTEM_DIR = {
    "darwin": "/Library/Application Support/GeminiCli",
    "win32": "C:\\ProgramData\\gemini-cli",
}.get(sys.platform, "/etc/gemini-cli")
USER_DIR = ".gemini"
PROJECT_VARS = ("GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR")
# Keys of `hooks` that are not events (`HOOKS_CONFIG_FIELDS`).
CONFIG_FIELDS = frozenset({"enabled", "disabled", "notifications"})
# Tool events match `tool_name` by regex; these match their trigger exactly.
TOOL_EVENTS = frozenset({"BeforeTool", "AfterTool"})
TRIGGER_FIELDS = {"SessionStart": "source", "SessionEnd": "reason", "PreCompress": "trigger"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_ENV = 64  # entries of one hook's `env`
MAX_ENV_VALUE = 8192  # characters of one value


def settings_files(
    project: str, home: str, explicit: Sequence[str] = (), system_dir: str = SYSTEM_DIR
) -> list[tuple[str, str]]:
    """(settings file, source) in the agent's concatenation order."""
    if explicit:
        found = []
        for given in explicit:
            path = os.path.normpath(given)
            if os.path.isdir(path):
                path = os.path.join(path, "settings.json")
            found.append(
                (path, source_of(path, [project], "explicit").replace("workspace", "project"))
            )
        return found
    files = [
        (os.path.join(system_dir, "system-defaults.json"), "system"),
        (os.path.join(home, USER_DIR, "settings.json"), "user"),
    ]
    if os.path.realpath(project) != os.path.realpath(home):  # `isWorkspaceHomeDir`
        files.append((os.path.join(project, USER_DIR, "settings.json"), "project"))
    files.append((os.path.join(system_dir, "settings.json"), "system"))
    return files


def discover(
    hook_names: Sequence[str], hook_name: str | None, workspaces: Sequence[str], home: str,
    explicit: Sequence[str] = (), system_dir: str = SYSTEM_DIR,
) -> Discovery:  # fmt: skip
    """The hooks for `hook_name` (every event if None) and what was skipped, and why."""
    project = workspaces[0]  # Gemini's project is its working directory, not a parent
    found: list[tuple[HookSpec, str, str]] = []
    skipped: list[Skipped] = []
    off: dict[str, bool] = {}  # hooksConfig.enabled per source, the later level winning
    names_off: dict[str, set[str]] = {}  # source -> hook names hooksConfig.disabled lists
    read: set[str] = set()
    template = HookSpec(hook_name="", name="", source="", argv=(), workdir=project,
                        mounts=unique_mounts([project, *workspaces]),
                        env={v: project for v in PROJECT_VARS})  # fmt: skip
    levels: list[tuple[str, str, dict[str, Any], dict[str, str]]] = []
    for path, source in settings_files(project, home, explicit, system_dir):
        real = os.path.realpath(path)
        if real in read:
            continue
        read.add(real)
        data, problem = load(path, must_exist=source == "explicit")
        if problem is not None:
            skipped.append(unreadable(escape_name(path), source, problem))
        if data is not None:
            levels.append((path, source, data, {}))
    if not explicit:
        levels += _extensions(home, project, skipped)
    for path, source, data, hydrate in levels:
        shown = escape_name(path)
        config = data.get("hooksConfig") if "hooksConfig" in data else None
        _switches(config, source, shown, off, names_off, skipped)
        mounts = template.mounts
        if source == "extension":
            mounts = unique_mounts([*mounts, hydrate["extensionPath"]])
        base = replace(template, source=source, mounts=mounts)
        unwrap = installed(home, path, source) if source != "extension" else None
        for item in _entries(hook_names, data.get("hooks"), hook_name, base, hydrate, unwrap):
            if isinstance(item, str):
                skipped.append(unreadable(shown, source, item))
            else:
                found.append((item[0], shown, item[1]))
    if any(on is False for s, on in off.items() if not from_repository(s)):
        return Discovery((), tuple(skipped))  # the user (or the admin) turned hooks off
    kept = []
    for spec, shown, where in found:
        own_off = off.get(spec.source) is False and from_repository(spec.source)
        listed = [s for s, names in names_off.items() if spec.name in names
                  and (not from_repository(s) or from_repository(spec.source))]  # fmt: skip
        if own_off or listed:
            why = "hooksConfig.enabled is false" if own_off else "in hooksConfig.disabled"
            skipped.append(Skipped(shown, spec.source, f"{where}: not run: {why}"))
        else:
            kept.append((spec, shown, where))
    # The project's hooks last: a repository that configures dozens of hooks can then push
    # only its own past `max_hooks`, never the admin's or an extension's (which the agent
    # lists after it). Their rewrites are dropped anyway, so little else changes.
    kept.sort(key=lambda found: from_repository(found[0].source))
    return Discovery(tuple(_once(kept, skipped)), tuple(skipped))


def _switches(
    config: Any, source: str, shown: str, off: dict[str, bool], names_off: dict[str, set[str]],
    skipped: list[Skipped],
) -> None:  # fmt: skip
    """Read one level's `hooksConfig` (enabled, disabled) into `off` and `names_off`."""
    if config is None:
        return
    if not isinstance(config, dict):
        skipped.append(Skipped(shown, source, "hooksConfig: must be an object; ignored"))
        return
    enabled = config.get("enabled")
    if isinstance(enabled, bool):
        # Trusted levels come in the agent's precedence order (system-defaults, user,
        # system): the last one that says wins, as `mergeSettings` has it.
        off["trusted" if not from_repository(source) else source] = enabled
        if enabled is False:
            what = "this workspace's hooks" if from_repository(source) else "every hook"
            skipped.append(Skipped(shown, source, f"hooksConfig.enabled is false: {what} off"))
    elif enabled is not None:
        skipped.append(Skipped(shown, source, "hooksConfig.enabled must be true or false; ignored"))
    disabled = config.get("disabled")
    if isinstance(disabled, list):
        names_off.setdefault(source, set()).update(n for n in disabled if isinstance(n, str))
    elif disabled is not None:
        skipped.append(Skipped(shown, source, "hooksConfig.disabled must be a list; ignored"))


def _extensions(
    home: str, project: str, skipped: list[Skipped]
) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """Each installed extension's `hooks/hooks.json`, with what hydrates its strings. An
    extension is the user's own install (`~/.gemini/extensions/<name>/`); one a symlink
    leads out of that folder is not read. (Whether the user disabled an extension, in
    `extension-enablement.json`, is not read here: its hooks are listed and run.)"""
    root = os.path.join(home, USER_DIR, "extensions")
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    real_root = os.path.realpath(root)
    for name in names:
        folder = os.path.join(root, name)
        if not os.path.isfile(os.path.join(folder, "gemini-extension.json")):
            continue
        real = os.path.realpath(folder)
        if os.path.dirname(real) != real_root:
            skipped.append(
                Skipped(
                    escape_name(folder), "extension", "leads out of the extensions folder: not read"
                )
            )
            continue
        path = os.path.join(folder, "hooks", "hooks.json")
        data, problem = load(path, must_exist=False, comments=False)
        if problem is not None:
            skipped.append(unreadable(escape_name(path), "extension", problem))
        if data is None:
            continue
        if not isinstance(data.get("hooks"), dict):
            skipped.append(unreadable(escape_name(path), "extension", '"hooks" must be an object'))
            continue
        hydrate = {
            "extensionPath": folder,
            "workspacePath": project,
            "/": "/",
            "pathSeparator": "/",
        }
        out.append((path, "extension", {"hooks": data["hooks"]}, hydrate))
    return out


def _entries(
    hook_names: Sequence[str], table: Any, wanted: str | None, template: HookSpec,
    hydrate: Mapping[str, str], unwrap: Installed | None = None,
) -> list[tuple[HookSpec, str] | str]:  # fmt: skip
    """Each valid hook as (spec, JSON path), each invalid entry as 'path: why'."""
    if table is None:
        return []
    if not isinstance(table, dict):
        return ["hooks: must be an object mapping event names to lists"]
    out: list[tuple[HookSpec, str] | str] = []
    for event, entries in table.items():
        where = f"hooks.{event}" if str(event).isidentifier() else f"hooks[{json.dumps(event)}]"
        if event in CONFIG_FIELDS:
            continue
        if event not in hook_names:
            near = next((n for n in hook_names if n.lower() == event.lower()), None)
            hint = f" (did you mean {near}?)" if near else ""
            out.append(Note(f"{where}: unknown event name{hint}"))
            continue
        if wanted is not None and event != wanted:
            continue
        if not isinstance(entries, list):
            out.append(f"{where}: must be a list of matcher entries")
            continue
        for i, entry in enumerate(entries):
            out += _entry(entry, f"{where}[{i}]", event, template, hydrate, unwrap)
    return out


def _entry(
    entry: Any, where: str, event: str, template: HookSpec, hydrate: Mapping[str, str],
    unwrap: Installed | None = None,
) -> list[tuple[HookSpec, str] | str]:  # fmt: skip
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        return [f"{where}: must be an object with a hooks list"]
    matcher = entry.get("matcher")
    if matcher is not None and (not isinstance(matcher, str) or not unicode_ok(matcher)):
        return [f"{where}.matcher: must be a string"]
    out: list[tuple[HookSpec, str] | str] = []
    # A workspace pattern is judged where it is used (`patterns.search`): never dropped.
    if matcher is not None and event in TOOL_EVENTS and not from_repository(template.source):
        text = matcher.strip()
        error = invalid(text) if text not in ("", "*") else None
        if error is not None:  # the agent then compares the name exactly
            out.append(
                Note(
                    f"{where}.matcher: not a regular expression here ({error}):"
                    f" matches {text!r} exactly"
                )
            )
    sequential = entry.get("sequential") is True
    for j, hook in enumerate(entry["hooks"]):
        spec = handler(hook, event, replace(template, matcher=matcher, sequential=sequential),
                       hydrate, unwrap)  # fmt: skip
        out.append(
            f"{where}.hooks[{j}]: {spec}"
            if isinstance(spec, str)
            else (spec, f"{where}.hooks[{j}]")
        )
    return out


def handler(
    hook: Any, event: str, template: HookSpec, hydrate: Mapping[str, str] | None = None,
    unwrap: Installed | None = None,
) -> HookSpec | str:  # fmt: skip
    """One `{"type": "command", ...}` handler as a spec, or why it is not run. `unwrap`:
    install's record of the file (a wrapper it wrote runs its original: there is no
    sandboxrun in the sandbox; anything else, however shaped, runs as written)."""
    if not isinstance(hook, dict):
        return "must be an object"
    if hydrate:
        hook = _hydrate(hook, hydrate)
    kind = hook.get("type")
    if kind != "command":
        return f"type {brief(kind)}: not run (sandboxrun runs command hooks only)"
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    unwrapped = unwrap(command) if unwrap is not None else None
    if unwrapped == SESSION_CHECK[0]:
        return CHECK_SKIPPED
    command = unwrapped or command
    name = hook.get("name")
    if name is not None and not (isinstance(name, str) and unicode_ok(name)):
        return "name must be a string"
    fields: dict[str, Any] = {"hook_name": event, "name": name or command}
    timeout = hook.get("timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            return f"timeout must be a number of milliseconds, not {brief(timeout)}"
        if not 0 < timeout <= MAX_TIMEOUT * 1000:
            limit = MAX_TIMEOUT * 1000
            return f"timeout must be more than 0 and at most {limit} ms, not {brief(timeout)}"
        fields["timeout"] = float(timeout) / 1000  # milliseconds, converted once, here
    env = hook.get("env")
    extra: dict[str, str] = {}
    if env is not None:
        problem = _env(env)
        if problem:
            return problem
        # Gemini spreads the entry's `env` over its own GEMINI_PROJECT_DIR and
        # CLAUDE_PROJECT_DIR (`hookRunner.ts`, `executeCommandHook`); here ours stay.
        extra = entry_env(template.env, env, fields["name"])
    command = expand(command, template.workdir)
    return replace(template, argv=("bash", "-c", command), env={**template.env, **extra},
                   entry_env=extra, **fields)  # fmt: skip


# The original command of a wrapper `install` recorded, or None.
Installed = Callable[[str], str | None]


def installed(home: str, path: str, source: str) -> Installed:
    """The lookup of the wrappers `install` recorded for one settings file (`install
    --agent gemini`): a project's wrapper counts only with `--untrusted`, as install writes it."""
    record = Record(home)
    try:
        entries = record.entries(path)
    except ConfigError:
        entries = {}  # unreadable: nothing counts as installed, so nothing is unwrapped
    untrusted = from_repository(source)

    check = check_in(home, path) if source == "user" else None  # never a repository's

    def original(command: str) -> str | None:
        if is_check(check, {"command": command}):
            return SESSION_CHECK[0]
        if not entries:
            return None
        found = record.original(path, {"command": command}, untrusted, entries)
        return found[0] if found is not None and found[1] is None else None

    return original


def expand(command: str, cwd: str) -> str:
    """`expandCommand`: each project variable replaced by the shell-quoted `cwd`, in the
    text, before the shell reads it (so `$GEMINI_PROJECT_DIR/x.sh` is one word in a
    folder whose name holds a space)."""
    quoted = shlex.quote(cwd)
    for var in PROJECT_VARS:
        command = command.replace(f"${var}", quoted)
    return command


def _env(env: Any) -> str | None:
    """Why a hook's `env` map cannot be used, or None."""
    if not isinstance(env, dict):
        return "env must be an object of strings"
    if len(env) > MAX_ENV:
        return f"env has more than {MAX_ENV} entries"
    for key, value in env.items():
        if not _ENV_NAME.fullmatch(key):
            return f"env: {brief(key)} is not a variable name"
        if not isinstance(value, str) or "\0" in value or not unicode_ok(value):
            return f"env.{key} must be a string (no NUL)"
        if len(value) > MAX_ENV_VALUE:
            return f"env.{key} is longer than {MAX_ENV_VALUE} characters"
    return None


_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def _hydrate(value: Any, context: Mapping[str, str]) -> Any:
    """`recursivelyHydrateStrings`: `${name}` of a known name replaced, others left."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda m: context.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: _hydrate(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [_hydrate(v, context) for v in value]
    return value


def _once(found: list[tuple[HookSpec, str, str]], skipped: list[Skipped]) -> list[HookSpec]:
    """Gemini's dedup by `name:command`, only where it changes nothing a hook decides:
    the same matcher, the same trust (module docstring)."""
    hooks: list[HookSpec] = []
    for spec, shown, where in found:
        trusted = not from_repository(spec.source)
        same = next((h for h in hooks if (h.hook_name, h.name, h.argv[2], h.matcher)
                     == (spec.hook_name, spec.name, spec.argv[2], spec.matcher)
                     and (not from_repository(h.source)) == trusted), None)  # fmt: skip
        if same is not None:
            skipped.append(
                Skipped(
                    shown, spec.source, f"{where}: the same hook is already configured; runs once"
                )
            )
        else:
            hooks.append(spec)
    return hooks


def load(
    path: str, must_exist: bool, comments: bool = True
) -> tuple[dict[str, Any] | None, str | None]:
    """(settings, None), (None, why it is skipped), or (None, None) for a missing file
    (`files.read_json`). Settings files may hold `//` and `/* */` comments, as the agent
    allows them."""
    return read_json(path, must_exist, strip_comments if comments else None)


# A string (to its closing quote, or the end), a comment, other text, or any one character
# (so that nothing is ever dropped: a stray quote stays and the JSON stays invalid).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)|[^"/]+|.', re.DOTALL)


def strip_comments(text: str) -> str:
    """JSON with comments -> JSON: each comment becomes spaces (line numbers kept), strings
    are left whole (`strip-json-comments`)."""
    out = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if token.startswith("//") or token.startswith("/*"):
            out.append(re.sub(r"[^\n]", " ", token))
        else:
            out.append(token)
    return "".join(out)
