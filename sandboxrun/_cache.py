"""`serve`'s cache of answers that depend only on files: parsed settings, discovery
and preflight (issue 19), each kept with every file it read and valid while none of
them changed.

What a result depends on is not declared by hand (nine dialects read dozens of files,
and a file added later would be missed): it is recorded while the result is computed,
on the computing thread. The interpreter's audit hook sees every `open`, `listdir` and
`scandir`; `os.stat`, `os.lstat`, `os.access` and `os.readlink` are wrapped (the
existence checks: `Path.exists`, `os.path.isfile`, `realpath`), so a file whose
absence mattered is recorded absent, and its creation is a change. Each path gets a
fingerprint, taken before it is read: its `lstat` and `stat` (mode, inode, device,
size, mtime, ctime), or the error. A later request re-takes every fingerprint; any
difference (an edit, even of the same size with its mtime put back: the ctime moved; a
file created or removed; a symlink swapped; a folder's entries changed) recomputes.

When in doubt, miss: a result is not kept when its computation did anything the record
cannot follow (a relative path, a file descriptor, a write, a change of folder, a
subprocess, a network connection, a thread started: its reads are on another thread;
work handed to a thread that already runs is not seen, and nothing computed here does
so), logged a line (a hit would not log it again), or read a file changed in the last
`RECENT_NS` (a change in the same clock tick as the read would leave the same
fingerprint: git's "racy clean" rule). A stale answer could weaken a guard; a miss
only costs the time the cache saves.

Off until `enable()` (the server calls it): the CLI's one-shot process never caches.
Bounded: `MAX_ENTRIES` results (least recently used first out), `MAX_DEPS` paths each.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from stat import S_ISDIR
from typing import Any, TypeVar

from . import _log

T = TypeVar("T")
MAX_ENTRIES = 512
MAX_DEPS = 2048
RECENT_NS = 2_000_000_000  # a file changed within this of the computation: not kept
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = frozenset(("open", "os.listdir", "os.scandir"))
# What a record cannot follow: another process's or the network's part in the result,
# or a change of the folder relative paths are read against.
_DOUBTFUL_EVENTS = frozenset((
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork", "os.forkpty",
    "socket.connect", "os.chdir", "os.fchdir", "os.mkdir", "os.rename", "os.remove",
    "os.rmdir", "os.symlink", "os.link", "os.truncate", "os.chmod", "os.chown", "os.utime",
))  # fmt: skip
_WRAPPED = ("stat", "lstat", "access", "readlink")

Fingerprint = tuple[Any, Any]
Deps = dict[str, tuple[bool, Fingerprint]]  # path: (its entries were read, fingerprint)
_real_stat, _real_lstat = os.stat, os.lstat
_local = threading.local()  # `.recording`: the _Recording of this thread's computation


class _Recording:
    """The paths a computation touched, each with its fingerprint before it was read,
    and why its result must not be kept (None: it may)."""

    def __init__(self) -> None:
        self.deps: Deps = {}
        self.doubt: str | None = None

    def note(self, path: Any, listed: bool = False) -> None:
        if self.doubt is not None:
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif not isinstance(path, str):
            path = os.fspath(path) if hasattr(path, "__fspath__") else path
        if not isinstance(path, str) or not os.path.isabs(path):
            self.doubt = f"a path the record cannot place: {path!r}"
        elif path not in self.deps or (listed and not self.deps[path][0]):
            if len(self.deps) >= MAX_DEPS:
                self.doubt = "too many files"
            else:
                self.deps[path] = (listed, fingerprint(path, listed))


def _signature(st: os.stat_result, listed: bool) -> tuple[int, ...]:
    # A folder only passed through or looked at (`realpath`, `is_dir`) stands while it
    # is the same folder: a child it holds is recorded itself, and a folder whose
    # entries mattered was listed (its mtime and ctime move with every entry).
    if S_ISDIR(st.st_mode) and not listed:
        return (st.st_mode, st.st_ino, st.st_dev)
    return (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def fingerprint(path: str, listed: bool = False) -> Fingerprint:
    """What must not change for a result that read `path` to stand: its `lstat` (the
    link itself, when it is one) and its `stat` (what it points to), or their errors.
    `listed`: a folder whose entries were read (else only which folder it is)."""
    parts: list[Any] = []
    for take in (_real_lstat, _real_stat):
        try:
            parts.append(_signature(take(path), listed))
        except OSError as exc:
            parts.append(exc.errno)
    return parts[0], parts[1]


def _recent(deps: Mapping[str, tuple[bool, Fingerprint]], now_ns: int) -> bool:
    """Whether a file changed within RECENT_NS of now (or in the future)."""
    for _listed, fp in deps.values():
        for part in fp:
            if isinstance(part, tuple) and len(part) > 3 and max(part[4:]) > now_ns - RECENT_NS:
                return True
    return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    recording: _Recording | None = getattr(_local, "recording", None)
    if recording is None:
        return
    if event in _PATH_EVENTS:
        if event == "open":
            flags = args[2]
            if isinstance(flags, int) and flags & _WRITES:
                recording.doubt = "it wrote a file"
            if isinstance(args[0], int):  # open(fd): the fd came from a recorded open
                return
        recording.note(args[0] if args else None, listed=event != "open")
    elif event in _DOUBTFUL_EVENTS:
        recording.doubt = f"it did {event}"


def _wrap(name: str) -> None:
    real = getattr(os, name)

    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        recording: _Recording | None = getattr(_local, "recording", None)
        if recording is not None:
            if kwargs.get("dir_fd") is not None:
                recording.doubt = "a path relative to a folder descriptor"
            else:
                recording.note(path)
        return real(path, *args, **kwargs)

    wrapper.__wrapped__ = real  # type: ignore[attr-defined]
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = real.__doc__
    # What the original supports, the wrapper does: `shutil.rmtree` keeps its
    # descriptor-based walk (safe against symlink races) only if `os.stat` is listed.
    for supports in (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks,
                     os.supports_effective_ids):  # fmt: skip
        if real in supports:
            supports.add(wrapper)
    setattr(os, name, wrapper)


def _wrap_thread_start() -> None:
    """A thread started by a computation reads on its own thread, which the record does
    not see: its result is not kept. (`threading.Thread.start` calls this name.)"""
    real = threading._start_new_thread  # type: ignore[attr-defined]

    def start(*args: Any, **kwargs: Any) -> Any:
        recording: _Recording | None = getattr(_local, "recording", None)
        if recording is not None:
            recording.doubt = "it started a thread"
        return real(*args, **kwargs)

    threading._start_new_thread = start  # type: ignore[attr-defined]


class Cache:
    """Results by key, each with its fingerprints (`_Recording.deps`); LRU-bounded."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Any, Deps]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.unkept = 0

    def get(self, kind: str, key: Hashable, compute: Callable[[], T]) -> T:
        full = (kind, key)
        with self._lock:
            entry = self._entries.get(full)
            if entry is not None:
                self._entries.move_to_end(full)
        if entry is not None:
            kept, fingerprints = entry
            if all(fingerprint(p, listed) == fp for p, (listed, fp) in fingerprints.items()):
                self.hits += 1
                return kept  # type: ignore[no-any-return]
            with self._lock:
                if self._entries.get(full) is entry:
                    del self._entries[full]
        self.misses += 1
        value, deps, doubt = record(compute)
        if doubt is None:
            with self._lock:
                self._entries[full] = (value, deps)
                self._entries.move_to_end(full)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
        else:
            self.unkept += 1
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def record(compute: Callable[[], T]) -> tuple[T, Deps, str | None]:
    """`compute()`, with the paths it touched and why its result is not to be kept."""
    if getattr(_local, "recording", None) is not None:  # nested: the outer one records
        return compute(), {}, "nested"
    recording = _local.recording = _Recording()
    lines = _log.count_lines()
    try:
        value = compute()
    finally:
        _local.recording = None
    if _log.count_lines() != lines:
        recording.doubt = recording.doubt or "it logged a line"
    if recording.doubt is None and _recent(recording.deps, time.time_ns()):
        recording.doubt = "a file it read changed moments ago"
    return value, recording.deps, recording.doubt


