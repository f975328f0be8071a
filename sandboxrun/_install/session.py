"""The session-start check `install --workspace` adds for an agent that has a session
start event with a message to the user: a hook a later `git pull` brings runs
unsandboxed (the per-file route wraps only what was there), and the user should hear
it when the session starts, not only from `doctor`.

One handler in the user's own settings file (never the repository's: a pull must not
be able to take it away), `SessionStart`, running `sandboxrun doctor --session-start
--agent A` (`_cli/sessionstart.py`), which names the hooks `doctor` names
(`status.notes`) in the agent's message field and changes nothing else.

- Claude Code: `~/.claude/settings.json` (`systemMessage`, shown to the user).
- Codex: `~/.codex/hooks.json` (`systemMessage`; Codex asks the user to review the new
  user hook in `/hooks` once, as any non-managed hook).
- Gemini CLI: `~/.gemini/settings.json` (`systemMessage`).

The others get none, said in their pages: Cursor's and Copilot's sessionStart output
goes to the model (`additional_context`), never to the user; for the Claude-shaped
agents and Qoder, whether a SessionStart `systemMessage` reaches the user is not
confirmed.

Its own record (`session-start.json` beside install's record, never in a workspace):
per file, the exact command written (only that string, in that file, is the check:
`is_check`), the file as it was and the hash of what install made of it, and the
workspaces installed with it. `uninstall --workspace` of the last one takes it off:
the old bytes back when the file is as install left it, else that one handler in
place. The record is separate from `record.Record` and `files.BackupStore`, which
`install --user` keeps for the same file: each undoes only its own change.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from . import jsonspan
from .claude import parse
from .files import atomic_write, file_mode, read_bytes, sha256
from .sessionrecord import SessionRecord
from .shape import CLAUDE, Shape

EVENT = "SessionStart"
# agent -> its user settings file (relative to the home) holding hooks as Claude's do.
FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
}
AGENTS = frozenset(FILES)


def shape_of(agent: str) -> Shape:
    if agent == "gemini":  # comments allowed
        from .gemini import GEMINI

        return GEMINI
    return CLAUDE


def user_file(agent: str, home: str) -> str:
    """The real path of the agent's user settings file (a dotfiles symlink followed)."""
    return os.path.realpath(os.path.join(home, FILES[agent]))


def check_command(launcher: Sequence[str], agent: str, options: Sequence[str] = ()) -> str:
    """The check's command: sandboxrun gone (moved, uninstalled) is exit 1 with one line
    (`warning_guard`: a warning to each of these agents, never bash's 127, which Gemini
    would read as a deny), written as the agent's file must hold it."""
    from .gemini import keep_dollars, warning_guard

    run = shlex.join([*launcher, "doctor", "--session-start", "--agent", agent, *options])
    command = warning_guard(launcher) + run
    return keep_dollars(command) if agent == "gemini" else command


@dataclass(frozen=True, slots=True)
class SessionChange:
    """The user file's change (`new` None: removed) and the record entry after it."""

    path: str
    old: bytes | None
    new: bytes | None
    entry: dict[str, Any] | None
    note: str
    mode: int | None = None


def plan(
    agent: str, home: str, workspace: str, launcher: Sequence[str], undo: bool,
    options: Sequence[str] = (),
) -> SessionChange | None:  # fmt: skip
    """The change `install --workspace` (or its `uninstall`) makes to the agent's user
    file for the session-start check; None for an agent without one."""
    if agent not in AGENTS:
        return None
    path, shape = user_file(agent, home), shape_of(agent)
    entry = SessionRecord(home).get(path)
    old = read_bytes(path)
    if undo:
        return _plan_off(path, old, entry, workspace, shape) if entry else None
    if old is None and not os.path.isdir(os.path.dirname(path)):
        return None  # the agent never ran as this user: its folder is not ours to make
    if old is None and agent == "codex" and _toml_hooks(os.path.dirname(path)):
        note = (
            "no session-start check: your hooks are in ~/.codex/config.toml [hooks], and Codex"
            " warns at every start when a layer's hooks.json holds hooks too"
        )
        return SessionChange(path, old, old, None, note)
    command = check_command(launcher, agent, options)
    places = _places(path, old, shape, entry.get("command") if entry else None)
    if places and entry and entry.get("command") == command:
        new = old
    elif places:  # sandboxrun moved: the same handler, the new command
        text = _text(path, old, shape)
        where = [((*p, "hooks", 0, "command"), command) for p in places]
        new = _encode(old, jsonspan.replace_values(text, where, shape.layout(text)))
    else:
        new = _insert(path, old, shape, command)
    kept = entry or {}
    if not entry or (old is not None and sha256(old) != entry.get("installed")):
        # First install, or the file changed since (an edit, install --user): what
        # uninstall gives back is the file now, without the check.
        before = _without(path, old, shape, entry.get("command")) if entry else old
        kept = {"before": _b64(before), "mode": file_mode(path)}
    workspaces = sorted({*(entry or {}).get("workspaces", []), workspace})
    after = {**kept, "agent": agent, "command": command, "workspaces": workspaces,
             "installed": sha256(new or b"")}  # fmt: skip
    note = "session-start check: names at session start a hook that runs unsandboxed"
    return SessionChange(path, old, new, after, note if new != old else f"{note}; no change")


