"""`install` / `uninstall` for the Claude family: settings files rewritten in place.

Each command hook of a settings file becomes the same hook run through
`sandboxrun exec` (`_dialects.claude.wrapped`; `--untrusted` for a project or local
file); only the changed strings (and an `args` list) are rewritten, every other byte
stays. Each wrapper is recorded, with the handler it wraps, in install's record
(`record.Record`): only a recorded wrapper is "ours"; a command merely shaped like one
is a hook like any other and is wrapped in turn. The original of each file is kept,
byte for byte, in the user's data folder (`files.BackupStore`): `uninstall` writes it
back when the file is as `install` left it, and otherwise takes off only the recorded
wrappers, in place (the file changed since: a pull, an edit), saying so.
A wrapper an earlier sandboxrun wrote (before the record: `legacy`) is migrated: its
one original gets a new recorded wrapper, exactly as a fresh hook would; `uninstall`
of an earlier install takes off the wrappers that install wrote, and no other.
(`claudecode.py` is the agents' module: Claude Code's, Qoder's, Qoder CN's `install` and
`notes`; `--managed` writes Claude Code's managed settings instead: `managed.py`.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._dialects.base import below_deadline
from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.wrapped import wrap
from .._errors import ConfigError
from .._wrapped import check_in, is_check, value_key
from . import jsonspan, legacy
from .files import Backup, BackupStore, atomic_write, file_mode, read_bytes, sha256
from .record import Record, names_sandboxrun
from .shape import CLAUDE, Shape
from .targets import targets

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Change:
    """One file's change: what it is, what it becomes (None: removed), and a note."""

    path: str
    old: bytes | None
    new: bytes | None
    note: str
    mode: int | None = None  # the mode to write `new` with (None: the file's own)
    wrote: Mapping[str, Any] | None = None  # install: the record of the wrappers in `new`
    shape: Shape = CLAUDE  # where the file's handlers are


def settings_paths(dialect: ClaudeDialect, workspace: str | None, home: str) -> list[str]:
    """The files `install` rewrites: the user's settings (`workspace` None), or the
    project's shared and local settings of the project `workspace` belongs to
    (`targets`: the same rule for every Claude-shaped agent)."""
    scope = "user" if workspace is None else "workspace"
    return [t.path for t in targets(dialect, scope, workspace, home)]


def parse(path: str, raw: bytes, shape: Shape = CLAUDE) -> tuple[str, dict[str, Any]]:
    """(text without BOM, document) of a settings file, or one line naming it (`shape`:
    how the agent reads the text: its `codec`, else JSON as `Shape.layout` gives it)."""
    if shape.codec is not None:
        return "", shape.codec.parse(path, raw)
    try:
        text = raw.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8; not changed") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(shape.layout(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno}); not changed"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({str(exc)[:80]}); not changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a JSON object; not changed")
    return text, data


def command_handlers(
    data: dict[str, Any], shape: Shape = CLAUDE
) -> Iterator[tuple[jsonspan.Path, dict[str, Any]]]:
    """(JSON path, view) of every command handler in a config document (`shape.Shape`)."""
    return shape.handlers(data)


def _args(hook: dict[str, Any]) -> list[str] | bool | None:
    """A handler's `args` (None without), or False if malformed (left alone)."""
    args = hook.get("args")
    if args is None:
        return None
    ok = isinstance(args, list) and all(isinstance(a, str) for a in args)
    return args if ok else False


DROP = object()  # a field value meaning: take the key off the handler
# (command, args), maybe with other fields of the handler to set ({key: value or DROP}).
New = tuple[str, list[str] | None] | tuple[str, list[str] | None, dict[str, object]]
Rewrite = Callable[[dict[str, Any]], New | None]


