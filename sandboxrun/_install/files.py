"""Safe file changes for `install` / `uninstall`: atomic writes, byte-exact backups,
diffs for `--dry-run`.

An interrupted install must lose nothing: every new content goes to a temporary file
in the same folder, is flushed to disk, and replaces the old file by one rename; the
backup of a file is on disk before the file is replaced.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._wrapped import sha256 as sha256  # re-exported: install's modules import it here
from .._wrapped import store_root as store_root


def atomic_write(path: str, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` in one rename. The mode is `mode`, else the old file's,
    else 0o644 (less the umask's bits). The old file stays whole until the rename."""
    folder = os.path.dirname(os.path.abspath(path))
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o644 & ~mask
    fd, tmp = tempfile.mkstemp(prefix=".sandboxrun-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with _ignored():
            os.unlink(tmp)
        raise
    sync_folder(folder)


def sync_folder(folder: str) -> None:
    """Make a rename in `folder` durable (best effort: not every filesystem allows it)."""
    with _ignored():
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class _ignored:
    """`with _ignored():` swallows OSError (cleanup that must not mask the real error)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        return kind is not None and issubclass(kind, OSError)


MAX_BYTES = 1 << 20  # settings files and hooks are kilobytes


def read_bytes(path: str) -> bytes | None:
    """A regular file's bytes (a symlink to one is fine), or None if it does not exist;
    one clear line naming it otherwise. A FIFO or device a repository put in place of a
    settings file is never opened for a blocking read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}; not changed") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path}: not a regular file; not changed")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES} bytes; not changed")
    return data


def diff(path: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff of one file's change (`/dev/null` for a file made or removed)."""
    import difflib  # only here: `run` reads install's record through this module

    a = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        a, b, path if old is not None else "/dev/null", path if new is not None else "/dev/null"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)  # fmt: skip


def file_mode(path: str) -> int | None:
    """A file's permission bits, or None if it does not exist."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Backup:
    """What a file was before `install` changed it, and what `install` made of it."""

    path: str
    original: bytes | None  # None: the file did not exist
    mode: int | None
    installed: str  # sha256 of the content install wrote
    # `original` is the file's bytes as they were (False: rebuilt from a file that had
    # changed since an earlier install, by taking off the wrappers it recorded).
    exact: bool = True


class BackupStore:
    """Byte-exact backups of the files `install` rewrites, kept in the user's data
    folder (`store_root`), never in the workspace: a repository must not be able to
    choose what `uninstall` writes back."""

    def __init__(self, home: str) -> None:
        self.root = store_root(home)

    def _key(self, path: str) -> str:
        return sha256(os.path.realpath(path).encode("utf-8", "surrogateescape"))[:24]

    def get(self, path: str) -> Backup | None:
        key = self._key(path)
        try:
            meta: dict[str, Any] = json.loads((self.root / f"{key}.json").read_text())
            original = (self.root / f"{key}.orig").read_bytes() if meta["existed"] else None
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"backup of {path} in {self.root} is unreadable: {exc}") from None
        return Backup(meta["path"], original, meta.get("mode"), meta["installed"],
                      meta.get("exact", True) is True)  # fmt: skip

    def put(self, backup: Backup) -> None:
        """Store a backup (the original first, then the record that points at it)."""
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = self._key(backup.path)
        if backup.original is not None:
            atomic_write(str(self.root / f"{key}.orig"), backup.original, 0o600)
        meta = {
            "path": backup.path,
            "existed": backup.original is not None,
            "mode": backup.mode,
            "installed": backup.installed,
            "exact": backup.exact,
        }
        atomic_write(str(self.root / f"{key}.json"), json.dumps(meta).encode(), 0o600)

    def drop(self, path: str) -> None:
        key = self._key(path)
        for suffix in (".json", ".orig"):  # the record first: an orphan .orig is harmless
            with _ignored():
                (self.root / f"{key}{suffix}").unlink()
