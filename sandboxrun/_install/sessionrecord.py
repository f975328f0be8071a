"""The record of the session-start check `install` writes in a user's settings file
(`session.py`), and the one question discovery, `install --user` and `doctor` ask of it:
is this handler that check? Apart from `session.py` so that those readers import
nothing of install's machinery."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .files import atomic_write, store_root


class SessionRecord:
    """What install wrote for the session-start check, per file (see the module)."""

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

    def put(self, path: str, entry: dict[str, Any] | None) -> None:
        data = self.load()
        if entry is None:
            data.pop(os.path.realpath(path), None)
        else:
            data[os.path.realpath(path)] = entry
        if not data:  # nothing installed: no file left behind
            self.file.unlink(missing_ok=True)
            return
        self.file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(str(self.file), json.dumps(data).encode(), 0o600)


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