def _plan_off(
    path: str, old: bytes | None, entry: dict[str, Any], workspace: str, shape: Shape
) -> SessionChange | None:
    workspaces = [w for w in entry.get("workspaces", []) if w != workspace]
    if len(workspaces) == len(entry.get("workspaces", [])):
        return None  # not installed with this workspace
    if workspaces:
        note = f"session-start check kept: {len(workspaces)} other workspace(s) installed"
        return SessionChange(path, old, old, {**entry, "workspaces": workspaces}, note)
    if old is not None and sha256(old) == entry.get("installed"):
        before = _unb64(entry.get("before"))
        note = "session-start check taken off: the file is back as it was"
        return SessionChange(path, old, before, None, note, entry.get("mode"))
    if old is None:
        return SessionChange(
            path, None, None, None, "session-start check: file gone; nothing to do"
        )
    note = "session-start check taken off in place (the file changed since install)"
    return SessionChange(path, old, _without(path, old, shape, entry.get("command")), None, note)


def _without(path: str, raw: bytes | None, shape: Shape, command: Any) -> bytes | None:
    """`raw` without each group install added for the check (`command`), in place."""
    if raw is None or not isinstance(command, str):
        return raw
    text = _text(path, raw, shape)
    for where in reversed(_places(path, raw, shape, command)):
        text = jsonspan.remove_item(text, where[:2], int(where[2]), shape.layout(text))
    return _encode(raw, text)


def apply(change: SessionChange, home: str) -> None:
    """The record first when adding (a check written but not recorded would count as a
    hook of the user's), the file first when taking off."""
    record = SessionRecord(home)
    if change.entry is not None:
        record.put(change.path, change.entry)
    if change.new != change.old:
        if change.new is None:
            os.unlink(change.path)
        else:
            os.makedirs(os.path.dirname(change.path), exist_ok=True)
            atomic_write(change.path, change.new, change.mode)
    if change.entry is None:
        record.put(change.path, None)


def _toml_hooks(folder: str) -> bool:
    """Whether the config.toml of a Codex layer holds hooks (discovery.rs warns
    "loading hooks from both ..." when its hooks.json does too)."""
    import tomllib

    raw = read_bytes(os.path.join(folder, "config.toml"))
    try:
        hooks = tomllib.loads(raw.decode("utf-8")).get("hooks") if raw else None
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(hooks, dict) and any(k != "state" and v for k, v in hooks.items())


def _text(path: str, raw: bytes | None, shape: Shape) -> str:
    return parse(path, raw, shape)[0] if raw is not None else ""


def _places(path: str, raw: bytes | None, shape: Shape, command: str | None) -> list[jsonspan.Path]:
    """The JSON path of each group `hooks.SessionStart[i]` that holds exactly the check
    (one handler, `command`), as install adds it."""
    if raw is None or command is None:
        return []
    data = parse(path, raw, shape)[1]
    groups = (data.get("hooks") or {}).get(EVENT) if isinstance(data.get("hooks"), dict) else None
    if not isinstance(groups, list):
        return []
    return [
        ("hooks", EVENT, i) for i, group in enumerate(groups)
        if group == _group(command)
    ]  # fmt: skip


def _group(command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command}]}


def _insert(path: str, raw: bytes | None, shape: Shape, command: str) -> bytes:
    """`raw` with the check's group appended to `hooks.SessionStart` (made when absent),
    every other byte unchanged."""
    text, data = parse(path, raw, shape) if raw is not None else ("", {})
    group = _group(command)
    if not text.strip():
        return (json.dumps({"hooks": {EVENT: [group]}}, indent=2) + "\n").encode()
    layout = shape.layout(text)
    hooks = data.get("hooks")
    if hooks is None:
        text = jsonspan.insert_member(text, (), "hooks", {EVENT: [group]}, layout)
    elif not isinstance(hooks, dict):
        raise ConfigError(f"{path}: hooks is not an object; not changed")
    elif EVENT not in hooks:
        text = jsonspan.insert_member(text, ("hooks",), EVENT, [group], layout)
    elif isinstance(hooks[EVENT], list):
        text = jsonspan.append_item(text, ("hooks", EVENT), group, layout)
    else:
        raise ConfigError(f"{path}: hooks.{EVENT} is not a list; not changed")
    return _encode(raw, text)


def _encode(raw: bytes | None, text: str) -> bytes:
    bom = b"\xef\xbb\xbf" if raw and raw.startswith(b"\xef\xbb\xbf") else b""
    return bom + text.encode("utf-8")


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _unb64(value: Any) -> bytes | None:
    return base64.b64decode(value) if isinstance(value, str) else None
