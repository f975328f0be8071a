"""`CLAUDE_ENV_FILE`: what a hook may hand on to the agent's later Bash commands.

Claude Code gives SessionStart, Setup, CwdChanged and FileChanged hooks a file in
`~/.claude/session-env/<session>/` and *sources it in bash, on the host,* before each of
its Bash commands. Whatever sandboxrun copies there is code the host runs, and a variable
that names a config file or folder is code too (`XDG_CONFIG_HOME` pointing at a
repository's `git/config` with a `core.fsmonitor` runs it at the agent's next `git
status`). So:

- the hook writes to a per-run, empty host file of ours, bound read-write at a neutral
  path (`TARGET`), never to the agent's file; the backend bounds how large it can grow
  (Docker: `fsize`, `_backends/docker/spec.py`, and a watch, `docker/stream.py`;
  Kubernetes refuses it);
- afterwards the file is read (at most `MAX_BYTES`, else nothing is taken) and parsed
  strictly: each line `export NAME=VALUE` or `NAME=VALUE`, NAME on the user's allowlist
  (`Settings.env_file_allow`, from the user's config file only; `DEFAULT_ALLOW` by
  default: names that load no code), VALUE a literal (unquoted without shell
  metacharacters, or single or double quoted without `$`, backquotes or backslashes)
  that names no file a repository controls (`_points_into`). Blank lines and `#`
  comments are skipped; anything else is refused and reported by name;
- accepted lines are appended, re-quoted with `shlex.quote`, to the agent's file, and
  only for hooks the user trusts (`run`: user, explicit and plugin hooks; `exec`: a
  command without `--untrusted`, whatever `trust_workspace_decisions` says). The agent's
  file must be one Claude Code made: a regular file (or not yet there) in
  `~/.claude/session-env/`, so a variable a repository sets cannot point the copy at
  another file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._dialects.base import Dialect, from_repository
from .._text import printable
from .._types import ExecRequest
from .mounts import under

# Where the hook finds its file inside the sandbox (bound to a host file of ours).
TARGET = "/run/sandboxrun/claude-env.sh"
VAR = "CLAUDE_ENV_FILE"
EVENTS = frozenset({"SessionStart", "Setup", "CwdChanged", "FileChanged"})
MAX_BYTES = 64 << 10  # a real env file is a few lines; more is refused whole
# Sources whose lines reach the agent's file (`hands_on`); the others are reported, dropped.
TRUSTED_SOURCES = frozenset({"user", "explicit", "plugin"})

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE = re.compile(r"(?:export[ \t]+)?([^=\s]+)=(.*)")
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]*")  # an unquoted value the shell keeps as is
_QUOTED = re.compile(r"'([^']*)'|\"([^\"$`\\]*)\"")


def hands_on(source: str) -> bool:
    """Whether a hook of `source` may hand lines on to the agent's file, for `run` and
    `exec` alike: never a repository's (`from_repository`: whatever
    `trust_workspace_decisions` says, which restores decisions only), and of the others
    only the user's own (`TRUSTED_SOURCES`)."""
    return source in TRUSTED_SOURCES and not from_repository(source)


def given(dialect: Dialect, hook_name: str) -> bool:
    """Whether the agent hands a hook of `hook_name` a CLAUDE_ENV_FILE (one it reads
    after the hook): the same rule for `run` and `exec`."""
    return dialect.env_file_dir is not None and hook_name in EVENTS


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a hook's env file holds: the accepted (name, value) pairs, the refusals."""

    accepted: tuple[tuple[str, str], ...] = ()
    refused: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The accepted pairs as the agent's file gets them: re-quoted, one a line."""
        return [f"export {name}={shlex.quote(value)}\n" for name, value in self.accepted]

    def report(self) -> dict[str, list[str]]:
        return {"copied": [n for n, _ in self.accepted], "refused": list(self.refused)}


def places(request: ExecRequest) -> tuple[str, ...]:
    """What a value must not point into: everything the hook had mounted (the workspace,
    the files and folders its command named, the transcript) and the host folders it
    could write (its state, its plugin data). Only these are known to hold files a
    repository (or the hook) chose."""
    private = (source for _, source in request.private_dirs if source)
    return tuple(p for p in (*request.mounts, request.state, *private) if p)


def parse(text: str, allow: Collection[str], inside: Sequence[str] = ()) -> Parsed:
    """The strict reading of an env file (module docstring): names on `allow` only,
    values that point into none of `inside` (`places`)."""
    accepted: list[tuple[str, str]] = []
    refused: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        why = None
        match = _LINE.fullmatch(line)
        if match is None:
            why = "not an `export NAME=VALUE` line"
        elif not _NAME.fullmatch(match[1]):
            why = f"{printable(match[1][:40])!r} is not a plain variable name"
        elif match[1] not in allow:
            why = f"{match[1]} is not in env_file_allow"
        else:
            value = _literal(match[2])
            if value is None or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
                why = f"{match[1]}: the value is not a literal ($, `, \\ or shell syntax)"
            else:
                why = _points_into(value, inside)
                if why is None:
                    accepted.append((match[1], value))
                    continue
                why = f"{match[1]}: {why}"
        refused.append(f"line {number}: {why}")
    return Parsed(tuple(accepted), tuple(refused))


