"""The launcher `install` writes in the user's data folder (`~/.local/share/sandboxrun/
hook`), which the hooks it installs in the user's and the projects' files start.

Claude Code shows the model a failed or blocking hook's command (`hook error: [COMMAND]:
REASON`), and the command is what `install` writes: with the launcher it names one short
fixed path, not this machine's venv (`/…/venv/bin/python3 -I /…/bin/sandboxrun-hook`).
The launcher is a `/bin/sh` script that execs that Python isolated (`-I`, as
`command.launcher` explains) with the arguments as given; `hook --ready` exits 0 when both
are there, which the wrappers' guards ask (`wrapped.ready_test`), so a fail-closed hook
still blocks when the venv is gone.

Its path comes from the account's home (`pw_dir`, or `--home`), never from a variable a
repository could set; its folder must be the user's own, and is made writable by nobody
else. Each install writes it again: it starts the sandboxrun of the last
install. `uninstall` leaves it (other files may still start it), as it leaves the backups'
folder. The system's files (`--managed`) are read by every account: their hooks start the
venv's Python by its own path, as before.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Sequence

from .._errors import ConfigError
from .._wrapped import LAUNCHER, READY, launcher_path
from .files import atomic_write

_MARK = "# sandboxrun's launcher for the hooks `sandboxrun install` wrote"
_MAX_BYTES = 8192


def path(home: str) -> str:
    """Where the launcher of the account whose home is `home` lives."""
    return launcher_path(home)


def text(python: str, script: str) -> bytes:
    """The launcher's bytes, starting `python -I script ARGS...` (`--ready`: only says
    whether both are there; without them, one line and exit 127, as the shell's own
    "not found", which a fail-open wrapper's agent reads as a failed hook)."""
    names = f"python={shlex.quote(python)} script={shlex.quote(script)}"
    return (
        f"#!/bin/sh\n{_MARK}\n# (`sandboxrun install` writes it again; it starts that"
        f" sandboxrun isolated)\n{names}\n"
        'if [ -x "$python" ] && [ -f "$script" ]; then ready=0; else ready=1; fi\n'
        f'if [ "$1" = {READY} ]; then exit $ready; fi\n'
        "if [ $ready = 1 ]; then\n"
        '  echo "sandboxrun: $script is missing (moved or uninstalled?): install again" >&2\n'
        "  exit 127\n"
        "fi\n"
        'exec "$python" -I "$script" "$@"\n'
    ).encode()


def write(home: str, python: str, script: str) -> str:
    """Write the launcher (atomically; its folder made 0700 if missing, and writable by
    nobody else: a umask of 002 made it group-writable) and return its path; a
    `ConfigError` when its folder is not the user's own."""
    where = path(home)
    folder = os.path.dirname(where)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise ConfigError(
            f"{folder} must be a folder of yours (the hooks install writes start the"
            " launcher in it): fix its owner"
        )
    if st.st_mode & 0o022:
        os.chmod(folder, stat.S_IMODE(st.st_mode) & ~0o022)
    new = text(python, script)
    try:
        with open(where, "rb") as f:
            same = f.read(_MAX_BYTES + 1) == new
    except OSError:
        same = False
    if not same:
        atomic_write(where, new, 0o755)
    return where


def target(launcher: str) -> list[str] | None:
    """[python, script] of the launcher at `launcher` as `text` writes it, or None (no
    such file, or not one of ours)."""
    try:
        with open(launcher, "rb") as f:
            raw = f.read(_MAX_BYTES + 1)
        lines = raw.decode().split("\n")
        words = shlex.split(lines[3]) if len(lines) > 3 and lines[1] == _MARK else []
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    found = dict(w.split("=", 1) for w in words if "=" in w)
    python, script = found.get("python"), found.get("script")
    if python is None or script is None or raw != text(python, script):
        return None
    return [python, script]


def started(chosen: Sequence[str]) -> list[str]:
    """The files a wrapper's words (`chosen_files`) start, the launcher read as its
    Python and script (a launcher missing or not ours: its own path twice, so that
    `status` names it)."""
    if not chosen or os.path.basename(chosen[0]) != LAUNCHER:
        return list(chosen)
    return [*(target(chosen[0]) or [chosen[0], chosen[0]]), *chosen[1:]]
