"""What may be mounted into a hook's container, decided in one place.

Workspace roots come from events (`workspaceRoots`, `cwd`), which a hosted platform
fills from what its users send; hook folders come from settings files a repository
writes. Either could name a folder the hook has no business reading (a database's
files, TLS keys, the user's home with `~/.ssh`) or one that would shadow the
image's own programs (`/usr/local/bin`). So every root is checked here:

- never `/`, a system folder or anything below one (`/etc`, `/usr`, `/var/lib`...),
  nor the user's home or a folder above it;
- never a dot-folder of the home or anything below one (`~/.ssh`, `~/.config`,
  `~/.aws`, `~/.claude`...: credentials and settings, each tool's own; a hook gets the
  few agent paths it needs by their own code paths, never as a root), unless the user
  lists that folder (or one inside it) in `allowed_roots`;
- never sandboxrun's own files, nor a folder that holds them: the state folder (other
  workspaces' hook states), the data and cache folders, and a server's socket folder,
  token and config file;
- owned by the invoking user (root's own folders when root runs sandboxrun),
  unless it lies under one of the `allowed_roots` a platform configures;
- where `allowed_roots` is set, at or below one of its folders: it confines as well
  as admits. A server's own `allowed_roots` (`serve` registers them at start-up,
  `serving`) confine every request it answers, whatever config the request names.

A tenant's run (a request over serve's TCP listener) is given nothing of the server's
account: of what is mounted for it, only what lies below the allowed_roots (`for_tenant`),
and the server's own hooks' folders for those hooks alone.

A hook's file kept in such a place is mounted alone (the file, not its folder).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _userconfig
from .._errors import ConfigError
from .._log import logger
from .._settings import Settings, account_home
from .._userconfig import default_socket

if TYPE_CHECKING:
    from .._dialects.base import Dialect

# Folders that are the system's, whatever is below them: never a workspace, and never
# mounted whole over the image's own.
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
    "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/run", "/var/log", "/var/spool",
    "/var/cache", "/var/mail", "/var/backups", "/var/lock", "/snap",
)  # fmt: skip
# Folders that hold other people's folders: never a root themselves (below is fine).
SHARED_TOPS = ("/", "/home", "/var", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var/tmp")
# The hook's home when the user's own home path cannot be one (see `home_layout`), and a
# hook state's when something is mounted below the user's home.
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


@dataclass(frozen=True, slots=True)
class _Server:
    """What a `serve` process registered at start-up (`serving`)."""

    own: tuple[str, ...] = ()  # its config file, socket folder and token file
    confine: tuple[str, ...] = ()  # its own allowed_roots: every request stays below them


_server = _Server()


def serving(own: Sequence[str], confine: Sequence[str]) -> None:
    """Called once by `serve` before it answers: its own files are never a root, and
    its `allowed_roots` confine every request (a request may name a config file of its
    own, whose `allowed_roots` could only narrow them)."""
    global _server
    _server = _Server(tuple(os.path.abspath(p) for p in own if p), tuple(confine))


def confined(path: str) -> bool:
    """Whether `path` (its real path) lies at or below the allowed_roots of the server
    answering (`serving`); always, outside `serve`. A project found by walking up from a
    root never leaves them (`_dialects.claude.settings.project_root`)."""
    tops = _server.confine
    return not tops or under(os.path.realpath(path), tops) is not None


def for_tenant(paths: Sequence[str], settings: Settings) -> tuple[str, ...]:
    """What of `paths` (mount sources) a tenant's run may be given: each whose real path
    lies at or below the allowed_roots (the server's, `serving`, and the settings', each
    where set: any of their folders; with neither set, nothing) and is neither nor holds
    sandboxrun's own files. Nothing else, whatever named it (a command's words, an
    event's paths, a plugin root): the rest is left out, each named in a warning.
    Per-tenant roots are out of scope: a tenant may be given what lies below any of the
    allowed_roots."""
    tops = [t for t in (_server.confine, settings.allowed_roots) if t]
    own = [os.path.realpath(p) for p in (*own_files(settings), *_server.own)]
    kept = []
    for path in paths:
        real = os.path.realpath(path)
        if (
            tops
            and all(under(real, t) for t in tops)
            and not any(under(real, (o,)) or under(o, (real,)) for o in own)
        ):
            kept.append(path)
        else:
            logger.warning("not mounted for a TCP request: {} (only what lies below the"
                           " server's allowed_roots is)", path)  # fmt: skip
    return tuple(kept)


def own_files(settings: Settings) -> tuple[str, ...]:
    """sandboxrun's own files and folders for these settings, never a workspace root nor
    inside one: the hook states (other workspaces' private homes), the data folder (what
    `install` recorded), the cache and config folders, the server's socket and token."""
    from .state import state_root

    home = account_home()
    return tuple(
        path
        for path in (
            str(state_root(settings)),
            _userconfig.data_dir(home),
            os.path.join(home, ".cache", "sandboxrun"),
            os.path.join(home, ".config", "sandboxrun"),
            os.path.dirname(default_socket()),
            os.path.dirname(settings.serve_socket) if settings.serve_socket else "",
            settings.serve_token_file or "",
        )
        if path
    )


