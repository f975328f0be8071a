"""Before a hook runs: does what it needs exist inside the sandbox?

A hook whose interpreter is not in the image, or whose script is not mounted, would
exit 127 (or python's 2) inside: for Claude Code a non-blocking error or a deny, i.e.
a guard that silently allows, or blocks everything. So it is not run; its outcome is
`error` with one sentence naming what is missing, which `--fail-closed` turns into a
block in the agent's own terms.

What is checked, in the command string the agent gives the shell (`/bin/sh -c ...`):

- the first word of the first simple command, after `NAME=value` assignments, `exec`
  and `env` with its options: a bare name must be an executable on the image's PATH;
  a path must be mounted (or be in the image);
- a file it names that lies under the mounts (a Cline hook file, `./hooks/guard.sh`):
  its shebang's interpreter (`#!/usr/bin/env node`, `#!/bin/bash`), read from at most
  the first `SHEBANG_BYTES` bytes of a regular file;
- the script argument of an interpreter (`python3 SCRIPT`, `bash SCRIPT`, `node SCRIPT`,
  `uv run [--script] SCRIPT.py`): outside the mounts and not in the image, it is not
  mounted.

What is not guessed (the hook runs and the sandbox reports what happens): a first
word that is a shell builtin or construct (`if`, `[`, `for`, `{`, `(`, `cd`, `echo`...),
a `$VAR` the hook's own environment does not set, `$(...)`, backquotes, `~`, globs,
files below a mount that do not exist (they would be missing unsandboxed too), and
paths deeper in the image than its listing reaches (`ImageTools.has` says unknown).
One command substitution is read, as written and nothing else: `$(git rev-parse
--show-toplevel)` (or in backquotes), how a Codex hook finds its repository (Codex sets
no project variable): the mounted folder holding the nearest `.git` from the workdir
up, when the image has git (what it prints inside); nothing is run to find it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .._backends.base import Backend
from .._backends.image_tools import ImageTools
from .._cache import cached
from .._errors import SandboxrunError
from .._text import printable
from .._types import HookSpec
from .mounts import under

SHEBANG_BYTES = 256  # the kernel reads no more of a script's first line
_SHELL = """! { } ( ) [ [[ ]] : . alias bg break builtin case cd command continue declare do
done echo elif else esac eval exit export false fc fg fi for function getopts hash if jobs
kill let local printf pwd read readonly return select set shift source test then time
trap true type typeset ulimit umask unalias unset until wait while"""
SHELL_WORDS = frozenset(_SHELL.split())  # builtins and constructs: not looked up
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=.*", re.S)
_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_UNSAFE_VALUE = re.compile(r"[\s'\"\\$`*?\[~]")
_PUNCTUATION = frozenset("();<>|&")
# The one command substitution read (`git_root`): as written, in either form.
GIT_ROOT = ("$(git rev-parse --show-toplevel)", "`git rev-parse --show-toplevel`")
# Per interpreter: (options whose next word is their value, options that give code inline).
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (frozenset({"-W", "-X", "--check-hash-based-pycs"}), frozenset({"-c", "-m"})),
    "sh": (frozenset({"-o", "+o", "-O", "+O"}), frozenset({"-c", "-s", "-i"})),
    "node": (
        frozenset({"-r", "--require", "--import", "--loader", "-C", "--conditions"}),
        frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive"}),
    ),
    "perl": (frozenset(), frozenset({"-e", "-E"})),
    "ruby": (frozenset(), frozenset({"-e"})),
}
_FAMILY = {"bash": "sh", "dash": "sh", "zsh": "sh", "ksh": "sh", "nodejs": "node", "tsx": "node"}
_UV = """--with --with-requirements --with-editable --python -p --project --directory
--index --extra --group --env-file --package -w"""
_UV_VALUES = frozenset(_UV.split())  # `uv run` options whose next word is their value


# What a shell, `env` or the kernel says of a command or interpreter it could not find
# (exit 127; 126 for a script's missing interpreter), the name in group 1: coreutils'
# and busybox's env (the name in curly or straight quotes), bash, dash, and bash's
# "bad interpreter".
_NOT_FOUND = (
    re.compile(rb"env: (?:can't execute )?\W{0,3}([\w.+-]+)\W{0,3}: No such file or directory"),
    re.compile(rb"^[^\n:]+: (?:line \d+: )?([^\s:]+): command not found$", re.M),
    re.compile(rb"^[^\n:]+: \d+: ([^\s:]+): not found$", re.M),
    re.compile(rb": ([^\s:]+): bad interpreter: No such file or directory"),
)
_TAIL = 8192  # the end of stderr, where the error that stopped it is (`_sandbox.hints.TAIL`)


def missing_on_start(
    stderr: bytes, exit_code: int | None, event: bytes = b"",
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:  # fmt: skip
    """Why a hook that exited 126 or 127 failed for the sandbox's sake, not its own:
    the command or interpreter its stderr says was not found is on this machine (a bare
    name on this process's PATH, an absolute path that can be run) but not in the
    sandbox (what `missing` cannot tell beforehand: a `$(...)`, an image it could not
    list). That is a sandbox failure, answered as one (the dialect's wrapper failure,
    a hook `error`), never the hook's answer (Gemini reads exit 127 with text as a
    deny). None: not so, the hook would fail the same way unsandboxed, and its exit
    code is its own. A line the event itself holds (a hook echoing it) is not read."""
    if exit_code not in (126, 127):
        return None
    tail = stderr[-_TAIL:]
    for pattern in _NOT_FOUND:
        for found in pattern.finditer(tail):
            if found.group(0) in event:
                continue
            name = found.group(1).decode("utf-8", "replace")
            here = os.access(name, os.X_OK) if os.path.isabs(name) else (
                "/" not in name and which(name) is not None)  # fmt: skip
            if here:
                where = "" if os.path.isabs(name) else f" ({which(name)})"
                return f"`{printable(name)}` is on this machine{where} but not in the sandbox"
    return None


def check_hook(
    spec: HookSpec, backend: Backend, ids: tuple[int, int] | None = None, groups: Sequence[int] = ()
) -> str | None:
    """Why `spec` cannot start in `backend`'s image, or None (it can, or we cannot tell).
    With `ids` (the hook's uid and gid), also whether that user can read its mounts."""
    tools = image_tools_of(backend)
    if tools is None:
        return None

    def check() -> str | None:
        why = missing(spec.argv, spec.workdir, spec.mounts, spec.env, tools)
        if why is None and ids is not None:
            why = unreadable(spec.mounts, spec.argv, ids, groups)
        return why

    # Under `serve`, kept while the hook's files and mounts stand (`_cache`); the image
    # is in the key (`ImageTools` names it by id, and its listing is its content).
    return cached("preflight", (spec, tools, ids, tuple(groups)), check)


def unreadable(
    mounts: Sequence[str], argv: Sequence[str], ids: tuple[int, int], groups: Sequence[int] = ()
) -> str | None:
    """Which mount (or the hook file itself) the hook's user could not read, or None.

    A mount keeps its host owner and mode inside. When sandboxrun runs as root, hooks run
    as nobody: a root-owned 0700 workspace (`mktemp -d`) would make every hook fail with
    "Permission denied", i.e. a guard that silently allows. Mode bits only: a path with
    an ACL is not judged (the ACL may grant what the bits deny).
    """
    uid, gid = ids
    wanted = [(m, os.R_OK | os.X_OK if os.path.isdir(m) else os.R_OK) for m in mounts]
    if argv and os.path.isabs(argv[0]) and under(argv[0], mounts):
        wanted.append((argv[0], os.R_OK | os.X_OK))
    for path, need in wanted:
        try:
            st = os.stat(path)
            if os.listxattr(path) and "system.posix_acl_access" in os.listxattr(path):
                continue
        except OSError:
            continue  # missing paths are `missing`'s business
        if uid == st.st_uid:
            bits = (st.st_mode >> 6) & 7
        elif gid == st.st_gid or st.st_gid in groups:
            bits = (st.st_mode >> 3) & 7
        else:
            bits = st.st_mode & 7
        if bits & need != need:
            who = "nobody (sandboxrun runs as root; hooks never do)" if uid == 65534 else ""
            return (
                f"{path} is not readable by the hook's user, uid {uid}{' ' + who if who else ''}"
                f" (mode {stat.S_IMODE(st.st_mode):o}, owner {st.st_uid}): make it readable"
                f" (e.g. chmod o+rx) or set `user` in your config"
            )
    return None


def image_tools_of(backend: Backend) -> ImageTools | None:
    """The backend's `image_tools()`; None for a backend written before it existed."""
    method = getattr(backend, "image_tools", None)
    return method() if callable(method) else None


def missing(
    argv: Sequence[str],
    workdir: str,
    mounts: Sequence[str],
    env: Mapping[str, str],
    tools: ImageTools,
) -> str | None:
    """One sentence naming what the command needs and the sandbox lacks, or None."""
    # `-lc`: Codex's login shell, the same command string
    if len(argv) >= 3 and argv[0] == "/bin/sh" and argv[1] in ("-c", "-lc"):
        toplevel = git_root(workdir, mounts) if "git" in tools.names else None
        words = first_command(argv[2], env, toplevel)
        if words is None:
            return None
    else:
        words = list(argv)
    return _Check(workdir, mounts, tools).command(words)


def first_command(
    command: str, env: Mapping[str, str], toplevel: str | None = None
) -> list[str] | None:
    """The words of the first simple command, `$NAME`s of `env` expanded (and `GIT_ROOT`
    as `toplevel`, when given); None when it cannot be read without guessing (an unset
    variable, any other `$(...)`, unbalanced quotes)."""
    expanded = _expand(command, env, toplevel)
    if expanded is None:
        return None
    lexer = shlex.shlex(expanded, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= _PUNCTUATION:
                break
            words.append(token)
    except ValueError:  # unbalanced quotes: the shell will say so inside
        return None
    return words


def git_root(workdir: str, mounts: Sequence[str]) -> str | None:
    """What `git rev-parse --show-toplevel` prints inside: the nearest folder from
    `workdir` up holding `.git`, if mounted (else None: not known here)."""
    folder = os.path.abspath(workdir)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder if under(folder, mounts) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _expand(command: str, env: Mapping[str, str], toplevel: str | None = None) -> str | None:
    """`command` with `$NAME`/`${NAME}` of `env` (and `GIT_ROOT`: `toplevel`) replaced,
    quotes respected; None if it has any other expansion, or a value that word
    splitting or quoting would change."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            out.append(command[i : i + 2])
            i += 2
            continue
        elif c in "$`" and toplevel is not None and command.startswith(GIT_ROOT, i):
            if _UNSAFE_VALUE.search(toplevel):
                return None
            out.append(toplevel)
            i += len(GIT_ROOT[0] if c == "$" else GIT_ROOT[1])
            continue
        elif c == "`":
            return None
        elif c == "$":
            m = _VAR.match(command, i)
            value = env.get(m[1] or m[2]) if m else None
            if m is None or value is None or _UNSAFE_VALUE.search(value):
                return None
            out.append(value)
            i = m.end()
            continue
        elif c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        out.append(c)
        i += 1
    return "".join(out)


def _guessed(word: str) -> bool:
    """Whether what the shell makes of `word` inside is not known here."""
    return word.startswith("~") or any(c in word for c in "*?[")


def shebang(path: str) -> list[str] | None:
    """The interpreter and its argument from a file's `#!` line, or None. Reads at most
    `SHEBANG_BYTES` of a regular file (never opens a FIFO or device: O_NONBLOCK, fstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, SHEBANG_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    interpreter, _, arg = line.partition(" ")
    return [interpreter, arg.strip()] if interpreter else None


class _Check:
    """The checks of one command against one image and one set of mounts."""

    def __init__(self, workdir: str, mounts: Sequence[str], tools: ImageTools) -> None:
        self.workdir, self.tools = workdir, tools
        self.mounts = [(os.path.abspath(m), os.path.realpath(m)) for m in mounts]

    def command(self, words: list[str]) -> str | None:
        words = _skip_wrappers(words)
        if not words or words[0] in SHELL_WORDS or _guessed(words[0]):
            return None
        first, args = words[0], words[1:]
        if "/" in first:
            why = self.file(first, "")
        elif first not in self.tools.names:
            return f"`{first}` is not in image {self.tools.image}"
        else:
            why = None
        return why or self.script(os.path.basename(first), args)

    def file(self, word: str, role: str) -> str | None:
        """A file the hook starts: mounted (and then its shebang's interpreter is in the
        image), or in the image."""
        path = os.path.normpath(os.path.join(self.workdir, word))
        mounted = self.mounted(path)
        if mounted is False:
            link = f" (it links to {os.readlink(path)})" if os.path.islink(path) else ""
            return f"{role}{path} is not mounted{link}"
        if mounted is None:
            return None
        head = shebang(path)
        return self.interpreter(head, path) if head else None

    def mounted(self, path: str, hops: int = 8) -> bool | None:
        """True: under a mount (and so is what it links to); False: outside every mount
        and not in the image; None: in the image, or not known.

        A link is followed one hop at a time, as the container will: a mounted
        `.venv/bin/python` -> /usr/bin/python3.11 leads into the image, not the host."""
        if not self.under(path):
            return False if self.tools.has(path) is False else None
        real = os.path.realpath(path)
        if self.under(real):
            return True
        if os.path.islink(path) and hops:
            target = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
            return self.mounted(target, hops - 1)
        return False if self.tools.has(real) is False else None

    def under(self, path: str) -> bool:
        return any(
            Path(path).is_relative_to(m) or Path(path).is_relative_to(r) for m, r in self.mounts
        )

    def interpreter(self, head: list[str], path: str) -> str | None:
        program, arg = head
        where = f"(the interpreter of {path})"
        if self.tools.has(program) is False and self.mounted(program) is not True:
            return f"`{program}` {where} is not in image {self.tools.image}"
        if os.path.basename(program) != "env":
            return None
        words = _skip_wrappers(["env", *arg.split()])
        if words and "/" not in words[0] and words[0] not in self.tools.names:
            return f"`{words[0]}` {where} is not in image {self.tools.image}"
        return None

    def script(self, program: str, args: list[str]) -> str | None:
        """The script an interpreter is given, if it names one: mounted or in the image."""
        found = _script_of(program, args)
        if found is None or _guessed(found):
            return None
        return self.file(found, "script ")


def _skip_wrappers(words: list[str]) -> list[str]:
    """The words from the program on: past `NAME=value`, `exec` and `env [OPTIONS]`
    (an `env -S`/`-C` that rewrites the command or the folder: nothing, not guessed)."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.fullmatch(word) or word == "exec":
            i += 1
        elif word == "env":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                if words[i].startswith(("-C", "--chdir")):
                    return []
                if words[i] in ("-S", "--split-string") and i + 1 < len(words):
                    # One argument, split by env: `#!/usr/bin/env -S uv run --script`.
                    words = [*words[: i + 1], *words[i + 1].split(), *words[i + 2 :]]
                i += 2 if words[i] in ("-u", "--unset") else 1
        else:
            break
    return words[i:]


def _script_of(program: str, args: list[str]) -> str | None:
    """The script argument of `program args`, or None when it gives no script file."""
    if program == "uv":
        if args[:1] != ["run"]:
            return None
        word = _first_operand(args[1:], _UV_VALUES, frozenset())
        return word if word and (word.endswith(".py") or "/" in word) else None
    family = "python" if re.fullmatch(r"python[\d.]*", program) else _FAMILY.get(program, program)
    if family not in _INTERPRETERS:
        return None
    values, inline = _INTERPRETERS[family]
    return _first_operand(args, values, inline)


def _first_operand(args: list[str], values: frozenset[str], inline: frozenset[str]) -> str | None:
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if word in inline:
            return None
        if not word.startswith(("-", "+")) or word in ("-", "+"):
            return None if word in ("-", "+") else word
        i += 2 if word in values else 1
    return None


def check_discovered(
    specs: Sequence[HookSpec], backend: Backend
) -> tuple[list[str | None], str | None]:
    """For `list` and `doctor`: why each hook cannot start (None: it can, or not known),
    and why nothing was checked (no engine answers, the image is missing...)."""
    if not specs:
        return [], None
    try:
        tools = image_tools_of(backend)
    except SandboxrunError as exc:
        return [None] * len(specs), f"interpreters not checked: {exc}"
    if tools is None:
        return [None] * len(specs), "interpreters not checked: the image probe failed"
    return [missing(s.argv, s.workdir, s.mounts, s.env, tools) for s in specs], None
