"""A /tmp shared by the hooks of one agent session in one workspace (`tmp = "session"`).

On the host every hook of a session shares the machine's /tmp, and some pairs rely on
it: a PostToolUse hook appends the edited paths to a list there, and a Stop hook blocks
the end of the turn while that list names uncommitted files (Tencent/tgfx's CodeBuddy
pair). With the default `tmp = "run"` each run has its own empty tmpfs, so such a
guard never blocks. Only the user's own settings turn sharing on, never the workspace or
the environment.

The shared /tmp is a hook state of its own kind (`_sandbox.state.own_folder`): the host folder
`<state_dir>/<key>`, made by sandboxrun (0700, owned by the hook's uid), where `key`
hashes the agent, the workspace root and the event's session id: two workspaces, two
sessions or two agents never share one. The session id is only hashed, never a path, so
`../` or a newline in it changes nothing but the key. Only repository and user hooks
(and `exec`'s) share it: plugin, managed and system hooks keep their own tmpfs.

What the hooks leave there is hostile: the host never follows a link in it (sizes by
`lstat`, removal without following links, `_sandbox.state`), checks its size against
`tmpfs_size` before each run (over it: the run gets its own tmpfs, and its report says
why) and removes it with `sandboxrun state clean` (any session /tmp unused for
`tmp_max_age` too, also when a new session's is made). An event without a session id,
or a run with something mounted below /tmp (a workspace in /tmp would put the engine's
mount points in the shared folder), gets its own tmpfs, said in its report.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._dialects.base import SESSION_FIELDS, WORKSPACE_SOURCES, Dialect
from .._log import logger
from .._settings import Settings
from .state import KEY_LENGTH, SESSION_TMP, is_key, own_folder, remove, state_root

TMP = "/tmp"
# The hooks that share: the repository's, the user's own (Cline's "global"), and `exec`'s
# (the user wrapped them). Plugin, managed and system hooks keep a /tmp of their own.
SHARED_SOURCES = WORKSPACE_SOURCES | {"user", "global", "exec"}


@dataclass(frozen=True, slots=True)
class Session:
    """What a shared /tmp belongs to: the agent, the workspace root, the session id
    (None: the event named none)."""

    agent: str
    workspace: str
    id: str | None


def session_of(event: Mapping[str, Any], field: str | None = None) -> str | None:
    """The event's session id (`field` first: the dialect's own), or None."""
    for key in (field, *SESSION_FIELDS):
        value = event.get(key) if key else None
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def session_for(agent: str, workspace: str, event: Mapping[str, Any], dialect: Dialect) -> Session:
    """Whose /tmp a hook of `dialect` run for `event` in `workspace` shares."""
    return Session(agent, workspace, session_of(event, dialect.session_field))


def tmp_key(agent: str, workspace: str, session: str) -> str:
    """The shared /tmp's key: the agent, the workspace root and the session id, hashed
    (the id is never part of a path)."""
    identity = json.dumps([SESSION_TMP, agent, os.path.realpath(workspace), session])
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_LENGTH]


def prepare(
    settings: Settings, session: Session | None, source: str, mounted: Iterable[str]
) -> tuple[str | None, str | None]:
    """(host folder to mount at /tmp, None) when this run shares its session's /tmp;
    (None, why) when it should but cannot (it then gets its own tmpfs); (None, None)
    when sharing is off, or not for hooks from `source`. `mounted`: every path the run
    mounts inside (nothing may lie below the shared /tmp)."""
    if settings.tmp != "session" or session is None or source not in SHARED_SOURCES:
        return None, None
    if not session.id:
        return None, 'no session id in the event: this run had its own /tmp (tmp = "session")'
    below = [p for p in mounted if p == TMP or p.startswith(TMP + "/")]
    if below:
        return None, f"session /tmp not mounted ({below[0]} is mounted in /tmp); own /tmp"
    key = tmp_key(session.agent, session.workspace, session.id)
    tag = hashlib.sha256(session.id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    meta = {"source": SESSION_TMP, "hook": f"/tmp of {session.agent} session {tag}",
            "workspace": os.path.realpath(session.workspace)}  # fmt: skip
    path, why, made = own_folder(settings, key, meta, settings.tmpfs_size, "tmpfs_size")
    if why or path is None:
        return None, f"session /tmp not mounted ({why}); this run had its own /tmp"
    with contextlib.suppress(OSError):  # last use, for `tmp_max_age`: the record
        os.utime(state_root(settings) / f"{key}.json", follow_symlinks=False)  # no hook writes
    if made:
        prune(settings, keep=key)
    return path, None


def prune(settings: Settings, keep: str = "") -> int:
    """Remove the session /tmp folders unused for `tmp_max_age` (by their record's time,
    before reading it: cheap when there are many states); never a hook state."""
    root = state_root(settings)
    removed = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    limit = time.time() - settings.tmp_max_age
    for name in names:
        key = name.removesuffix(".json")
        if key == keep or not name.endswith(".json") or not is_key(key):
            continue
        record = root / name
        try:
            if os.lstat(record).st_mtime > limit:
                continue
            if json.loads(record.read_text()).get("source") != SESSION_TMP:
                continue
            if os.path.lexists(root / key):
                remove(root / key)
            record.unlink()
            removed += 1
        except (OSError, ValueError, AttributeError) as exc:
            logger.warning("could not remove old session /tmp {}: {}", root / key, exc)
    return removed
