"""`install` / `uninstall` for the Claude family: settings files rewritten in place.

Each command hook of a settings file becomes the same hook run through
`sandboxrun exec` (`_dialects.claude.wrapped`); only the changed strings (and an
`args` list) are rewritten, every other byte stays. The original of each file is kept,
byte for byte, in the user's data folder (`files.BackupStore`): `uninstall` writes it
back when the file is as `install` left it, and otherwise takes the wrappers off in
place (the file changed since: a pull, an edit), saying so.

`--managed` writes Claude Code's managed settings instead: `allowManagedHooksOnly`
(the agent then ignores user, project, local and plugin hooks) and one forwarding
hook per event that has `sandboxrun run --answer agent` run the ignored user,
project and local hooks in the sandbox, whatever the repository contains.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import project_root
from .._dialects.claude.wrapped import missing_guard, unguarded, unwrap, wrap
from .._errors import ConfigError
from . import jsonspan
from .files import Backup, BackupStore, atomic_write, read_bytes, sha256

_BOM = b"\xef\xbb\xbf"
# Where Claude Code reads managed settings (its settings documentation, "managed").
MANAGED_FILES = {
    "linux": "/etc/claude-code/managed-settings.json",
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
    "win32": r"C:\ProgramData\ClaudeCode\managed-settings.json",
}


@dataclass(frozen=True, slots=True)
class Change:
    """One file's change: what it is, what it becomes (None: removed), and a note."""

    path: str
    old: bytes | None
    new: bytes | None
    note: str
    mode: int | None = None  # the mode to write `new` with (None: the file's own)


def settings_paths(dialect: ClaudeDialect, workspace: str | None, home: str) -> list[str]:
    """The files `install` rewrites: the user's settings (`workspace` None), or the
    project's shared and local settings of the project `workspace` belongs to."""
    if workspace is None:  # the user's own file: a dotfiles symlink is followed
        return [os.path.realpath(f"{home}/{dialect.user_dir}/settings.json")]
    root = project_root(workspace, home, dialect.project_dir)
    folder = f"{root}/{dialect.project_dir}"
    return [_inside(f"{folder}/{name}", root) for name in ("settings.json", "settings.local.json")]


def _inside(path: str, root: str) -> str:
    """The file a project's settings path is, if it lies in the project: a repository's
    symlink must not make `install` rewrite a file elsewhere (the user's own settings)."""
    real = os.path.realpath(path)
    if not Path(real).is_relative_to(os.path.realpath(root)):
        raise ConfigError(f"{path} is a link to {real}, outside the project; not changed")
    return real


def parse(path: str, raw: bytes) -> tuple[str, dict[str, Any]]:
    """(text without BOM, document) of a settings file, or one line naming it."""
    try:
        text = raw.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8; not changed") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno}); not changed"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({str(exc)[:80]}); not changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a JSON object; not changed")
    return text, data


def command_handlers(data: dict[str, Any]) -> Iterator[tuple[jsonspan.Path, dict[str, Any]]]:
    """(JSON path, handler) of every command handler in a settings document."""
    table = data.get("hooks")
    if not isinstance(table, dict):
        return
    for event, entries in table.items():
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            hooks = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(hooks, list):
                continue
            for j, hook in enumerate(hooks):
                if isinstance(hook, dict) and hook.get("type") == "command":
                    command = hook.get("command")
                    if isinstance(command, str) and command.strip():
                        yield ("hooks", event, i, "hooks", j), hook


def _args(hook: dict[str, Any]) -> list[str] | bool | None:
    """A handler's `args` (None without), or False if malformed (left alone)."""
    args = hook.get("args")
    if args is None:
        return None
    ok = isinstance(args, list) and all(isinstance(a, str) for a in args)
    return args if ok else False


def wrapped(hook: dict[str, Any]) -> bool:
    args = _args(hook)
    return args is not False and unwrap(hook["command"], args, hook.get("shell")) is not None  # type: ignore[arg-type]