def rewrite(path: str, raw: bytes, each: Rewrite, shape: Shape = CLAUDE) -> bytes:
    """`raw` with each command handler `each` returns a new (command, args) for
    rewritten (and the fields it names set or taken off), and nothing else changed."""
    text, data = parse(path, raw, shape)
    changes: list[tuple[jsonspan.Path, object]] = []
    added: list[tuple[jsonspan.Path, str, object]] = []
    for where, hook in command_handlers(data, shape):
        new = each(hook)
        if new is None:
            continue
        command, args, *more = new
        if (command, args) != (hook["command"], hook.get("args")):
            changes.append(((*where, shape.field(hook)), command))
            if args is not None:
                changes.append(((*where, "args"), args))
        for key, value in (more[0] if more else {}).items():
            if key in hook and value is not DROP:
                changes.append(((*where, key), value))
            elif key in hook or value is not DROP:
                added.append((where, key, value))
    if not changes and not added:
        return raw
    if shape.codec is not None:
        return shape.codec.replace(path, raw, changes)
    text = jsonspan.replace_values(text, changes, shape.layout(text))
    for where, key, value in added:  # keys set anew or taken off: each handler's own
        if value is DROP:
            text = jsonspan.remove_member(text, where, key)
        else:
            text = jsonspan.insert_member(text, where, key, value)
    bom = _BOM if raw.startswith(_BOM) else b""
    return bom + text.encode("utf-8")


# What install recorded for a handler that is a wrapper of its own (`Record.entry`:
# `command` and `args` of the handler it runs, maybe `was`), else None.
Ours = Callable[[dict[str, Any]], dict[str, Any] | None]


def ours_in(record: Record, path: str) -> Ours:
    """The wrappers install recorded for `path` (whatever their options: this is for
    `install` and `uninstall`, which rewrite them; the readers that trust one also want
    `--untrusted` in a project's file), and those an earlier sandboxrun wrote
    (`legacy`; marked `earlier`). An earlier one install did not write byte for byte (a
    `sandboxrun exec` of the user's own) is given back as it was (`was`): only its
    original is taken out of it, to run in a new wrapper, never the string it is."""
    entries = record.entries(path)

    def ours(hook: dict[str, Any]) -> dict[str, Any] | None:
        found = record.entry(path, hook, entries)
        if found is not None:
            return found
        old = legacy.old_wrapper(hook)
        if old is None:
            return None
        args = None if old.args is None else list(old.args)
        entry: dict[str, Any] = {"command": old.command, "args": args, "earlier": True}
        if not old.by_install:
            entry["was"] = {"command": hook["command"], "args": hook.get("args")}
        return entry

    return ours


def recorded_in(record: Record, path: str) -> Ours:
    """Only the wrappers install recorded for `path`."""
    entries = record.entries(path)
    return lambda hook: record.entry(path, hook, entries)


def wrapper_of(
    launcher: Sequence[str], agent: str, options: Sequence[str], ours: Ours,
    wrote: dict[str, Any], shape: Shape = CLAUDE, check: str | None = None,
) -> Rewrite:  # fmt: skip
    """The rewrite that wraps every handler (PowerShell ones stay: there is no
    PowerShell in the sandbox, and `list` names them). A wrapper of ours is made again
    from its original, the same unless the options or sandboxrun's place changed; any
    other command, whatever its shape, is wrapped whole. Every wrapper goes in `wrote`."""

    def each(hook: dict[str, Any]) -> New | None:
        args = _args(hook)
        if args is False or shape.skip(hook) or is_check(check, hook):
            return None  # (`check`: the session-start check, `session.py`)
        found = ours(hook)
        command, argv = (found["command"], found.get("args")) if found else (hook["command"], args)
        extra = [*options, *shape.options(hook)]
        timeout = hook["timeout"]  # seconds (the view's), or None
        if timeout is not None:
            # Below the agent's own deadline for the entry, so sandboxrun ends a slow hook.
            extra += ["--timeout", f"{below_deadline(timeout):g}"]
        new = wrap(launcher, agent, command, argv, hook.get("shell"), extra)  # type: ignore[arg-type]
        if new[1] is None:
            new = (shape.written(new[0], launcher, extra), None)
        original = {"command": command, "args": None if argv is None else list(argv)}  # type: ignore[arg-type]
        if found and isinstance(found.get("was"), dict):  # the user's own, to give back
            original["was"] = found["was"]
        fields = _closed(shape, hook, found, "--fail-closed" in options, original)
        wrote[value_key(*new, hook.get("shell"))] = original
        if new == (hook["command"], hook.get("args")) and not fields:
            return None
        return (*new, fields)

    return each


