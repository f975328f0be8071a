#!/usr/bin/env python3
"""Block destructive shell commands: `rm -r` of `/`, `~` or `$HOME` (and `/*`, `~/*`), and
`git push --force` (`-f`, `--force-with-lease`, a `+branch` refspec) to a protected branch.

Cline: PreToolUse on `execute_command` (the CLI: `run_commands`); Claude Code: PreToolUse with matcher `Bash`.
Each part of a command line (`;`, `&&`, `||`, `|`, newlines) is judged, after `sudo`,
`env`, `VAR=value` prefixes. Pushing with no branch named counts as pushing the current
branch (git's default), read from the workspace's git.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # hooks run in a read-only workspace; leave nothing behind
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from hookio import allow, block, read_event, tool_call, workspace  # noqa: E402

PROTECTED = {"main", "master"}
PREFIXES = {"sudo", "env", "command", "exec", "nohup", "time", "nice"}
PREFIX_VALUE_OPTIONS = {"-u", "-g", "-n", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}
HOME_TARGETS = {"", "~", "$HOME", "${HOME}"}  # after trailing `/` and `/*` are dropped


def simple_commands(text: str) -> list[list[str]]:
    """The words of each simple command in a command line."""
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words = [], []
    try:
        for token in lexer:
            if token and set(token) <= set(";&|()"):
                commands.append(words)
                words = []
            else:
                words.append(token)
    except ValueError:  # unbalanced quotes: judge the plain words
        return [text.split()]
    commands.append(words)
    return [strip_prefixes(c) for c in commands if c]


def strip_prefixes(words: list[str]) -> list[str]:
    """The command without `sudo -u x`, `env`, `VAR=value`... in front."""
    while words:
        first = words[0]
        if first in PREFIXES or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", first):
            words = words[1:]
        elif first.startswith("-"):  # an option of a prefix, with its value if it takes one
            words = words[2:] if first in PREFIX_VALUE_OPTIONS else words[1:]
        else:
            break
    return words


def rm_danger(words: list[str]) -> str | None:
    if not words or os.path.basename(words[0]) != "rm":
        return None
    options = [w for w in words[1:] if w.startswith("-")]
    recursive = any(
        w in ("--recursive",) or (not w.startswith("--") and ("r" in w or "R" in w))
        for w in options
    )
    if not recursive:
        return None
    for target in (w for w in words[1:] if not w.startswith("-")):
        if re.sub(r"(/\*?)+$", "", target) in HOME_TARGETS:
            return f"`{' '.join(words)}` deletes {target} recursively"
    return None


def push_danger(words: list[str], root: str) -> str | None:
    if len(words) < 2 or os.path.basename(words[0]) != "git" or "push" not in words:
        return None
    args = words[words.index("push") + 1 :]
    force = any(
        a in ("--force", "--force-if-includes") or a.startswith("--force-with-lease")
        or (a.startswith("-") and not a.startswith("--") and "f" in a)
        for a in args
    )  # fmt: skip
    positional, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "--push-option", "--repo", "--receive-pack", "--exec"):
            skip = True
        elif not a.startswith("-"):
            positional.append(a)
    refspecs = positional[1:]
    targets = []
    for spec in refspecs:
        force = force or spec.startswith("+")
        target = spec.lstrip("+").split(":")[-1].removeprefix("refs/heads/")
        targets.append(current_branch(root) if target == "HEAD" else target)
    if not refspecs:
        targets.append(current_branch(root))
    hit = sorted(t for t in targets if t in PROTECTED)
    if force and hit:
        return f"`{' '.join(words)}` force-pushes to the protected branch {hit[0]}"
    return None


def current_branch(root: str) -> str:
    """The branch checked out in `root` ("" when git cannot tell)."""
    try:
        done = subprocess.run(
            ["git", "-c", f"safe.directory={root}", "-C", root, "symbolic-ref", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def main() -> None:
    event = read_event()
    command = tool_call(event).command
    if command:
        for words in simple_commands(command):
            why = rm_danger(words) or push_danger(words, workspace(event))
            if why:
                block(event, f"Blocked by policy (destructive command): {why}.")
    allow(event)


if __name__ == "__main__":
    main()
