"""`install` / `uninstall --agent codex`: Codex's hooks.json and config.toml `[hooks]`
rewritten in place (`--workspace`, `--user`), or its requirements.toml (`--managed`).

Confirmed in openai/codex (codex-rs, commits as in `_dialects/codex`):

- Files (`hooks/src/engine/discovery.rs` @0082977c, `config/src/loader/mod.rs`
  @12883137): each config layer's `hooks.json` and `[hooks]` of its `config.toml`; the
  user's `~/.codex`, each project `.codex` from the root (`.git`) down to the cwd.
  hooks.json is Claude-shaped (`claude.py` with a `Shape`); config.toml is rewritten
  with tomlkit, only the command strings (`TomlCodec`), so it still deserialises to the
  same types: Codex skips a whole file one of whose handlers it cannot read.
- A handler is `command`, `timeout` (seconds, 600 when absent; SessionEnd and Interrupt
  1, at most 3), `async`, `statusMessage`; Codex reads no `args`, `shell` or `env`.
- Codex's own gate (discovery.rs, `config_rules.rs` @9a5113ad): a project layer loads
  only in a trusted project, and a non-managed command hook runs only when
  `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash` in the user's
  config.toml (user and session layers only: a project cannot trust itself) is its
  current hash, or under `--dangerously-bypass-hook-trust`. A wrapper is a new command,
  so Codex asks for a review again (`/hooks`); so does any hook a pull adds or changes.
- `--managed` (`config/src/loader/mod.rs`: system requirements
  `/etc/codex/requirements.toml`; `config/src/hook_config.rs`
  `ManagedHooksRequirementsToml` = `[hooks]` with `managed_dir` and the events inline):
  `allow_managed_hooks_only = true` keeps Codex to managed hooks (requirements' and the
  system layer's, `is_managed`), which need no review; one forwarding hook per event
  runs `sandboxrun run EVENT --agent codex --answer agent`, which runs the user and
  project hooks sandboxed, whatever a pull adds. `managed_dir` is set (to the file's
  folder) when absent: older Codex skips managed hooks without one.
"""

from __future__ import annotations

import argparse
import functools
import os
import tomllib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import tomlkit
import tomlkit.exceptions

from .._dialects.base import Dialect
from .._dialects.claude.settings import project_root
from .._dialects.codex.discovery import (
    _LABELS,
    HOOK_NAMES,
    SHORT_EVENTS,
    _states,
    deadline,
    project_folders,
)
from .._errors import ConfigError
from .._wrapped import UNTRUSTED, check_in, is_check
from . import claude as _claude
from . import jsonspan, legacy
from .claude import Change
from .files import BackupStore, read_bytes
from .managed import as_installed, forwarder, is_forwarder
from .record import Record, names_sandboxrun
from .shape import Handlers, Shape
from .targets import inside_project
from .unwrapped import EARLIER, read_bytes_quiet, wrapper_notes

if TYPE_CHECKING:
    from .registry import Request

REQUIREMENTS = "/etc/codex/requirements.toml"  # Unix (`system_requirements_toml_file`)


class CodexShape(Shape):
    """Codex's handler view: the command alone (Codex reads no `args` or `shell`), and
    the deadline Codex gives it (`deadline`), so the wrapper's `--timeout` is below it."""

    __slots__ = ()

    def _view(self, where: jsonspan.Path, hook: Any) -> Handlers:
        if not isinstance(hook, dict) or hook.get("type") != "command":
            return
        command = hook.get("command")
        if not (isinstance(command, str) and command.strip()):
            return
        timeout = hook.get("timeout", hook.get("timeoutSec"))
        number = isinstance(timeout, int) and not isinstance(timeout, bool)
        seconds = deadline(str(where[-4]), timeout if number else None)
        yield where, {"type": "command", "command": command, "timeout": float(seconds)}


