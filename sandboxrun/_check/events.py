"""Reading recorded events: JSON Lines, one event object per line, each naming its hook
event (`hookName` for the Cline family, `hook_event_name` for the Claude family).

A line that cannot be read is kept with its number and why, so the other lines are still
checked and the gate still fails. Blank lines are not events and are skipped.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from .._dialects.base import Dialect
from .._errors import ConfigError
from .._text import printable

# The field that names the event, per family, and the other family's (for a hint).
CLINE_FIELD, CLAUDE_FIELD = "hookName", "hook_event_name"


@dataclass(frozen=True, slots=True)
class EventLine:
    """One line of the events file: an event to replay, or a `problem` saying why not."""

    number: int  # 1-based, as an editor shows it
    hook_name: str | None = None
    event: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None


def name_field(dialect: Dialect) -> str:
    """The field an event of `dialect` names itself in (`Dialect.name_field`: Cline's
    `hookName`, Windsurf's `agent_action_name`, Crush's `event`...)."""
    return dialect.name_field


def read_events(path: str, dialect: Dialect) -> list[EventLine]:
    """Every non-blank line of `path` (`-`: stdin). A file that cannot be read, or that
    holds no line at all, is a `ConfigError` naming it: a gate that checked nothing
    must not pass."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read events file {path}: {exc.strerror}") from None
    lines = [
        parse_line(number, text, dialect)
        for number, text in enumerate(raw.split(b"\n"), start=1)
        if text.strip()
    ]
    if not lines:
        raise ConfigError(f"events file {path} holds no events (one JSON object per line)")
    return lines


def parse_line(number: int, raw: bytes, dialect: Dialect) -> EventLine:
    """One line -> the event and its hook name, or the problem with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return EventLine(number, problem=f"not UTF-8 (byte {exc.start + 1})")
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return EventLine(number, problem=f"not JSON: {exc}")
    if not isinstance(event, dict):
        return EventLine(number, problem=f"not a JSON object but {type(event).__name__}")
    wanted = name_field(dialect)
    other = CLAUDE_FIELD if wanted == CLINE_FIELD else CLINE_FIELD
    hook_name = event.get(wanted)
    if not isinstance(hook_name, str) or not hook_name:
        hint = ""
        if isinstance(event.get(other), str):
            family = "Claude" if other == CLAUDE_FIELD else "Cline"
            hint = f" (it has {other!r}: a {family}-family event? see --agent)"
        return EventLine(number, problem=f"no {wanted!r} naming the hook event{hint}")
    if hook_name not in dialect.hook_names:
        shown = printable(hook_name[:80])
        return EventLine(number, problem=f"{shown!r} is not a {dialect.agent} hook event")
    return EventLine(number, hook_name=hook_name, event=event)
