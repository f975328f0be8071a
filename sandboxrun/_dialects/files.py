"""The checked read of an agent's config file, shared by every dialect's reader.

A config file sandboxrun could not read (it does not parse, its top level has the
wrong type, it cannot be opened, it is a dangling link) is a policy the agent may well
apply and sandboxrun would not: it is never dropped in silence. `read_json` (and
`read_regular` for readers of other formats) say why a file was not read, and
`unreadable` turns that into the `Skipped` every report names (`run`, `check`, the API),
`check` fails on, and fail-closed blocks on (`_runner`). A wrong-typed entry inside a
readable file is `unreadable` too, named by its JSON path; `Note` marks a reader's
remark that loses nothing (an unknown event name, a warning) and stays a plain
`Skipped`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from .._types import Skipped
from .base import escape_name

Listed = TypeVar("Listed", bound=tuple[Any, ...])  # a reader's row: (path, source, ...)

MAX_SETTINGS_BYTES = 1 << 20  # a real settings file is a few kilobytes
DANGLING = "a dangling link (its target does not exist)"


class Note(str):
    """A reader's remark on a file that is not a lost part of its policy (`Skipped`
    without `unreadable`): every other problem a reader reports is."""


def unreadable(path: str, source: str, reason: str) -> Skipped:
    """The `Skipped` of a file (or an entry of it) that holds policy sandboxrun could
    not read; a `Note` stays a remark."""
    return Skipped(path, source, reason, unreadable=not isinstance(reason, Note))


def unread_note(skipped: Skipped) -> str:
    """The line that says a config file (or entry) could not be read."""
    return f"{skipped.path} ({skipped.source}): could not be read: {skipped.reason}"


def read_regular(path: str) -> tuple[bytes | None, str | None]:
    """A config file's bytes, only if it is a regular file (a symlink to one is fine)
    of at most `MAX_SETTINGS_BYTES`: (None, None) when missing, (None, why) when refused
    (a link to nothing is refused: the file it stood for is not there to read).

    Checked before opening (a device is never opened) and again on the open file
    (O_NONBLOCK: a FIFO swapped in meanwhile cannot block the open)."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            return None, _not_regular(mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, DANGLING if _is_link(path) else None
    except OSError as exc:
        return None, f"cannot read: {exc.strerror}"
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return None, _not_regular(mode)
        try:
            raw = f.read(MAX_SETTINGS_BYTES + 1)
        except OSError as exc:
            return None, f"cannot read: {exc.strerror}"
    if len(raw) > MAX_SETTINGS_BYTES:
        return None, f"larger than {MAX_SETTINGS_BYTES} bytes: not read"
    return raw, None


def read_json(
    path: str, must_exist: bool, text_of: Callable[[str], str] | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """(the file's object, None), (None, why it is not read), or (None, None) for a
    missing file (`must_exist`: "not found" instead). An empty file configures nothing.
    `text_of`: the agent's own reading of the text before JSON (Gemini strips comments)."""
    raw, problem = read_regular(path)
    if raw is None:
        return None, "not found" if must_exist and problem is None else problem
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    if not text.strip():
        return {}, None
    if text_of is not None:
        text = text_of(text)
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg}: line {exc.lineno} column {exc.colno}"
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        return None, f"not valid JSON: {str(exc)[:80]}"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"
    if not isinstance(data, dict):
        return None, f"not a JSON object (a {type(data).__name__})"
    return data, None


def read_each(
    listed: Iterable[Listed], skipped: list[Skipped], effect: str = ""
) -> Iterator[tuple[Listed, str, dict[str, Any]]]:
    """The config readers' loop: each file of `listed` (rows whose first two items are its
    path and source) read once by its real path (the project may be the home: its
    settings are the user's), as (its row, its name for reports, its object). A file that
    cannot be read is added to `skipped` (`unreadable`; `effect`: what the agent then
    does, after the reason), and left out unless it still gave an object (`read_json`);
    a missing file is left out in silence, unless it was named explicitly."""
    read: set[str] = set()
    for row in listed:
        path, source = row[0], row[1]
        real = os.path.realpath(path)
        if real in read:
            continue
        read.add(real)
        shown = escape_name(path)
        data, problem = read_json(path, must_exist=source == "explicit")
        if problem is not None:
            skipped.append(unreadable(shown, source, f"{problem}{effect}"))
        if data is None:
            continue
        yield row, shown, data


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _not_regular(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory, not a settings file"
    return "is not a regular file (a device, FIFO or socket): not read"
