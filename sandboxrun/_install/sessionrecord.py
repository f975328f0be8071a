"""The record of the session-start check `install` writes in a user's settings file
(`session.py`): the readers' `_wrapped.SessionRecord` (discovery, `install --user` and
`doctor` ask of it `_wrapped.check_in` and `is_check`), and the writing, install's alone."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import _wrapped
from .files import atomic_write


class SessionRecord(_wrapped.SessionRecord):
    """What install wrote for the session-start check, per file (see the module)."""

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