def workspace_root(path: str, settings: Settings) -> str:
    """`check_root` under the user's settings: their `allowed_roots`, their own files."""
    return check_root(path, settings.allowed_roots, own=own_files(settings))


def check_root(
    path: str, allowed: Sequence[str] = (), home: str | None = None, own: Sequence[str] = ()
) -> str:
    """The absolute path of a workspace root that may be mounted, else `ConfigError`
    (the module docstring's rules). `own`: sandboxrun's own files (`own_files`)."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ConfigError(f"workspace root {path!r} is not a path")
    absolute = os.path.abspath(path)
    if not os.path.isdir(absolute):
        raise ConfigError(f"workspace {absolute!r} does not exist or is not a directory")
    real = os.path.realpath(absolute)
    if under(real, NEVER) or real == "/":
        raise ConfigError(f"workspace {absolute!r} refused: it is a system folder")
    server = _server.confine
    for tops, whose in ((allowed, "allowed_roots"), (server, "the server's allowed_roots")):
        if tops and not under(real, tops):
            raise ConfigError(
                f"workspace {absolute!r} refused: it is not below {whose} ({', '.join(tops)})"
            )
    why = _home_reason(real, os.path.realpath(home or account_home()), allowed)
    for mine in (*own, *_server.own):
        theirs = os.path.realpath(mine)
        if not why and (under(real, (theirs,)) or under(theirs, (real,))):
            why = f"it is or holds sandboxrun's own {mine}"
    if why:
        raise ConfigError(f"workspace {absolute!r} refused: {why}")
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


def _home_reason(real: str, home: str, allowed: Sequence[str]) -> str | None:
    """Why a root (its real path) must not be mounted for what it is in the user's home:
    the home itself or a folder that holds it, or a dot-folder of the home (`~/.ssh`)
    or a folder below one. An `allowed_roots` entry admits the home or a dot-folder only
    when it lies inside it: one that merely holds it (`/home`) admits the folders of
    others, never the user's own credentials."""
    if under(home, (real,)) and real != home:
        return "it holds your home folder (with ~/.ssh and other credentials)"
    if real == home:
        guarded, what = home, "it is your home folder (with ~/.ssh and other credentials)"
    else:
        below = os.path.relpath(real, home).split(os.sep)[0] if under(real, (home,)) else ""
        if not below.startswith("."):
            return None
        guarded = os.path.join(home, below)
        what = f"it is in ~/{below}, a dot-folder of your home (credentials and settings)"
    if any(under(real, (a,)) and under(a, (guarded,)) for a in allowed):
        return None
    return f"{what}; list it in allowed_roots in your config to allow it"


# A `.git` file, a worktree folder's `gitdir` or `commondir`: a line with a path.
GIT_FILE_MAX = 4096


def git_folders(roots: Sequence[str], settings: Settings) -> tuple[list[str], list[str]]:
    """What git needs beyond the workspace to answer about each root that is a linked
    worktree (its `.git` a file: `gitdir: <common>/worktrees/<name>`): the common git
    folder, which holds that worktree's own folder, to mount read-only at its path; and a
    note for each `.git` file not followed (why). Nothing else of the main checkout (its
    working tree) and nothing for a root whose `.git` is a folder, a link or absent.

    The `.git` file is the repository's to shape, so it is followed only to a real
    `<common>/worktrees/<name>` folder outside the workspace whose `gitdir` file points
    back at this root's `.git` and whose `commondir` is `<common>`, a real git folder
    (HEAD, objects, refs) that neither is nor holds the workspace; both folders pass
    `workspace_root` (allowed places, the home's dot-folders, sandboxrun's own files, a
    server's allowed_roots). A submodule's `.git` file (`.git/modules/<name>`) is not
    followed either: git inside says it is not a repository, as it did before."""
    found: list[str] = []
    notes: list[str] = []
    for root in roots:
        dotgit = os.path.join(root, ".git")
        try:
            if not stat.S_ISREG(os.lstat(dotgit).st_mode):
                continue
        except OSError:
            continue
        try:
            common = _worktree_common(root, settings)
        except ConfigError as exc:
            notes.append(f"git folder of {root} not mounted: {exc}")
            continue
        if common not in found:
            found.append(common)
    return found, notes


