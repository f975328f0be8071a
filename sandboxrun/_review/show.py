"""What `sandboxrun review`, `list` and `doctor` show: the repository hooks of a
workspace that are new or changed since approved, or approved and now removed
(`removed`), each with a unified diff (difflib) of its config entry and of every file
it names (a removed one's: all of it as deleted)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .pins import Pin, file_bytes

if TYPE_CHECKING:
    from .._settings import Settings
    from . import Seen


def scan(
    settings: Settings, workspaces: Sequence[str], home: str, agents: Sequence[str] = ()
) -> list[Seen]:
    """Every repository hook of `workspaces` (for `agents`, else every agent) against
    its approved pins; the hooks of agents whose discovery fails are left out."""
    from .._dialects.registry import DIALECTS, dialect_of
    from .._log import logger
    from . import survey
    from .removed import missing, pin_roots

    found: list[Seen] = []
    for agent in agents or list(DIALECTS):
        dialect = dialect_of(settings.model_copy(update={"agent": agent}))
        try:
            hooks = dialect.discover(None, workspaces, home).hooks
        except Exception as exc:  # one agent's unreadable settings: the others still show
            logger.warning("review: {} hooks not read: {}", agent, exc)
            continue
        seen = survey(agent, hooks, workspaces, dialect.project_dir_var, settings.review_pins)
        roots = pin_roots(dialect, workspaces, home)
        found += seen + missing(home, agent, seen, roots, settings.review_pins)
    return found


def pending(seen: Sequence[Seen]) -> list[Seen]:
    return [s for s in seen if s.status != "approved"]


def awaiting(settings: Settings, seen: Sequence[Seen]) -> list[Seen]:
    """What `list` and `doctor` name as awaiting review: under `warn`, not the hooks of a
    checkout nothing was pinned for yet (its first run pins them quietly)."""
    if settings.review == "off":
        return []
    return [s for s in pending(seen) if not (settings.review == "warn" and s.first)]


def summary(seen: Sequence[Seen]) -> str | None:
    """One line: what awaits review, or None."""
    todo = pending(seen)
    if not todo:
        return None
    counts: dict[str, int] = {}
    for s in todo:
        counts[s.status] = counts.get(s.status, 0) + 1
    what = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(todo)} repository hook(s) await review ({what}): run `sandboxrun review`"


def diff(s: Seen) -> str:
    """The unified diff of one hook against its approved version (against nothing when
    new): its config entry, then each file; a mode, a symlink target, a rename shown."""
    old, new = s.old, (None if s.status == "removed" else s.pin)  # removed: all deleted
    out: list[str] = []
    if new is None:
        out += difflib.unified_diff(_entry_text(old), [], "approved: config entry", "/dev/null")
        for path, approved in sorted((old.files if old else {}).items()):
            out += _file_diff(path, path, approved, None)
        return "".join(out)
    if old is not None and old.name != new.name:
        out.append(f"renamed: {old.name} -> {new.name}\n")
    a = _entry_text(old)
    b = _entry_text(new)
    out += difflib.unified_diff(a, b, "approved: config entry", "now: config entry")
    old_files: Mapping[str, Mapping[str, Any]] = old.files if old else {}
    # A rename moves a file: compare it with the approved file of the same content.
    moved = {p: q for p in new.files for q in old_files
             if p not in old_files and q not in new.files
             and old_files[q].get("sha256") == new.files[p].get("sha256")}  # fmt: skip
    for path in sorted(set(old_files) | set(new.files)):
        if path in moved.values() and path not in new.files:
            continue
        before = old_files.get(moved.get(path, path))
        after = new.files.get(path)
        out += _file_diff(moved.get(path, path), path, before, after)
    return "".join(out)


def _entry_text(pin: Pin | None) -> list[str]:
    if pin is None:
        return []
    shown = {"agent": pin.agent, "event": pin.event, "name": pin.name,
             **{k: v for k, v in pin.entry.items() if k != "shape"}}  # fmt: skip
    return [line + "\n" for line in json.dumps(shown, indent=1, sort_keys=True).splitlines()]


def _file_diff(
    old_path: str, path: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> list[str]:
    out: list[str] = []
    if before and after:
        if before.get("mode") != after.get("mode"):
            out.append(f"mode {path}: {before.get('mode')} -> {after.get('mode')}\n")
        if before.get("link") != after.get("link"):  # where the command's word leads
            out.append(
                f"symlinks to {path}: approved {before.get('link')}; now {after.get('link')}\n"
            )
        if before.get("sha256") == after.get("sha256"):
            return out
    old_bytes = file_bytes(before) if before else b""
    new_bytes = file_bytes(after) if after else b""
    if old_bytes is None or new_bytes is None:
        sums = f"{(before or {}).get('sha256')} -> {(after or {}).get('sha256')}"
        return [*out, f"{path}: too large to show (sha256 {sums})\n"]
    if after and after.get("outside"):
        out.append(f"{path}: points outside the workspace ({after.get('link')}): not read\n")
    a = old_bytes.decode("utf-8", "replace").splitlines(keepends=True)
    b = new_bytes.decode("utf-8", "replace").splitlines(keepends=True)
    from_name = f"approved: {old_path}" if before else "/dev/null"
    to_name = f"now: {path}" if after else "/dev/null"
    lines = list(difflib.unified_diff(a, b, from_name, to_name))
    return out + [line if line.endswith("\n") else line + "\n" for line in lines]