Rewrite = Callable[[dict[str, Any]], tuple[str, list[str] | None] | None]


def rewrite(path: str, raw: bytes, each: Rewrite) -> bytes:
    """`raw` with each command handler `each` returns a new (command, args) for
    rewritten, and nothing else changed."""
    text, data = parse(path, raw)
    changes: list[tuple[jsonspan.Path, object]] = []
    for where, hook in command_handlers(data):
        new = each(hook)
        if new is None:
            continue
        command, args = new
        changes.append(((*where, "command"), command))
        if args is not None:
            changes.append(((*where, "args"), args))
    if not changes:
        return raw
    bom = _BOM if raw.startswith(_BOM) else b""
    return bom + jsonspan.replace_values(text, changes).encode("utf-8")


def wrapper_of(executable: str, agent: str, options: Sequence[str]) -> Rewrite:
    """The rewrite that wraps every handler not yet wrapped (PowerShell ones stay:
    there is no PowerShell in the sandbox, and `list` names them)."""

    def each(hook: dict[str, Any]) -> tuple[str, list[str] | None] | None:
        args = _args(hook)
        if args is False or hook.get("shell") == "powershell" or wrapped(hook):
            return None
        extra = list(options)
        timeout = hook.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            # Below the agent's own deadline for the entry, so sandboxrun ends a slow hook.
            extra += ["--timeout", f"{max(timeout - 2, timeout / 2):g}"]
        return wrap(executable, agent, hook["command"], args, hook.get("shell"), extra)  # type: ignore[arg-type]

    return each


def _unwrap_each(hook: dict[str, Any]) -> tuple[str, list[str] | None] | None:
    args = _args(hook)
    if args is False:
        return None
    original = unwrap(hook["command"], args, hook.get("shell"))  # type: ignore[arg-type]
    if original is None:
        return None
    return original.command, None if original.args is None else list(original.args)


def plan_install(
    paths: Sequence[str], executable: str, agent: str, options: Sequence[str]
) -> list[Change]:
    """Every file's change (unchanged files too, with a note), parsed before anything is
    written: one unparsable file stops the install before any file changes."""
    out = []
    each = wrapper_of(executable, agent, options)
    for path in paths:
        old = read_bytes(path)
        if old is None:
            continue
        new = rewrite(path, old, each)
        count = sum(1 for _, h in command_handlers(parse(path, new)[1]) if wrapped(h))
        note = f"{count} hook command(s) run through sandboxrun exec"
        out.append(Change(path, old, new, note if new != old else f"{note}; no change"))
    return out


def apply_install(change: Change, store: BackupStore) -> None:
    """Write one planned change: the backup first (the file as it was, with any wrapper
    of ours taken off when a pull mixed new hooks into an installed file), then the file."""
    if change.new == change.old or change.old is None or change.new is None:
        return
    before = store.get(change.path)
    if before is not None and sha256(change.old) == before.installed:
        return
    original = rewrite(change.path, change.old, _unwrap_each)
    mode = _mode(change.path)
    store.put(Backup(change.path, original, mode, sha256(change.new)))
    atomic_write(change.path, change.new)


def plan_uninstall(paths: Sequence[str], store: BackupStore) -> list[Change]:
    out = []
    for path in paths:
        old = read_bytes(path)
        backup = store.get(path)
        if old is None and backup is None:
            continue
        if backup is not None and old is not None and sha256(old) == backup.installed:
            out.append(Change(path, old, backup.original, "restored byte for byte", backup.mode))
            continue
        if old is None:
            out.append(Change(path, None, None, "gone since install; nothing to restore"))
            continue
        new = rewrite(path, old, _unwrap_each)
        why = (
            "changed since install: wrappers taken off in place" if backup else "wrappers taken off"
        )
        out.append(Change(path, old, new, why if new != old else "no wrapped hook; no change"))
    return out


def apply_uninstall(change: Change, store: BackupStore) -> None:
    if change.new != change.old:
        if change.new is None:
            os.unlink(change.path)
        else:
            atomic_write(change.path, change.new, change.mode)
    store.drop(change.path)