# What separates paths in a value: `a:b` lists, `--opt=/x`, `a,b`, words of a quoted one.
_PIECES = re.compile(r"[:=,;\s]+")
# A URL: a file URL stands for its path; any other names a host, not a file of ours.
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/\s,;]*)([^\s,;]*)")


def _points_into(value: str, inside: Sequence[str]) -> str | None:
    """Why `value` may name a file a repository controls, or None.

    Conservative, since a value's meaning depends on the program that reads it: every
    piece of it (split at `:`, `=`, `,`, `;` and blanks; a `file://` URL is its path,
    other URLs name hosts, not files, and are skipped) that is a relative path (holds a
    `/`, is `.` or `..`, starts with `~`: the agent would read it from whatever folder it
    is in) is refused, and so is an absolute one that is, or lies below, a path in
    `inside`, as written or once links are resolved. Other absolute paths pass: the
    hook could not write there. A value naming another workspace of yours cannot be
    told from a path you chose: that is what the name allowlist is for.
    """
    tops = [os.path.normpath(p) for p in inside] + [os.path.realpath(p) for p in inside]
    value = _URL.sub(lambda m: m[3] or "/" if m[1].lower() == "file" else " ", value)
    for piece in _PIECES.split(value):
        if piece in (".", "..") or piece.startswith("~") or ("/" in piece and piece[0] != "/"):
            return f"{printable(piece[:80])!r} is a relative path"
        if piece.startswith("/") and (
            under(os.path.normpath(piece), tops) or under(os.path.realpath(piece), tops)
        ):
            return f"{printable(piece[:80])!r} points into the workspace or a folder of the hook"
    return None


def _literal(text: str) -> str | None:
    """The value a literal VALUE stands for, or None when the shell would compute it."""
    if _PLAIN.fullmatch(text):
        return text
    parts = []
    position = 0
    for m in _QUOTED.finditer(text):  # 'a'"b"c: quoted runs, plain runs between them
        between = text[position : m.start()]
        if not _PLAIN.fullmatch(between):
            return None
        parts += [between, m[1] if m[1] is not None else m[2]]
        position = m.end()
    rest = text[position:]
    if position == 0 or not _PLAIN.fullmatch(rest):
        return None
    return "".join(parts) + rest


def new_file(uid: int, gid: int) -> str:
    """A new, empty host file for one hook run, writable only by the hook's uid, in a
    0700 folder of ours: no other process of that uid on the host can reach it."""
    folder = tempfile.mkdtemp(prefix="sandboxrun-env-")
    path = os.path.join(folder, "claude-env.sh")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        if (os.getuid(), os.getgid()) != (uid, gid):
            os.fchown(fd, uid, gid)
    finally:
        os.close(fd)
    return path


def discard(path: str) -> None:
    """Remove a file of `new_file`, and its folder."""
    Path(path).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))


def collect(path: str, allow: Collection[str], inside: Sequence[str] = ()) -> Parsed:
    """Read back and `parse` what the hook wrote to `path`, then delete the file. Opened
    without following links or blocking; more than `MAX_BYTES` is refused whole."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        discard(path)
        return Parsed(refused=(f"the env file could not be read: {exc.strerror}",))
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return Parsed(refused=("the env file is not a regular file",))
            raw = f.read(MAX_BYTES + 1)
    finally:
        discard(path)
    if len(raw) > MAX_BYTES:
        return Parsed(refused=(f"the env file holds more than {MAX_BYTES} bytes: nothing taken",))
    return parse(raw.decode("utf-8", "replace"), allow, inside)


def agent_file(path: str | None, home: str, user_dir: str = ".claude") -> str | None:
    """`path` when it may receive lines: the agent's own session-env file (see module
    docstring); None (with nothing to copy to) when not given. `ValueError` says why a
    given path is refused."""
    if not path:
        return None
    if not os.path.isabs(path) or "\0" in path:
        raise ValueError(f"{VAR} {path!r} is not an absolute path")
    folder = os.path.realpath(os.path.join(home, user_dir, "session-env"))
    real_parent = os.path.realpath(os.path.dirname(path))
    if not under(real_parent, (folder,)):
        raise ValueError(f"{VAR} {path!r} is not in the agent's session-env folder {folder}")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        raise ValueError(f"{VAR} {path!r} is not a regular file")
    return path


def append(target: str, lines: Iterable[str]) -> None:
    """Append `lines` to the agent's file (made 0600 if missing), never through a link."""
    text = "".join(lines)
    if not text:
        return
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags | os.O_NONBLOCK, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{target} is not a regular file")
        f.write(text)


def copied_lines(parsed: Sequence[Parsed]) -> list[str]:
    return [line for p in parsed for line in p.lines()]
