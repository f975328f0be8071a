"""The contract between `install` and discovery: what `install` leaves in an agent's
files and how a reader recognises it, owned by neither side.

`install` (`_install/`) writes wrappers, shims, forwarders and the session-start check,
and records what it wrote; discovery (`_dialects/`), `list` and `doctor` must tell
those from a hook a repository shaped like them. Both sides import this module, so a
dialect never imports `_install`:

- the names: the script installed hooks start (`HOOK_SCRIPT`, `SCRIPTS`), the launcher
  in the user's data folder (`LAUNCHER`, `launcher_path`) and its `READY` question;
- install's record (`Record`, read here; `_install/record.py` writes it) and where it
  lives (`store_root`): a wrapper or shim is one only if the record holds its bytes;
- the session-start check's record (`SessionRecord`, `check_in`, `is_check`);
- the managed forwarding hook (`is_forwarder`), recognised by its shape (only an
  administrator writes the managed file).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import Any

from . import _userconfig
from ._errors import ConfigError

HOOK_SCRIPT = "sandboxrun-hook"  # the script installed hooks start (bin/sandboxrun-hook)
SCRIPTS = ("sandboxrun", HOOK_SCRIPT)  # what an installed hook's script may be named
LAUNCHER = "hook"  # the launcher's name in the user's data folder (`_install.launcher`)
READY = "--ready"  # `hook --ready`: whether what it starts is there (exit 0), nothing else
UNTRUSTED = "--untrusted"


def launcher_path(home: str) -> str:
    """Where the launcher of the account whose home is `home` lives."""
    return os.path.join(_userconfig.data_dir(home), LAUNCHER)


def store_root(home: str) -> Path:
    """The user's data folder for install's backups and record (`Record`)."""
    return Path(_userconfig.data_dir(home)) / "install"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


class Record:
    """What `install` wrote, per settings file or hook folder, as its readers see it
    (`_install/record.py` says what is recorded, and adds the writing)."""

    def __init__(self, home: str) -> None:
        self.root = store_root(home)

    def _file(self, path: str) -> Path:
        key = sha256(os.path.realpath(path).encode("utf-8", "surrogateescape"))[:24]
        return self.root / f"{key}.wrote.json"

    def entries(self, path: str) -> dict[str, Any]:
        """sha256 -> what it stands for (`_install/record.py`), for `path` ({} if none)."""
        try:
            data = json.loads(self._file(path).read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            why = f"install's record of {path} in {self.root} is unreadable: {exc}"
            raise ConfigError(why) from None
        wrote = data.get("wrote") if isinstance(data, dict) else None
        return wrote if isinstance(wrote, dict) else {}

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


class SessionRecord:
    """What install wrote for the session-start check, per file, as its readers see it
    (`_install/sessionrecord.py` adds the writing)."""

    def __init__(self, home: str, root: Path | None = None) -> None:
        self.file = (root or store_root(home)) / "session-start.json"

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.file.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"install's record {self.file} is unreadable: {exc}") from None
        return data if isinstance(data, dict) else {}

    def get(self, path: str) -> dict[str, Any] | None:
        entry = self.load().get(os.path.realpath(path))
        return entry if isinstance(entry, dict) else None


def check_in(home: str, path: str, root: Path | None = None) -> str | None:
    """The command of the session-start check install wrote in `path`, if any (only
    that string, without `args`, is the check; an unreadable record: none is)."""
    try:
        entry = SessionRecord(home, root).get(path)
    except ConfigError:
        return None
    command = entry.get("command") if entry else None
    return command if isinstance(command, str) else None


def is_check(check: str | None, hook: dict[str, Any]) -> bool:
    """Whether `hook` is the check `check_in` names (byte for byte, no `args`)."""
    return check is not None and hook.get("args") is None and hook.get("command") == check


def is_forwarder(hook: Any) -> bool:
    """A forwarding hook of ours, recognised by its shape: only an administrator writes
    the managed file (no repository), and an older install's bare `sandboxrun run`
    counts too, so that installing again replaces it rather than adding a second one."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    command = hook["command"]
    if command.startswith("[ -x "):  # a fail-closed forwarder's guard (any version's)
        command = command.partition("; exit 2; }; ")[2]
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) > 3 and words[1] == "-I":  # PYTHON -I SCRIPT run ...
        words = words[2:]
    return (
        len(words) > 2 and os.path.basename(words[0]) in SCRIPTS and words[1] == "run"
        and "--answer" in words
    )  # fmt: skip
