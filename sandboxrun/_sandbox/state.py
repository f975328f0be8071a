"""Hook state: a persistent private `$HOME` for the hooks the user names, off by default.

Only the user's own settings turn it on (`state = ["glob", ...]`, matched against the
hook's name as `list` shows it: a path or a command); never the workspace, never the
environment. A hook with state gets, instead of an empty tmpfs, the host folder
`<state_dir>/<key>` as its `$HOME`, bind-mounted read-write: at the user's home path
when nothing is mounted below it, else at `/home/hook` (`_sandbox.mounts.home_layout`: nothing is
ever mounted inside a state, and Landlock never grants a tree with a workspace in it).
`key` hashes the hook's source, its name and its workspace root: two hooks, or one
hook in two workspaces, never share a state. sandboxrun makes that folder itself (mode
0700, owned by the hook's uid) under a folder of the user's; no path in it comes from a
workspace or event.

The hook controls what is inside: symlinks, FIFOs, a chmod 000 folder. So the host
never follows anything there: sizes are taken with `lstat` on a walk that does not
follow links, removal is `shutil.rmtree` (file-descriptor based, never follows a link)
after making folders writable through `O_NOFOLLOW` descriptors. The size cap is checked
before each run: a state over `state_size` is not mounted (the hook gets the empty
tmpfs, and its report says why) until the user cleans it. What a single run writes is
bounded by its deadline and the disk, not by the cap (a bind mount has no quota).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .. import _userconfig
from .._errors import ConfigError, SandboxrunError
from .._settings import Settings, account_home, parse_size

NOBODY = 65534
KEY_LENGTH = 32  # hex digits of the sha256 of (source, name, workspace)
SESSION_TMP = "session-tmp"  # the source `state list` names a session's shared /tmp by


def hook_ids(user: str | None) -> tuple[int, int]:
    """(uid, gid) a hook runs as: never root, never someone else's identity.

    The configured `user`; else the invoking user's own ids, so the hook reads exactly
    what the user can read; when sandboxrun runs as root, nobody. A hook never takes on
    the identity of a workspace's owner: an event can name the workspace, and its
    owner's files (a database's, say) are not the hook's to read.
    """
    if user:
        uid_s, _, gid_s = user.partition(":")
        return int(uid_s), int(gid_s or uid_s)
    if os.getuid() != 0:
        return os.getuid(), os.getgid()
    return NOBODY, NOBODY


def state_root(settings: Settings) -> Path:
    """The folder that holds every hook state (it need not exist yet)."""
    if settings.state_dir:
        return Path(settings.state_dir)
    return Path(_userconfig.data_dir(account_home())) / "state"


def wanted(settings: Settings, name: str) -> bool:
    """Whether the user turned state on for the hook called `name`."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in settings.state)


def state_key(source: str, name: str, workspace: str) -> str:
    """The state's key: the hook's identity and its workspace root, hashed."""
    identity = json.dumps([source, name, os.path.realpath(workspace)])
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_LENGTH]


def size_of(path: str | os.PathLike[str]) -> int:
    """Bytes a state holds, never following a link the hook made (a symlink counts as
    itself; sparse files count at their apparent size, so they cannot hide)."""
    total = 0
    for folder, dirs, files in os.walk(path, followlinks=False):
        for name in (*dirs, *files):
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += max(st.st_size, st.st_blocks * 512)
    return total


def remove(path: str | os.PathLike[str]) -> None:
    """Delete a state folder, following no link inside it. The hook may have left
    folders without read or search permission: each is made 0700 (as its owner may)
    before the walk descends into it, then `shutil.rmtree` deletes it all."""
    _own_folder(path)
    for folder, dirs, _files in os.walk(path, followlinks=False):
        for name in dirs:  # os.walk descends after this: unlock the children first
            _own_folder(os.path.join(folder, name))
    shutil.rmtree(path)