def _worktree_common(root: str, settings: Settings) -> str:
    """The common git folder of the linked worktree at `root` (`git_folders`' rules),
    else `ConfigError` saying why not."""
    dotgit = os.path.join(root, ".git")
    text = _git_line(dotgit)
    if not text.startswith("gitdir: "):
        raise ConfigError(f"{dotgit} is not a `gitdir: PATH` file")
    named = os.path.normpath(os.path.join(root, text[len("gitdir: ") :]))
    gitdir, real_root = os.path.realpath(named), os.path.realpath(root)
    common = os.path.dirname(os.path.dirname(named))
    real_common = os.path.realpath(common)
    if (
        not os.path.isdir(gitdir)
        or os.path.basename(os.path.dirname(gitdir)) != "worktrees"
        or os.path.dirname(os.path.dirname(gitdir)) != real_common
    ):
        raise ConfigError(f"{named!r} is not a worktree's folder (<git folder>/worktrees/<name>)")
    if under(gitdir, (real_root,)) or under(real_root, (real_common,)):
        raise ConfigError(f"{named!r} is inside the workspace, or its git folder holds it")
    back = os.path.join(gitdir, _git_line(os.path.join(gitdir, "gitdir")))
    if os.path.realpath(back) != os.path.join(real_root, ".git"):
        raise ConfigError(f"{named!r} belongs to another worktree ({back})")
    if os.path.realpath(os.path.join(gitdir, _git_line(os.path.join(gitdir, "commondir")))) != (
        real_common
    ):
        raise ConfigError(f"{named!r}: its commondir is not {common!r}")
    if not (
        os.path.isfile(os.path.join(real_common, "HEAD"))
        and all(os.path.isdir(os.path.join(real_common, d)) for d in ("objects", "refs"))
    ):
        raise ConfigError(f"{common!r} is not a git folder (HEAD, objects, refs)")
    workspace_root(named, settings)
    return workspace_root(common, settings)


def _git_line(path: str) -> str:
    """The one line of a small regular file (git's `.git`, `gitdir` and `commondir`
    files), opened without following a link or waiting on a FIFO; `ConfigError` if the
    file is anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    try:
        data = os.read(fd, GIT_FILE_MAX + 1) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)
    line = data.decode("utf-8", "replace").rstrip("\r\n")
    if not line or len(data) > GIT_FILE_MAX or any(c in line for c in "\x00\n\ufffd"):
        raise ConfigError(f"{path} is not one line naming a path")
    return line


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


# The folders below the home a hook may write, each a small tmpfs of its own: the agents'
# (a logger's `~/.claude/log`) and the usual tool caches. Not the home itself when
# something the user did not make for hooks is mounted below it (see `home_layout`).
HOME_FOLDERS = (
    ".claude", ".qoder", ".qoder-cn", ".cline", "Documents/Cline", "Documents/.agents",
    ".codex", ".copilot", ".cursor", ".gemini", ".factory", ".qwen", ".codebuddy", ".iflow",
    ".augment", ".trae", ".trae-cn", ".kiro", ".cache", ".config", ".local", ".npm", ".agents",
    ".codeium", ".windsurf",  # windsurf
)  # fmt: skip
# The user's own hook places below those: a hook folder, a plugin or a transcript mounted
# there leaves its agent folder writable (their FIFOs, if any, are the user's own doing).
HOOK_PLACES = (
    *(f"{d}/{p}" for d in (".claude", ".qoder", ".qoder-cn") for p in ("hooks", "plugins",
                                                                       "projects")),
    *(f"{d}/{p}" for d in (".factory", ".qwen", ".codebuddy", ".iflow", ".augment",
                           ".config/devin", ".trae", ".trae-cn") for p in ("hooks", "projects")),
    ".cline/hooks", "Documents/Cline/Hooks", "Documents/.agents/hooks",
    ".codex/hooks", ".codex/sessions", ".copilot/hooks", ".copilot/session-state",
    ".cursor/hooks", ".cursor/projects",
    ".gemini/hooks", ".gemini/extensions", ".gemini/tmp", ".agents/plugins", ".kiro/hooks",
    ".config/crush/hooks",
    ".codeium/windsurf/hooks", ".codeium/hooks", ".windsurf/transcripts",  # windsurf
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HomeLayout:
    """The hook's home inside the container (see `home_layout`)."""

    home: str  # $HOME
    tmpfs: tuple[str, ...]  # empty tmpfs mounts, outermost first, owned by the hook
    writable: tuple[str, ...]  # what Landlock lets the hook write below them
    state_at: str | None = None  # where the hook's state folder is bound, if it has one


