"""What may be mounted into a hook's container, decided in one place.

Workspace roots come from events (`workspaceRoots`, `cwd`), which a hosted platform
fills from what its users send; hook folders come from settings files a repository
writes. Either could name a folder the hook has no business reading (a database's
files, TLS keys, the user's home with `~/.ssh`) or one that would shadow the
image's own programs (`/usr/local/bin`). So every root is checked here:

- never `/`, a system folder or anything below one (`/etc`, `/usr`, `/var/lib`...),
  nor the user's home or a folder above it;
- owned by the invoking user (root's own folders when root runs sandboxrun),
  unless it lies under one of the `allowed_roots` a platform configures.

A hook's file kept in such a place is mounted alone (the file, not its folder).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import ConfigError
from ._settings import account_home

# Folders that are the system's, whatever is below them: never a workspace, and never
# mounted whole over the image's own.
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
    "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/run", "/var/log", "/var/spool",
    "/var/cache", "/var/mail", "/var/backups", "/var/lock", "/snap",
)  # fmt: skip
# Folders that hold other people's folders: never a root themselves (below is fine).
SHARED_TOPS = ("/", "/home", "/var", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var/tmp")
# The hook's own home: a private tmpfs, the only writable folder but /tmp. Not the user's
# home path: workspaces usually live below that, and the sandbox allows writes (FIFOs
# included) only below the hook's own folders (see images/sandboxrun-seccomp.c).
HOOK_HOME = "/home/hook"
# Never mountable, even under allowed_roots: the kernel's and the engine's interfaces.
NEVER = ("/proc", "/sys", "/dev", "/run", "/var/run", "/etc", "/boot")


def under(path: str, tops: Sequence[str]) -> str | None:
    for top in tops:
        if path == top or path.startswith(top.rstrip("/") + "/"):
            return top
    return None


def system_reason(real: str, home: str | None = None) -> str | None:
    """Why a folder (its real path) must not be mounted whole, or None."""
    home = os.path.realpath(home or account_home())
    top = under(real, SYSTEM_TREES)
    if top:
        return f"it is in the system folder {top}"
    if real in SHARED_TOPS:
        return "it is a shared top-level folder"
    if real == home or home.startswith(real.rstrip("/") + "/"):
        return "it is your home folder or holds it (with ~/.ssh and other credentials)"
    return None


def check_root(path: str, allowed: Sequence[str] = (), home: str | None = None) -> str:
    """The absolute path of a workspace root that may be mounted, else `ConfigError`."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ConfigError(f"workspace root {path!r} is not a path")
    absolute = os.path.abspath(path)
    if not os.path.isdir(absolute):
        raise ConfigError(f"workspace {absolute!r} does not exist or is not a directory")
    real = os.path.realpath(absolute)
    if under(real, NEVER) or real == "/":
        raise ConfigError(f"workspace {absolute!r} refused: it is a system folder")
    if under(real, allowed):
        return absolute
    why = system_reason(real, home)
    if why is None:
        owner = os.stat(real).st_uid
        if owner != os.getuid():
            why = f"it is owned by uid {owner}, not by you (uid {os.getuid()})"
    if why:
        raise ConfigError(
            f"workspace {absolute!r} refused: {why}; a platform can allow it with allowed_roots"
        )
    return absolute


def mountable_file(path: str) -> bool:
    """Whether a file a hook command names may be mounted at its path: not the kernel's,
    the engine's or the system's own files (the image has its own), except what users
    install themselves under /usr/local."""
    real = os.path.realpath(path)
    if under(real, NEVER):
        return False
    return not under(real, SYSTEM_TREES) or under(real, ("/usr/local",)) is not None


def hook_mount(path: str, home: str | None = None) -> str:
    """What to mount so a hook file (its real path) is there: its folder, or the file
    alone when the folder is a system folder or the home."""
    folder = os.path.dirname(path)
    return path if system_reason(os.path.realpath(folder), home) else folder


def home_cover(mounts: Sequence[str]) -> str | None:
    """The user's home path, when something is mounted below it: the container then gets
    an empty, read-only tmpfs there, so the path can be walked (an image's 0700 `/root`
    would make `~/.claude/hooks` unreachable) and nothing else of the home shows."""
    home = os.path.realpath(account_home())
    if home == "/" or under(home, SYSTEM_TREES) or under(home, NEVER) or home == HOOK_HOME:
        return None
    return home if any(under(os.path.abspath(m), (home,)) for m in mounts) else None


def transcript_file(event: Mapping[str, Any], home: str, agent_dir: str) -> str | None:
    """The transcript an agent names in `transcript_path`, when it is a regular file in the
    agent's own transcript folder (`~/.claude/projects`): mounted read-only for the hooks
    that read it (Stop hooks). Never an arbitrary path from the event."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
        return None
    folder = os.path.realpath(os.path.join(home, agent_dir, "projects"))
    real = os.path.realpath(path)
    if real != folder and under(real, (folder,)) and os.path.isfile(real):
        return path
    return None