def freeze(value: Any) -> Hashable:
    """A hashable stand-in for a key part (mappings, lists and dataclasses of them);
    TypeError for what cannot be one."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    try:
        hash(value)  # already a key (an image's listing: its frozensets keep their hash)
        return value  # type: ignore[no-any-return]
    except TypeError:
        pass
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return (type(value), tuple(freeze(getattr(value, f)) for f in fields))
    raise TypeError(f"not a key: {type(value).__name__}")


_cache: Cache | None = None
_installed = False


def enable(max_entries: int = MAX_ENTRIES) -> Cache:
    """Turn the cache on in this process (the server's): the audit hook and the wrapped
    `os` functions are installed once, and cost a thread-local read when not recording."""
    global _cache, _installed
    if not _installed:
        sys.addaudithook(_audit)
        for name in _WRAPPED:
            _wrap(name)
        _wrap_thread_start()
        _installed = True
    _cache = Cache(max_entries)
    return _cache


def disable() -> None:
    global _cache
    _cache = None


def stats() -> dict[str, int] | None:
    """The cache's counts (`/healthz` on the unix socket); None when it is off."""
    cache = _cache
    if cache is None:
        return None
    return {"entries": len(cache), "hits": cache.hits, "misses": cache.misses,
            "unkept": cache.unkept}  # fmt: skip


def cached(kind: str, key: Any, compute: Callable[[], T]) -> T:
    """`compute()`, from the cache when it is on and nothing it read has changed."""
    cache = _cache
    if cache is None:
        return compute()
    try:
        frozen = freeze(key)
        hash(frozen)
    except TypeError:
        return compute()
    return cache.get(kind, frozen, compute)