def _mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


# -- managed settings ----------------------------------------------------------------


def managed_file() -> str:
    path = MANAGED_FILES.get(sys.platform)
    if path is None:
        raise ConfigError(f"no managed settings file known for {sys.platform}: use --managed-file")
    return path


def forwarder(executable: str, event: str, options: Sequence[str]) -> str:
    """The managed hook that runs the project's (ignored) hooks of `event` sandboxed."""
    run = [executable, "run", event, "--agent", "claude", "--answer", "agent", *options]
    guard = missing_guard(executable) if "--fail-closed" in options else ""
    return guard + shlex.join(run)


def is_forwarder(hook: Any) -> bool:
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(unguarded(hook["command"]))
    except ValueError:
        return False
    return (
        len(words) > 2 and words[0].endswith("sandboxrun") and words[1] == "run"
        and "--answer" in words
    )  # fmt: skip


def plan_managed(
    path: str, executable: str, events: Sequence[str], options: Sequence[str]
) -> Change:
    """The managed settings with `allowManagedHooksOnly` and a forwarding hook for
    every event (an administrator's other keys and hooks kept)."""
    old = read_bytes(path)
    text, data = parse(path, old) if old is not None else ("", {})
    data = dict(data)
    data["allowManagedHooksOnly"] = True
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ConfigError(f"{path}: hooks is not an object; not changed")
    hooks = dict(hooks or {})
    for event in events:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: hooks.{event} is not a list; not changed")
        present = any(
            is_forwarder(h) for e in entries if isinstance(e, dict)
            for h in (e.get("hooks") or []) if isinstance(e.get("hooks"), list)
        )  # fmt: skip
        if not present:
            command = forwarder(executable, event, options)
            entries = [*entries, {"hooks": [{"type": "command", "command": command}]}]
        hooks[event] = entries
    data["hooks"] = hooks
    new = _dump(data, text)
    if old is not None and json.loads(text or "{}") == data:
        new = old
    return Change(path, old, new, f"managed settings: {len(events)} forwarding hook(s)")


def plan_unmanage(path: str, store: BackupStore) -> Change | None:
    old = read_bytes(path)
    backup = store.get(path)
    if backup is not None and (old is None or sha256(old) == backup.installed):
        return Change(path, old, backup.original, "restored byte for byte", backup.mode)
    if old is None:
        return None
    text, data = parse(path, old)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, entries in list(hooks.items()):
            if isinstance(entries, list):
                kept = [e for e in entries if not (
                    isinstance(e, dict) and isinstance(e.get("hooks"), list)
                    and any(is_forwarder(h) for h in e["hooks"]))]  # fmt: skip
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
        if not hooks:
            del data["hooks"]
    before = _claude_doc(backup.original) if backup and backup.original else {}
    if "allowManagedHooksOnly" in before:  # the administrator's own setting stays
        data["allowManagedHooksOnly"] = before["allowManagedHooksOnly"]
    else:
        data.pop("allowManagedHooksOnly", None)
    return Change(path, old, _dump(data, text), "forwarding hooks taken off in place")


def _claude_doc(raw: bytes) -> dict[str, Any]:
    try:
        return parse("backup", raw)[1]
    except ConfigError:
        return {}


def apply_managed(change: Change, store: BackupStore) -> None:
    if change.new is None or change.new == change.old:
        return
    before = store.get(change.path)
    if before is None or change.old is None or sha256(change.old) != before.installed:
        store.put(Backup(change.path, change.old, _mode(change.path), sha256(change.new)))
    os.makedirs(os.path.dirname(change.path), exist_ok=True)
    atomic_write(change.path, change.new)


def _dump(data: dict[str, Any], like: str) -> bytes:
    indent = jsonspan.indent_of(like) if like.strip() else 2
    end = "\n" if not like or like.endswith("\n") else ""
    return (json.dumps(data, indent=indent, ensure_ascii=like.isascii()) + end).encode()