def _closed(
    shape: Shape, hook: dict[str, Any], found: dict[str, Any] | None, want: bool,
    original: dict[str, Any],
) -> dict[str, object]:  # fmt: skip
    """The agent's own fail-closed flag (`Shape.closed_key`) of a wrapper: set to true
    when `want`, else given back; what it was before install is kept in `original`
    (`closed`: {} when the key was absent, else {"value": ...}) for `uninstall`."""
    key = shape.closed_key
    if key is None:
        return {}
    before = found.get("closed") if found else None
    before = before if isinstance(before, dict) else None
    if not want:  # a `true` that is still ours goes back to what it was
        return _given_back(key, before) if before is not None and hook.get(key) is True else {}
    if hook.get(key) is True and before is None:
        return {}  # the user's own `true`: not ours to take off
    original["closed"] = before if before is not None else (
        {"value": hook[key]} if key in hook else {}
    )  # fmt: skip
    return {} if hook.get(key) is True else {key: True}


def _given_back(key: str, before: dict[str, Any]) -> dict[str, object]:
    return {key: before["value"]} if "value" in before else {key: DROP}


def _unwrap_each(ours: Ours, shape: Shape = CLAUDE) -> Rewrite:
    """The rewrite that gives back what each wrapper of ours stands for (its original,
    or the user's own command it was), and the fail-closed flag install set on it
    (`_closed`) as it was, unless it no longer reads true (then it is the user's)."""

    def each(hook: dict[str, Any]) -> New | None:
        found = ours(hook)
        if found is None:
            return None
        back = found["was"] if isinstance(found.get("was"), dict) else found
        command, args = back.get("command"), back.get("args")
        if not isinstance(command, str) or not (
            args is None or (isinstance(args, list) and all(isinstance(a, str) for a in args))
        ):
            return None
        key, before = shape.closed_key, found.get("closed")
        fields = {}
        if key and isinstance(before, dict) and hook.get(key) is True:
            fields = _given_back(key, before)
        if (command, args) == (hook["command"], hook.get("args")) and not fields:
            return None
        return command, args, fields

    return each


def _taken_off(handlers: Iterator[tuple[jsonspan.Path, dict[str, Any]]], ours: Ours) -> list[bool]:
    """For each wrapper uninstall takes off (not a user's own it gives back as it was):
    whether an earlier sandboxrun wrote it."""
    found = [ours(h) for _, h in handlers]
    return [bool(e.get("earlier")) for e in found if e is not None and "was" not in e]


def _alike(
    handlers: Iterator[tuple[jsonspan.Path, dict[str, Any]]], ours: Ours, check: str | None
) -> int:
    """How many commands name sandboxrun without being a wrapper install recorded (or
    the session-start check, `check`)."""
    return sum(
        1 for _, h in handlers if names_sandboxrun(h) and ours(h) is None and not is_check(check, h)
    )  # fmt: skip


