"""Where an agent's config file keeps its command handlers, for `install` to rewrite.

Every JSON-configured agent keeps its hook commands in strings at known places: Claude
Code's `hooks.<Event>[i].hooks[j].command`, Cursor's `hooks.<event>[i].command`,
Copilot's `hooks.<event>[i].bash`... `install` rewrites those strings (and nothing else:
`jsonspan`) into `sandboxrun exec` wrappers; the record, the backups and `uninstall` are
the same for every agent (`claude.py`). A `Shape` is the one thing that differs: where
the handlers are, which field holds the command, how the agent reads its timeout.

`handlers` yields each handler as a *view*: a copy whose `command` is the shell command
(whatever the agent calls the field), whose `args`/`shell` are the agent's own, and whose
`timeout` is in seconds (None when absent or unreadable). The record and the wrapper see
views only, so one agent's field names never leak into another's logic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._dialects.claude.handler import SECONDS, Timeouts, timeout_seconds
from . import jsonspan

Handlers = Iterator[tuple[jsonspan.Path, dict[str, Any]]]


class Codec(Protocol):
    """A config format other than JSON (`jsonspan`), e.g. Codex's TOML: its document,
    and the file with some values replaced, every other byte kept."""

    def parse(self, path: str, raw: bytes) -> dict[str, Any]: ...

    def replace(
        self, path: str, raw: bytes, changes: Sequence[tuple[jsonspan.Path, object]]
    ) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Shape:
    """How one agent's config file holds its command handlers (see the module).

    `table`: where the event table is ("hooks": the file's `hooks` key; "events": the
    file itself; "either": `hooks` when it is an object, else the file: the Claude
    table's `ConfigFile.shape`). `nested`: the table's entries are matcher groups holding
    `hooks` lists (Claude); else they are the handlers (Cursor, Copilot). `typed`: a
    handler is a command only with `"type": "command"`. `key`: the field holding the
    shell command. `timeout_key`/`timeouts`: the handler's timeout and how it reads.
    `closed_key`: the handler's own fail-closed flag (Cursor's `failClosed`), which
    `install --fail-closed` sets on each wrapper and `uninstall` takes off again.
    """

    table: str = "hooks"
    nested: bool = True
    typed: bool = True
    key: str = "command"
    timeout_key: str = "timeout"
    timeouts: Timeouts = field(default=SECONDS)
    closed_key: str | None = None
    # Handlers `install` leaves as they are (e.g. a PowerShell one: no PowerShell inside).
    skip: Callable[[dict[str, Any]], bool] = lambda hook: hook.get("shell") == "powershell"
    codec: Codec | None = None  # None: a JSON file

    def field(self, view: dict[str, Any]) -> str:
        """The field of the handler `view` shows that holds its command (Copilot's
        entry picks one of several: `_install.copilot`)."""
        return self.key

    def options(self, view: dict[str, Any]) -> list[str]:
        """`exec` options of the wrapper of the handler `view` shows, besides those of
        every wrapper `install` writes (Copilot's `--event`: its input names none)."""
        return []

    def event_table(self, data: dict[str, Any]) -> tuple[jsonspan.Path, Any]:
        hooks = data.get("hooks")
        if self.table == "events" or (self.table == "either" and not isinstance(hooks, dict)):
            return (), data
        return ("hooks",), hooks

    def handlers(self, data: dict[str, Any]) -> Handlers:
        """(JSON path, view) of every command handler of a parsed config file."""
        prefix, table = self.event_table(data)
        if not isinstance(table, dict):
            return
        for event, entries in table.items():
            if not isinstance(entries, list):
                continue
            for i, entry in enumerate(entries):
                if not self.nested:
                    yield from self._view((*prefix, event, i), entry)
                    continue
                hooks = entry.get("hooks") if isinstance(entry, dict) else None
                if isinstance(hooks, list):
                    for j, hook in enumerate(hooks):
                        yield from self._view((*prefix, event, i, "hooks", j), hook)

    def _view(self, where: jsonspan.Path, hook: Any) -> Handlers:
        if not isinstance(hook, dict) or (self.typed and hook.get("type") != "command"):
            return
        command = hook.get(self.key)
        if not (isinstance(command, str) and command.strip()):
            return
        view = {**hook, "command": command}
        seconds = timeout_seconds(hook.get(self.timeout_key), self.timeouts)
        view["timeout"] = seconds if isinstance(seconds, float) else None
        yield where, view

    def layout(self, text: str) -> str:
        """The file's text as plain JSON, offset for offset (an agent that allows
        comments: each one blanked): what `parse` reads and `jsonspan` walks."""
        return text

    def written(self, command: str, launcher: Sequence[str], options: Sequence[str]) -> str:
        """A wrapper's command string as this agent's file must hold it (`wrap`'s)."""
        return command


CLAUDE = Shape()
