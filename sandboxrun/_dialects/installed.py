"""What `sandboxrun install` leaves in a Cline-family hook folder, recognised by the
readers that must tell it apart from a hook: discovery (a shim is not a hook to run in
the sandbox: there is no sandboxrun inside), `list` and `doctor`, and `uninstall`.

A shim is a file install's record (`_wrapped.Record`) holds byte for byte for that
path: a file a repository shaped like a shim is a hook. A shim is exactly five lines
(`#!/bin/sh`, two comments, one `exec` of `PYTHON -I SANDBOXRUN run`, or of the
launcher `install` writes (`LAUNCHER run`: `_wrapped.LAUNCHER`), with only the
options `install` writes), six with `--fail-closed` (the `missing_guard` before the
`exec`); that shape is read for its fields, after the record said it is ours. The
originals of a folder `<base>/<d>` are in `<base>/.sandboxrun/moved/<d>`, which no
agent scans.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from .._errors import ConfigError
from .._wrapped import Record
from .claude.wrapped import gone, ready_test

MOVED = os.path.join(".sandboxrun", "moved")
SHIM_MARK = "# sandboxrun shim"
SHIM_MAX_BYTES = 4096
# Options a shim's `sandboxrun run` may carry (and whether each takes a value).
_SHIM_OPTIONS = {"--agent": True, "--answer": True, "--hooks-dir": True, "--home": True,
                 "--config": True, "--fail-closed": False}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Shim:
    """A shim's command, read back: what it runs and over which folders."""

    executable: str  # the sandboxrun script, or the launcher file (`_wrapped.LAUNCHER`)
    hook_name: str
    hooks_dirs: tuple[str, ...]
    config: str | None = None
    python: str = ""  # the interpreter it starts the script with (`-I`); "" for the launcher


def moved_folder(base: str, rel: str) -> str:
    """Where `install` keeps the original hooks of `<base>/<rel>`."""
    return os.path.join(base, MOVED, rel)


def missing_guard(launcher: Sequence[str]) -> str:
    """A fail-closed shim's line before its `exec`: if sandboxrun is gone (moved,
    uninstalled), Cline gets a cancel instead of a failed hook, which blocks nothing."""
    why = f"sandboxrun (fail-closed): {gone(launcher)}"
    answer = json.dumps({"cancel": True, "contextModification": "", "errorMessage": why})
    return f"{ready_test(launcher)} || {{ echo {shlex.quote(answer)}; exit 0; }}"


def read_shim(path: str, record: Record) -> Shim | None:
    """The shim at `path`, or None if it is not byte for byte one `install` recorded
    writing there: a file a repository shaped like a shim is a hook."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as f:
            raw = f.read(SHIM_MAX_BYTES + 1)
    except OSError:
        return None
    try:
        if not record.shim(path, raw):
            return None
    except ConfigError:  # an unreadable record: nothing counts as ours
        return None
    lines = raw.decode("utf-8", "replace").split("\n")
    guard = lines.pop(3) if len(lines) == 6 else None  # a fail-closed shim's `missing_guard`
    if len(raw) > SHIM_MAX_BYTES or len(lines) != 5 or lines[0] != "#!/bin/sh":
        return None
    if not lines[1].startswith(SHIM_MARK) or not lines[2].startswith("# ") or lines[4]:
        return None
    if not lines[3].startswith("exec "):
        return None
    try:
        words = shlex.split(lines[3][5:])
    except ValueError:
        return None
    # `PYTHON -I SANDBOXRUN run NAME`, or (the launcher file) `LAUNCHER run NAME`
    n = 3 if len(words) > 1 and words[1] == "-I" else 1
    if len(words) < n + 2 or words[n] != "run":
        return None
    if guard is not None and guard != missing_guard(words[:n]):
        return None
    dirs, config, i = [], None, n + 2
    while i < len(words):
        takes = _SHIM_OPTIONS.get(words[i])
        if takes is None or (takes and i + 1 >= len(words)):
            return None
        if words[i] == "--hooks-dir":
            dirs.append(words[i + 1])
        elif words[i] == "--config":
            config = words[i + 1]
        i += 2 if takes else 1
    python = words[0] if n == 3 else ""  # the launcher: one file (`Shim.executable`)
    return Shim(words[n - 1], words[n + 1], tuple(dirs), config, python)
