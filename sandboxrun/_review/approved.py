"""The approved version of a changed hook, run in its place (`review = "required"`).

A repository hook whose files changed since the user approved it does not run as it
is now: its pinned bytes do (`pins.file_record` keeps them, up to `pins.MAX_KEPT`). Each
changed file's approved bytes are written to a private folder of ours (0700, outside
every mount, removed after the run) and bound read-only over the file's path inside
the sandbox (`ExecRequest.overlays`): the workspace is mounted read-only at its own
path, and a file bound at a path below it covers the changed file there.

Only when that is faithful; else the hook is held as a new one is, with the reason:

- the config entry is the same but for the files' content and the fields `fields`
  pins (a changed command, matcher or `if` is a different hook: which events it runs
  for is not what was approved); those fields run as approved (`fields.restore`: a
  guard made `async` runs as approved, its answer deciding);
- the files the command names are the same paths as approved (none deleted, replaced
  by a folder, or newly there);
- each changed file's approved bytes were kept (not too large, not a symlink outside
  the workspace) and match their hash;
- neither the approved file nor the file there now is a symlink, and no folder on
  the way to it below its mount is one: a bind follows a symlink at its target (inside
  the container's own root, where it could cover the sandbox's own programs).

The last checks are made again right before the run (`bound`), on the paths inside
the mounts of that run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._errors import ConfigError
from .._sandbox.mounts import under
from .._types import ApprovedFile
from .pins import Pin, file_bytes

HELD = "not run: awaiting review (run `sandboxrun review`)"

# The parts of a pin's entry that must be as approved for its files to run in place of
# the changed ones (the `shape` holds the files' hashes: it differs by definition).
SAME_ENTRY = ("kind", "source", "matcher", "condition", "command")


class NotFaithful(ConfigError):
    """The approved version cannot be run in place of the changed one: held."""


def cannot_run(why: object) -> str:
    """The error of a changed hook held because its approved version cannot run."""
    return f"{HELD}; changed since approved, and its approved version cannot run: {why}"


def approved_files(
    old: Pin, new: Pin, root: str, entry: bool = True
) -> tuple[ApprovedFile, ...] | str:
    """The approved bytes of the files of `new` (a changed hook of workspace `root`, a
    real path) that differ from `old`, its approved pin (none when only its `fields`
    changed); or why the approved version
    cannot run in its place. `entry=False`: only the files are compared (`exec`: its
    command is its identity, the pin approved may be the discovered hook's)."""
    if entry:
        for key in SAME_ENTRY:
            if old.entry.get(key) != new.entry.get(key):
                return f"its {key} changed"
    view = new.known(old)  # of an older pin: its files where it looked, as they are now
    if view is not new and (view.files.keys() != new.files.keys()
                            or any(f.get("link") for f in new.files.values())):  # fmt: skip
        # Where an older pin looked is where the kernel opens only without a symlink.
        return "approved before files were pinned as resolved, and one is reached by a symlink"
    new = view
    if set(old.files) != set(new.files):
        gone = sorted(set(old.files) - set(new.files))
        added = sorted(set(new.files) - set(old.files))
        what = [f"{', '.join(gone)} is no longer a file it reaches"] if gone else []
        what += [f"{', '.join(added)} is new"] if added else []
        return f"the files its command names differ: {'; '.join(what)}"
    out: list[ApprovedFile] = []
    for rel, was in sorted(old.files.items()):
        now = new.files[rel]
        if (was.get("sha256"), was.get("link")) == (now.get("sha256"), now.get("link")):
            continue  # as approved: left as it is
        why = _unfit(rel, was, now)
        if why:
            return why
        data = file_bytes(was)
        assert data is not None  # `_unfit` checked
        out.append(ApprovedFile(os.path.join(root, rel), data, int(str(was["mode"]), 8) & 0o777))
    if not out and not (entry and old.runs != new.runs):
        return "nothing of its files differs but a symlink"
    return tuple(out)


def _unfit(rel: str, was: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """Why one changed file's approved bytes cannot be bound over it, or None."""
    parts = rel.split("/")
    if os.path.isabs(rel) or os.path.normpath(rel) != rel or ".." in parts:
        return f"{rel!r} is not a path inside the workspace"
    if was.get("link") is not None or now.get("link") is not None:
        return f"{rel} is or was a symlink"
    data = file_bytes(was)
    if data is None:
        return f"{rel}: its approved bytes were not kept (larger than the pins keep)"
    mode = was.get("mode")
    if hashlib.sha256(data).hexdigest() != was.get("sha256") or not (
        isinstance(mode, str) and re.fullmatch(r"[0-7]{3,4}", mode)
    ):
        return f"{rel}: its approved bytes do not match their pin"
    return None


@contextlib.contextmanager
def bound(
    files: Sequence[ApprovedFile], mounts: Sequence[str]
) -> Iterator[tuple[tuple[str, str], ...]]:
    """The overlays of a run (`ExecRequest.overlays`) that put `files`' approved bytes at
    their paths inside, written to a private folder of ours removed at the block's end.
    `NotFaithful` when a path is not a regular file below one of `mounts` without a
    symlink on the way (checked here, right before the run)."""
    if not files:
        yield ()
        return
    targets = [_target(f.path, mounts) for f in files]
    reals = [os.path.realpath(m) for m in mounts]
    folder = tempfile.mkdtemp(prefix="sandboxrun-approved-")  # mode 0700
    try:
        _private(folder, reals)
        overlays = []
        for i, (f, target) in enumerate(zip(files, targets, strict=True)):
            source = os.path.join(folder, str(i))
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(source, flags, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(f.data)
                os.fchmod(out.fileno(), f.mode)
            overlays.append((target, source))
        yield tuple(overlays)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _private(folder: str, mounts: Sequence[str]) -> None:
    """`NotFaithful` unless nobody but us (and root) could replace what `folder` holds:
    not inside a mount (a TMPDIR in the workspace), and its parent either ours or
    root's, and not writable by others without the sticky bit (a TMPDIR a repository's
    `env` pointed at someone else's folder)."""
    if under(os.path.realpath(folder), mounts):
        raise NotFaithful(f"the temporary folder {folder} lies inside a mount")
    parent = os.stat(os.path.dirname(folder))
    shared = parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX
    if parent.st_uid not in (os.getuid(), 0) or shared:
        raise NotFaithful(f"the temporary folder {folder} is in a folder others can change")


def _target(path: str, mounts: Sequence[str]) -> str:
    """Where the file at real path `path` is inside: below the deepest mount holding it,
    every folder on the way below that mount a real folder, and the file a regular one."""
    best: tuple[str, str] | None = None
    for mount in mounts:
        real = os.path.realpath(mount)
        if under(path, (real,)) and path != real and (best is None or len(real) > len(best[1])):
            best = (mount, real)
    if best is None:
        raise NotFaithful(f"{path} is not in what the sandbox mounts")
    mount, real = best
    rel = os.path.relpath(path, real)
    target = os.path.join(mount, rel)
    try:
        st = os.lstat(target)
    except OSError as exc:
        raise NotFaithful(f"{target}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise NotFaithful(f"{target} is no longer a regular file")
    if os.path.realpath(target) != os.path.join(real, rel):
        raise NotFaithful(f"a folder on the way to {target} is a symlink")
    return os.path.abspath(target)