def sandbox_home() -> str:
    """$HOME inside: the user's own home path (so `~/.claude/...` in events and
    allow-lists means the same inside), or HOOK_HOME when that path cannot be one."""
    real = os.path.realpath(account_home())
    unfit = real in SHARED_TOPS or under(real, SYSTEM_TREES) or under(real, NEVER)
    return HOOK_HOME if unfit else real


def home_layout(mounts: Sequence[str], state: bool = False) -> HomeLayout:
    """What a hook's home looks like: an empty tmpfs at the user's home path (nothing of
    the real home shows but what is mounted), with the `HOME_FOLDERS` in it writable.

    Landlock allows writes by folder tree, across the mount points below: granting a
    folder would make host FIFOs in any folder mounted below it writable. So the home
    itself is granted only when nothing but the user's own hook places lies below it,
    and each of its folders likewise; a workspace at `~/proj` leaves `~` unwritable but
    `~/.claude` writable. A hook with state gets its folder at the home when nothing at
    all is mounted below it (nothing is then made inside the state), else at HOOK_HOME,
    which is then its $HOME, as before.
    """
    real = sandbox_home()
    targets = [os.path.abspath(m) for m in mounts]
    if real == HOOK_HOME or under(real, targets):  # a platform's root holds the home
        return HomeLayout(HOOK_HOME, () if state else (HOOK_HOME,), (HOOK_HOME,),
                          HOOK_HOME if state else None)  # fmt: skip
    below = [t for t in targets if under(t, (real,))]
    if state and not below:
        return HomeLayout(real, (), (real,), real)
    places = [os.path.join(real, p) for p in HOOK_PLACES]
    risky = [t for t in below if not (os.path.isfile(t) or under(t, places))]
    folders, writable = [], [] if risky else [real]
    for sub in HOME_FOLDERS:
        path = os.path.join(real, sub)
        if under(path, below):
            continue  # the user's own files are mounted there: never covered
        folders.append(path)
        inside = [t for t in risky if under(t, (path,))]
        if inside:
            logger.debug("{} not writable: {} is mounted below it", path, inside[0])
        else:
            writable.append(path)
    if risky:
        logger.debug("{} not writable (its folders may be): {} is mounted below it", real, risky[0])
    if state:
        return HomeLayout(HOOK_HOME, (real, *folders), (*writable, HOOK_HOME), HOOK_HOME)
    return HomeLayout(real, (real, *folders), tuple(writable))


def agent_transcript(dialect: Dialect, event: Mapping[str, Any], home: str) -> str | None:
    """The transcript an event names, if it is in the agent's own transcript folder
    (`Dialect.transcript`: `transcript_file` below its folder, or its own rule)."""
    found = dialect.transcript(event, home)
    return found if isinstance(found, str) else None


def transcript_file(
    event: Mapping[str, Any], home: str, agent_dir: str, folder_name: str = "projects"
) -> str | None:
    """The transcript an agent names in `transcript_path`, when it is a regular file in the
    agent's own transcript folder (`~/.claude/projects`, Codex's `~/.codex/sessions`):
    mounted read-only for the hooks that read it (Stop hooks). Never an arbitrary path
    from the event."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
        return None
    folder = os.path.realpath(os.path.join(home, agent_dir, folder_name))
    real = os.path.realpath(path)
    if real != folder and under(real, (folder,)) and os.path.isfile(real):
        return path
    return None