class TomlCodec:
    """config.toml through tomlkit: refused unless it writes the file back byte for
    byte, and a change must read back (`tomllib`, as Codex's toml crate) as the same
    document with only those strings changed."""

    def document(self, path: str, raw: bytes) -> tomlkit.TOMLDocument:
        try:
            text = raw.decode("utf-8")
            doc = tomlkit.parse(text)
        except (UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
            raise ConfigError(
                f"{path}: not TOML sandboxrun can edit ({exc}); not changed"
            ) from None
        if tomlkit.dumps(doc) != text:
            raise ConfigError(f"{path}: tomlkit cannot keep this file byte for byte; not changed")
        return doc

    def parse(self, path: str, raw: bytes) -> dict[str, Any]:
        data: dict[str, Any] = self.document(path, raw).unwrap()
        hooks = data.get("hooks")
        return data if isinstance(hooks, dict) else {}  # `[hooks]` or nothing to do

    def replace(
        self, path: str, raw: bytes, changes: Sequence[tuple[jsonspan.Path, object]]
    ) -> bytes:
        doc = self.document(path, raw)
        want: Any = doc.unwrap()
        for where, value in changes:
            node: Any = doc
            for step in where[:-1]:
                node = node[step]
            node[where[-1]] = value
            parent: Any = want
            for step in where[:-1]:
                parent = parent[step]
            parent[where[-1]] = value
        new = tomlkit.dumps(doc)
        if tomllib.loads(new) != want:  # never a file Codex would read otherwise
            raise ConfigError(f"{path}: the rewrite would not read back the same; not changed")
        return new.encode("utf-8")


HOOKS_JSON = CodexShape()
CONFIG_TOML = CodexShape(codec=TomlCodec())


def files(workspace: str | None, home: str) -> list[tuple[str, Shape]]:
    """(file, shape) that `install` rewrites: the user's `~/.codex` (`workspace` None; a
    dotfiles symlink is followed), else every `.codex` of the project down to the cwd,
    each inside the project (a repository's symlink must not pick a file elsewhere)."""
    if workspace is None:
        folders, root = [os.path.join(home, ".codex")], None
    else:
        root = project_root(workspace, home, ".git")
        folders = project_folders(root, workspace)
    out: list[tuple[str, Shape]] = []
    for folder in folders:
        for name, shape in (("hooks.json", HOOKS_JSON), ("config.toml", CONFIG_TOML)):
            path = os.path.join(folder, name)
            real = os.path.realpath(path) if root is None else inside_project(path, root)
            out.append((real, shape))
    return out


def install(request: Request, dialect: Dialect) -> int:
    """The agent's module (`registry.Installer`): `command`."""
    return command(request.args, request.home, request.store, request.record, request)


def command(
    args: argparse.Namespace, home: str, store: BackupStore, record: Record, tools: Request
) -> int:
    """`install`/`uninstall --agent codex` (see the module)."""
    undo = args.command == "uninstall"
    managed_file = os.path.abspath(args.managed_file) if args.managed_file else REQUIREMENTS
    explicit = args.workspace or args.user or args.managed
    if args.global_:
        raise ConfigError("--global is for the Cline family; Codex has --managed")
    if args.managed or args.managed_file or (not explicit and _default_managed(managed_file)):
        return _managed(args, managed_file, home, store, undo, tools)
    workspace = None if args.user else os.path.abspath(args.workspace or os.getcwd())
    changes = []
    for shape in (HOOKS_JSON, CONFIG_TOML):
        paths = [p for p, s in files(workspace, home) if s is shape]
        if undo:
            changes += _claude.plan_uninstall(paths, store, record, shape)
            continue
        options = ([UNTRUSTED] if workspace else []) + tools.run_options(args, home=False)
        changes += _claude.plan_install(paths, tools.launcher(), "codex", options, record, shape)
    then = None
    if workspace is not None:  # the session-start check in ~/.codex/hooks.json
        found = any(c.old is not None for c in changes)
        then = functools.partial(tools.session, args, "codex", home, workspace, undo, found)
    code = tools.show(changes, args.dry_run, store, record, undo, then=then)
    if not undo and any(c.new != c.old for c in changes):
        for line in _notes(changes, explicit, managed_file):
            print(line)
    return code


def _notes(changes: Sequence[Change], explicit: object, managed_file: str) -> list[str]:
    out = ["Codex runs a changed hook only once you review it again in /hooks (its hash changed)"]
    short = sum(
        1 for c in changes if c.new is not None
        for where, _ in c.shape.handlers(_claude.parse(c.path, c.new, c.shape)[1])
        if where[-4] in SHORT_EVENTS
    )  # fmt: skip
    if short:
        out.append(
            f"{short} SessionEnd/Interrupt hook(s): Codex waits 1 s for them (3 at most, with"
            ' "timeout": 3); a sandboxed hook rarely starts that fast, and is then cut off'
        )
    if not explicit:
        out.append(
            "a hook a later pull adds is not wrapped (doctor names it): `--managed`"
            f" ({managed_file}, needs root) sandboxes them all, whatever a pull brings"
        )
    return out


def _default_managed(path: str) -> bool:
    """Whether the default route is `--managed`: the user can write requirements.toml
    (or create it)."""
    folder = path
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if folder == path:
        return os.access(path, os.W_OK) and os.access(os.path.dirname(path), os.W_OK)
    return os.path.isdir(folder) and os.access(folder, os.W_OK)


# -- --managed: requirements.toml ------------------------------------------------------


def _managed(
    args: argparse.Namespace, path: str, home: str, store: BackupStore, undo: bool, tools: Request
) -> int:
    if undo:
        change = plan_unmanage(path, store)
        return tools.show([change] if change else [], args.dry_run, store, Record(home), True,
                          managed=True)  # fmt: skip
    change = plan_managed(path, tools.shared_launcher(), tools.run_options(args))
    code = tools.show([change], args.dry_run, store, Record(home), False, managed=True)
    print(
        "Codex now runs only managed hooks; sandboxrun runs your and each project's hooks"
        " sandboxed (also those a later pull adds). SessionEnd/Interrupt: Codex waits 3 s at"
        " most, a cold sandbox may not make it"
    )
    return code


def plan_managed(path: str, launch: Sequence[str], options: Sequence[str]) -> Change:
    """requirements.toml with `allow_managed_hooks_only = true`, `managed_dir` (kept if
    set) and one forwarding hook per event; an administrator's other keys and hooks kept."""
    old = read_bytes(path)
    codec = TomlCodec()
    doc = codec.document(path, old) if old is not None else tomlkit.document()
    doc["allow_managed_hooks_only"] = True
    hooks = doc.get("hooks")
    if hooks is None:
        hooks = doc["hooks"] = tomlkit.table()
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: hooks is not a table; not changed")
    if "managed_dir" not in hooks:
        hooks["managed_dir"] = os.path.dirname(os.path.abspath(path))
    for event in HOOK_NAMES:
        command = forwarder(launch, event, options, agent="codex")
        groups = hooks.get(event)
        if groups is not None and not isinstance(groups, list):
            raise ConfigError(f"{path}: hooks.{event} is not an array; not changed")
        if groups is not None and any(_ours(g, command) for g in groups):
            continue
        if groups is None:
            groups = hooks[event] = tomlkit.aot()
        for i in reversed([i for i, g in enumerate(groups) if _forwarding(g)]):
            del groups[i]  # an older forwarder of ours gives way to this one
        handler = tomlkit.table().add("type", "command").add("command", command)
        if event in SHORT_EVENTS:
            handler.add("timeout", 3)  # Codex's most
        inner = tomlkit.aot()
        inner.append(handler)
        groups.append(tomlkit.table().add("hooks", inner))
    new = tomlkit.dumps(doc).encode("utf-8")
    note = f"Codex requirements: allow_managed_hooks_only, {len(HOOK_NAMES)} forwarding hook(s)"
    return Change(path, old, new if new != old else old, note)


def _forwarding(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(is_forwarder(h) for h in hooks)


def _ours(group: Any, command: str) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and h.get("command") == command for h in hooks
    )


def plan_unmanage(path: str, store: BackupStore) -> Change | None:
    """The file as it was (byte for byte) when install left it unchanged since; else the
    forwarders taken off in place, and the settings install added."""
    old, backup, restore = as_installed(path, store)
    if restore is not None or old is None:
        return restore
    codec = TomlCodec()
    doc = codec.document(path, old)
    before = codec.document(path, backup.original).unwrap() if backup and backup.original else {}
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if isinstance(groups, list) and event in HOOK_NAMES:
                for i in reversed([i for i, g in enumerate(groups) if _forwarding(g)]):
                    del groups[i]
                if not groups:
                    del hooks[event]
        if "managed_dir" in hooks and "managed_dir" not in (before.get("hooks") or {}):
            del hooks["managed_dir"]
        if not hooks:
            del doc["hooks"]
    if "allow_managed_hooks_only" in before:  # the administrator's own setting stays
        doc["allow_managed_hooks_only"] = before["allow_managed_hooks_only"]
    elif "allow_managed_hooks_only" in doc:
        del doc["allow_managed_hooks_only"]
    return Change(
        path, old, tomlkit.dumps(doc).encode("utf-8"), "forwarding hooks taken off in place"
    )


def forwarding_installed(path: str | None = None) -> bool:
    """Whether requirements.toml keeps Codex to managed hooks and holds a forwarder."""
    try:
        raw = read_bytes(path or REQUIREMENTS)
        data = tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (ConfigError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    hooks = data.get("hooks")
    groups = [g for v in hooks.values() if isinstance(v, list) for g in v] if isinstance(
        hooks, dict) else []  # fmt: skip
    return data.get("allow_managed_hooks_only") is True and any(_forwarding(g) for g in groups)


# -- what `list` and `doctor` say (`registry.Installer`) --------------------------------


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """What runs unsandboxed although install was run (`status.notes`): with the managed
    forwarders, nothing of the user's or a project's (Codex runs only managed hooks);
    else each handler of an installed file that is no wrapper install recorded (a pull
    brought it), said with Codex's own gate: whether the user trusted its hash."""
    if forwarding_installed():
        return []
    store, record = BackupStore(home), Record(home)
    workspace = os.path.abspath(roots[0] if roots else os.getcwd())
    project = project_root(workspace, home, ".git")
    states = _states(os.path.join(home, ".codex", "config.toml"))
    out = []
    for scope, where in (("user", None), ("project", workspace)):
        try:
            found = files(where, home)
        except ConfigError as exc:
            out.append(f"not installed: {exc}")
            continue
        again = "--user" if where is None else f"--workspace {project}"
        loaded = []
        for path, shape in found:
            raw = read_bytes_quiet(path)
            try:
                data = _claude.parse(path, raw, shape)[1] if raw is not None else {}
                entries = record.entries(path)
            except ConfigError:
                continue  # `list` names the unreadable file already
            loaded.append((path, shape, data, entries))
        installed = any(store.get(p) is not None or e for p, _, _, e in loaded)
        for path, shape, data, entries in loaded:
            check = check_in(home, path) if scope == "user" else None  # `session.py`
            for at, hook in shape.handlers(data):
                if is_check(check, hook):
                    continue
                spot = f"{path} hooks.{at[1]}[{at[2]}].hooks[{at[4]}]"
                if record.original(path, hook, scope == "project", entries):
                    out += wrapper_notes(spot, hook, project, "codex", again)
                    continue
                alike = names_sandboxrun(hook)
                if not (installed or alike):
                    continue
                why = EARLIER if legacy.old_wrapper(hook) else (
                    "install did not write it: a command shaped like a wrapper runs as written"
                    if alike else "new since install?"
                )  # fmt: skip
                key = f"{path}:{_LABELS.get(str(at[1]), '')}:{at[2]}:{at[4]}"
                state = states.get(key)
                gate = (
                    "trusted by hash in ~/.codex/config.toml [hooks.state]: Codex runs it now"
                    if isinstance(state, dict) and state.get("trusted_hash")
                    else "Codex runs it once you trust it in /hooks"
                )
                out.append(f"not wrapped: {spot}: {hook['command'][:120]!r} runs unsandboxed"
                           f" ({why}; {gate}): run `sandboxrun install --agent codex {again}`"
                           " again")  # fmt: skip
    return out