def _own_folder(path: str | os.PathLike[str]) -> None:
    """chmod 0700 a folder, never what a symlink names: through an O_PATH descriptor
    of the entry itself (no race with a hook swapping it for a link), then its
    /proc/self/fd name, the way glibc's own fchmodat(AT_SYMLINK_NOFOLLOW) does."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.chmod(f"/proc/self/fd/{fd}", 0o700)
    except OSError:
        pass  # not ours to change: rmtree will then say what it could not remove
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class State:
    """One hook state on disk, as `state list` shows it."""

    key: str
    path: Path
    source: str
    hook: str
    workspace: str
    size: int
    used: float = 0.0  # when sandboxrun last mounted it, if it records that (a session /tmp)


def prepare(
    settings: Settings, source: str, name: str, workspace: str
) -> tuple[str | None, str | None]:
    """(folder to mount at the hook's home, None) when the hook keeps state; (None, why)
    when it should but cannot this time (the hook then runs with the empty tmpfs);
    (None, None) when state is off for it."""
    if not wanted(settings, name):
        return None, None
    return _prepare(settings, source, name, workspace)


def plugin_data(
    settings: Settings, path: str, plugin: str, name: str, workspace: str
) -> tuple[tuple[tuple[str, str | None], ...], str | None]:
    """(private folders, note) for a plugin hook's `CLAUDE_PLUGIN_DATA` at `path`: an empty
    tmpfs; a persistent folder of ours when `state` names the hook or the plugin (one
    per plugin and workspace, shared by the plugin's hooks, as the agent shares it). Its
    own state entry, never a folder inside a hook's home: the hook controls what is
    there (a symlink it left must never become a mount source)."""
    if not (wanted(settings, name) or wanted(settings, plugin)):
        return ((path, None),), None
    folder, note = _prepare(settings, "plugin-data", plugin, workspace)
    if note:
        note = note.replace("hook state", "plugin data").replace("an empty home", "empty data")
    return ((path, folder),), note


def _prepare(
    settings: Settings, source: str, name: str, workspace: str
) -> tuple[str | None, str | None]:
    key = state_key(source, name, workspace)
    meta = {"source": source, "hook": name, "workspace": os.path.realpath(workspace)}
    path, why, _made = own_folder(settings, key, meta, settings.state_size, "state_size")
    if why:
        return None, f"hook state not mounted ({why}); it ran with an empty home"
    return path, None


def own_folder(
    settings: Settings, key: str, meta: dict[str, str], cap: str, cap_name: str
) -> tuple[str | None, str | None, bool]:
    """(folder, None, made now) for `<state_dir>/<key>`, made here when missing (0700,
    owned by the hook's uid, `meta` written beside it); (None, why, False) when it must
    not be mounted: not a folder of the hook's, or over `cap` (`cap_name`'s value)."""
    uid, gid = hook_ids(settings.user)
    root = state_root(settings)
    path = root / key
    made = False
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            path.mkdir(mode=0o700)
            made = True
            if (os.getuid(), os.getgid()) != (uid, gid):
                os.chown(path, uid, gid)
            _write_meta(root / f"{key}.json", meta)
        except FileExistsError:
            pass
        why = _unfit(path, uid, parse_size(cap), f"{cap_name} {cap}")
    except OSError as exc:
        why = f"cannot prepare {path}: {exc.strerror}"
    return (None, why, False) if why else (str(path), None, made)


def _unfit(path: Path, uid: int, cap: int, cap_text: str) -> str | None:
    """Why an existing state folder must not be mounted, or None. Its mode is reset to
    0700 through a descriptor that does not follow links (the hook may chmod its home)."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != uid:
        return f"{path} is owned by uid {st.st_uid}, not the hook's uid {uid}"
    _own_folder(path)
    size = size_of(path)
    if size > cap:
        return (
            f"{path} holds {size} bytes, over {cap_text};"
            f" `sandboxrun state clean {path.name}` empties it"
        )
    return None


def _write_meta(path: Path, meta: dict[str, str]) -> None:
    """What `state list` shows: kept beside the state, where the hook cannot write."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(meta, f)


def states(settings: Settings) -> list[State]:
    """Every hook state under the state folder, with what it belongs to and its size."""
    root = state_root(settings)
    try:
        entries = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    found = []
    for key in entries:
        path = root / key
        if not is_key(key) or not stat.S_ISDIR(os.lstat(path).st_mode):
            continue
        try:
            meta_path = root / f"{key}.json"
            meta = json.loads(meta_path.read_text())
            used = os.lstat(meta_path).st_mtime
        except (OSError, ValueError):
            meta, used = {}, 0.0
        found.append(
            State(
                key, path, str(meta.get("source", "?")), str(meta.get("hook", "?")),
                str(meta.get("workspace", "?")), size_of(path), used,
            )
        )  # fmt: skip
    return found


def clean(settings: Settings, key: str | None = None, everything: bool = False) -> list[State]:
    """Remove one state (`key`), all of them, or (neither) those whose workspace is gone
    and the session /tmp folders unused for `tmp_max_age`."""
    if key is not None and not is_key(key):
        raise ConfigError(f"{key!r} is not a state key (`sandboxrun state list` shows them)")
    found = states(settings)
    if key is not None:
        doomed = [s for s in found if s.key == key]
        if not doomed:
            raise ConfigError(f"no hook state {key} in {state_root(settings)}")
    elif everything:
        doomed = found
    else:
        doomed = [s for s in found if not os.path.isdir(s.workspace) or stale(settings, s)]
    return _remove_all(doomed)


def stale(settings: Settings, found: State) -> bool:
    """A session's /tmp nobody mounted for `tmp_max_age` seconds (a hook state never is:
    it is kept for as long as its workspace exists)."""
    return found.source == SESSION_TMP and time.time() - found.used > settings.tmp_max_age


def _remove_all(doomed: list[State]) -> list[State]:
    for s in doomed:
        try:
            remove(s.path)
        except OSError as exc:
            raise SandboxrunError(f"cannot remove hook state {s.path}: {exc.strerror}") from None
        (s.path.parent / f"{s.key}.json").unlink(missing_ok=True)
    return doomed


def is_key(text: str) -> bool:
    return len(text) == KEY_LENGTH and all(c in "0123456789abcdef" for c in text)
