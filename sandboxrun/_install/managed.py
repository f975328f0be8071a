"""`install --agent claude --managed`: Claude Code's managed settings.

`allowManagedHooksOnly: true` (the agent then ignores user, project, local and plugin
hooks) and one forwarding hook per event, `sandboxrun run EVENT --agent claude --answer
agent`, which runs the ignored user, project and local hooks in the sandbox, whatever
the repository contains or adds later. An administrator's other keys and hooks stay.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .._dialects.claude.wrapped import missing_guard
from .._errors import ConfigError
from .._wrapped import is_forwarder as is_forwarder  # re-exported (codex.py, tests)
from . import jsonspan
from .answer import answer_form
from .claude import Change, parse
from .files import Backup, BackupStore, atomic_write, file_mode, read_bytes, sha256

# Where Claude Code reads managed settings (its settings documentation, "managed").
MANAGED_FILES = {
    "linux": "/etc/claude-code/managed-settings.json",
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
    "win32": r"C:\ProgramData\ClaudeCode\managed-settings.json",
}


def managed_file(files: Mapping[str, str] = MANAGED_FILES, what: str = "managed settings") -> str:
    """This system's file of `files` (by `sys.platform`), or one line naming the gap."""
    path = files.get(sys.platform)
    if path is None:
        raise ConfigError(f"no {what} file known for {sys.platform}: use --managed-file")
    return path


def forwarder(
    launcher: Sequence[str], event: str, options: Sequence[str], agent: str = "claude"
) -> str:
    """The managed hook that runs the project's (ignored) hooks of `event` sandboxed;
    a `ConfigError` for an agent `run --answer agent` cannot answer for."""
    answer_form(agent)
    run = [*launcher, "run", event, "--agent", agent, "--answer", "agent", *options]
    guard = missing_guard(launcher) if "--fail-closed" in options else ""
    return guard + shlex.join(run)


def plan_managed(
    path: str, launcher: Sequence[str], events: Sequence[str], options: Sequence[str]
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
        command = forwarder(launcher, event, options)
        ours = {"hooks": [{"type": "command", "command": command}]}
        if ours not in entries:  # an older forwarder of ours gives way to this one
            entries = [e for e in entries if not _forwarding(e)] + [ours]
        hooks[event] = entries
    data["hooks"] = hooks
    new = _dump(data, text)
    if old is not None and json.loads(text or "{}") == data:
        new = old
    return Change(path, old, new, f"managed settings: {len(events)} forwarding hook(s)")


def as_installed(
    path: str, store: BackupStore
) -> tuple[bytes | None, Backup | None, Change | None]:
    """(the managed file's bytes, its backup, and the byte-exact restore when the file is
    as install left it, else None)."""
    old = read_bytes(path)
    backup = store.get(path)
    if backup is not None and (old is None or sha256(old) == backup.installed):
        return (
            old,
            backup,
            Change(path, old, backup.original, "restored byte for byte", backup.mode),
        )
    return old, backup, None


def plan_unmanage(path: str, store: BackupStore) -> Change | None:
    old, backup, restore = as_installed(path, store)
    if restore is not None or old is None:
        return restore
    text, data = parse(path, old)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, entries in list(hooks.items()):
            if isinstance(entries, list):
                kept = [e for e in entries if not _forwarding(e)]
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


def _forwarding(entry: Any) -> bool:
    """Whether a matcher entry holds a forwarding hook of ours."""
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    return isinstance(hooks, list) and any(is_forwarder(h) for h in hooks)


def _claude_doc(raw: bytes) -> dict[str, Any]:
    try:
        return parse("backup", raw)[1]
    except ConfigError:
        return {}


def apply_managed(change: Change, store: BackupStore) -> None:
    """Write the managed settings (the file as it was backed up first, once)."""
    if change.new is None or change.new == change.old:
        return
    before = store.get(change.path)
    if before is None or change.old is None or sha256(change.old) != before.installed:
        store.put(Backup(change.path, change.old, file_mode(change.path), sha256(change.new)))
    os.makedirs(os.path.dirname(change.path), exist_ok=True)
    atomic_write(change.path, change.new)


def _dump(data: dict[str, Any], like: str) -> bytes:
    indent = jsonspan.indent_of(like) if like.strip() else 2
    end = "\n" if not like or like.endswith("\n") else ""
    return (json.dumps(data, indent=indent, ensure_ascii=like.isascii()) + end).encode()
