"""The audit file: whole JSON lines appended under a lock, rotated by size.

Many processes write one file at once (every `sandboxrun exec` an agent starts is its
own process, and `serve` answers in threads), so neither loguru's file sink nor
`logging.handlers.RotatingFileHandler` fits: each rotates by what its own process
wrote and would rename the file under the others. Here every writer takes an exclusive
`flock` on a lock file beside the log (not the log itself: rotation renames it), looks
at the log's size, rotates (`audit.jsonl` -> `.1` -> ... -> `.{keep}`) when the new
lines would pass `max_bytes`, and appends the lines in one `write` with `O_APPEND`.
A reader (`sandboxrun audit`) never sees half a line: each line ends in `\\n` and a
line without one is skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from pathlib import Path


class AuditLog:
    """One audit file (`audit_log`), its rotated copies and its lock."""

    def __init__(self, path: str, max_bytes: int, keep: int) -> None:
        self.path, self.max_bytes, self.keep = os.path.abspath(path), max_bytes, keep

    def append(self, lines: Sequence[bytes]) -> None:
        """Append whole lines (each ending in a newline), rotating first if needed."""
        data = b"".join(lines)
        if not data:
            return
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with self._locked():
            try:
                size = os.stat(self.path).st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(data) > self.max_bytes:
                self._rotate()
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            fd = os.open(self.path, flags, 0o600)
            try:
                view = memoryview(data)
                while view:  # a regular file takes it whole; a short write goes on
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

    def files(self) -> list[str]:
        """The log and its rotated copies that exist, oldest first."""
        names = [f"{self.path}.{i}" for i in range(self.keep, 0, -1)] + [self.path]
        return [n for n in names if os.path.isfile(n)]

    def _rotate(self) -> None:
        """`.{keep-1}` replaces `.{keep}` (the oldest goes), ..., the log becomes `.1`."""
        for i in range(self.keep, 0, -1):
            older = f"{self.path}.{i - 1}" if i > 1 else self.path
            with contextlib.suppress(FileNotFoundError):
                os.replace(older, f"{self.path}.{i}")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)  # closing releases the lock


def read_lines(paths: Sequence[str]) -> Iterator[bytes]:
    """Every whole line of the files, in order (a last line without its newline, still
    being written, is left out)."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError), Path(path).open("rb") as f:
            for line in f:
                if line.endswith(b"\n"):
                    yield line