def plan_install(
    paths: Sequence[str], launcher: Sequence[str], agent: str, options: Sequence[str],
    record: Record, shape: Shape = CLAUDE,
) -> list[Change]:  # fmt: skip
    """Every file's change (unchanged files too, with a note), parsed before anything is
    written: one unparsable file stops the install before any file changes."""
    out = []
    for path in paths:
        old = read_bytes(path)
        if old is None:
            continue
        ours, wrote = ours_in(record, path), dict[str, Any]()
        check = check_in("", path, record.root)  # the session-start check stays as it is
        new = rewrite(path, old, wrapper_of(launcher, agent, options, ours, wrote, shape, check),
                      shape)  # fmt: skip
        count = sum(
            1 for _, h in command_handlers(parse(path, new, shape)[1], shape)
            if value_key(h["command"], h.get("args"), h.get("shell")) in wrote
        )  # fmt: skip
        note = f"{count} hook command(s) run through sandboxrun exec"
        earlier = [
            h["command"] for _, h in command_handlers(parse(path, old, shape)[1], shape)
            if (e := ours(h)) is not None and e.get("earlier")
        ]  # fmt: skip
        if earlier:
            note += (
                f"; {len(earlier)} of them migrated from an earlier sandboxrun's wrapper (the"
                " one command it ran, now in a new wrapper): "
                + ", ".join(repr(c[:80]) for c in earlier)
            )
        alike = _alike(command_handlers(parse(path, old, shape)[1], shape), ours, check)
        if alike:
            note += (
                f"; {alike} of them named sandboxrun but are no wrapper install wrote here:"
                " wrapped like any hook (a `sandboxrun exec` you wrote yourself now fails"
                " in the sandbox: put the plain command back and install again)"
            )
        out.append(Change(path, old, new, note if new != old else f"{note}; no change",
                          wrote=wrote, shape=shape))  # fmt: skip
    return out


def apply_install(change: Change, store: BackupStore, record: Record) -> None:
    """Write one planned change: the backup first (the file as it was, with any wrapper
    of ours taken off when a pull mixed new hooks into an installed file), then the
    record of the wrappers, then the file."""
    if change.new == change.old or change.old is None or change.new is None:
        return
    before = store.get(change.path)
    if before is not None and sha256(change.old) == before.installed:
        backup = replace(before, installed=sha256(change.new))  # as install left it
    else:
        unwrap = _unwrap_each(ours_in(record, change.path), change.shape)
        original = rewrite(change.path, change.old, unwrap, change.shape)
        mode = file_mode(change.path)
        backup = Backup(change.path, original, mode, sha256(change.new), original == change.old)
    store.put(backup)
    record.add(change.path, dict(change.wrote or {}))
    atomic_write(change.path, change.new)


def plan_uninstall(
    paths: Sequence[str], store: BackupStore, record: Record, shape: Shape = CLAUDE
) -> list[Change]:
    out = []
    for path in paths:
        old = read_bytes(path)
        backup = store.get(path)
        if old is None and backup is None:
            continue
        if backup is not None and old is not None and sha256(old) == backup.installed:
            note = "restored byte for byte" if backup.exact else (
                "restored as before install (rebuilt: it had changed since an earlier"
                " install; the wrappers install wrote taken off, nothing else)"
            )  # fmt: skip
            out.append(Change(path, old, backup.original, note, backup.mode))
            continue
        if old is None:
            out.append(Change(path, None, None, "gone since install; nothing to restore"))
            continue
        ours = ours_in(record, path)
        taken_off = _taken_off(command_handlers(parse(path, old, shape)[1], shape), ours)
        new = rewrite(path, old, _unwrap_each(ours, shape), shape)
        taken = f"{len(taken_off)} wrapper(s) install wrote taken off in place"
        if any(taken_off):
            taken += f" ({sum(taken_off)} written by an earlier sandboxrun)"
        taken += ", everything else kept"
        why = f"changed since install: {taken}" if backup else taken
        note = why if new != old else "no wrapper install wrote; no change"
        alike = _alike(
            command_handlers(parse(path, new, shape)[1], shape), recorded_in(record, path),
            check_in("", path, record.root),
        )  # fmt: skip
        if alike:
            note += f"; {alike} command(s) naming sandboxrun kept: install did not write them"
        out.append(Change(path, old, new, note))
    return out


def apply_uninstall(change: Change, store: BackupStore, record: Record) -> None:
    if change.new != change.old:
        if change.new is None:
            os.unlink(change.path)
        else:
            atomic_write(change.path, change.new, change.mode)
    store.drop(change.path)
    record.drop(change.path)
