"""The warm path: pools of containers started ahead of time, each used once (DESIGN.md §5).

A pooled container is created and started with everything fixed (image, mounts, limits,
user, environment, runtime, network, command, workdir: the whole container config), and
its helper waits at a gate (`--gate`, images/sandboxrun-seccomp.c) until the event
arrives on stdin: the hook process does not exist before that. So the pool's key is the
config itself, hashed without what differs per container (its name and labels): a
request whose config differs in anything gets another pool, never a container made for
something else. The backend builds that config with the same code as the cold path.

    want(key) -> [launch: create + start, in the background] -> idle -> take(key)
        -> the backend delivers the event and reads the answer -> retire: removed
    idle longer than `idle` -> removed; closed -> every container removed

Single use: `take` removes a container from the pool under the lock, and a container
goes back into no pool ever. A container whose state is in doubt (it exited while idle,
its launch failed half way) is removed, never handed out. Bounds: `size` per key (idle
and starting) at rest, more under a burst (`_target`: the claims that come in while one
launch takes, from the observed rate), `total` over all keys (the idle container of the
least recently used key makes room), `idle` seconds before an unused container goes.

The engine work runs on a few workers of our own, launches before removals: under a
burst the replacements come first, and the used containers (which end by themselves
once their hook has run) are removed when no launch waits, or once more of them wait
than `total`. The containers carry the
usual labels (owner, a deadline past their idle life and their hook's deadline), so
`reap` sweeps a pool whose owner died, and the helper's own gate limit ends them anyway.

This module never imports docker: the backend hands it `launch` and `remove`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._log import logger

Config = dict[str, Any]
# What differs between two containers made for the same request: not part of the key.
PER_CONTAINER = ("name", "labels")
LAUNCH, REMOVE, STOP = 0, 1, 2  # the workers' order: launches first, then removals
WORKERS = 3  # engine calls at once: a launch (~0.2-0.4 s) and removals overlap on 2 cores
WORKER_IDLE = 2.0  # seconds a worker waits for work before it ends (a new one starts later)


def pool_key(config: Mapping[str, Any]) -> str:
    """The hash of a container config without its name and labels."""
    fixed = {k: v for k, v in config.items() if k not in PER_CONTAINER}
    # Mount, Ulimit and LogConfig are dicts; default=repr only for what else may come.
    text = json.dumps(fixed, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def stats(pool: Pool | None) -> dict[str, int]:
    """A backend's pool for `serve`'s metrics: idle and starting sandboxes, and the
    claims that waited for one starting (`Pool.waited`). None: no pool (yet)."""
    if pool is None:
        return {"idle": 0, "starting": 0, "claims_waited": 0}
    idle, starting = pool.sizes()
    return {"idle": idle, "starting": starting, "claims_waited": pool.waited}


@dataclass
class _Key:
    make: Callable[[], Config]  # a fresh config (new name, labels) for this key
    idle: deque[tuple[str, float]] = field(default_factory=deque)  # (id, started at)
    starting: int = 0
    waiting: int = 0  # callers of `take` waiting for one of the `starting`
    used: float = 0.0  # when it was last wanted: the least recently used makes room
    claims: deque[float] = field(default_factory=deque)  # when `take` asked, lately


class Pool:
    """Containers started ahead of time, by key. Thread-safe."""

    def __init__(
        self,
        launch: Callable[[Config], str],
        remove: Callable[[str], None],
        size: int = 2,
        total: int = 16,
        idle: float = 300.0,
    ) -> None:
        self._launch, self._remove = launch, remove
        self.size, self.total, self.idle = size, total, idle
        self._keys: dict[str, _Key] = {}
        self._lock = threading.Condition()
        self._closed = False
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[..., None], tuple[Any, ...]]]
        self._queue = queue.PriorityQueue()
        self._order = itertools.count()  # FIFO within a priority
        self._workers: set[threading.Thread] = set()
        self._idle_workers = 0
        self._shut = False  # close() is done: work is done on the caller's thread
        self._pending = 0  # launches and removals submitted and not done
        self._removals = 0  # removals submitted and not done
        self.launch_s = 0.5  # how long a launch takes (moving average): sizes bursts
        self._stop = threading.Event()
        self._janitor: threading.Thread | None = None
        self.waited = 0  # claims that waited for a starting container (`serve`'s metrics)

    # -- the backend's side --------------------------------------------------------

    def take(self, key: str, wait: float = 0.0) -> str | None:
        """An idle container of `key`, now out of the pool for good; None if none is.
        With `wait`: when none is idle but one is starting that no other caller waits
        for, wait for it up to `wait` seconds (it is as far along as a cold start would
        be, and often further)."""
        expired: list[str] = []
        found = None
        counted = False
        end = time.monotonic() + wait
        with self._lock:
            entry = self._keys.get(key)
            if entry is not None:
                entry.claims.append(time.monotonic())
            while entry is not None and found is None:
                now = time.monotonic()
                if entry.idle:
                    cid, born = entry.idle.popleft()
                    if now - born > self.idle:
                        expired.append(cid)
                    else:
                        found = cid
                    continue
                if self._closed or entry.starting <= entry.waiting or now >= end:
                    break
                if not counted:  # one claim that waits, however often it wakes
                    counted = True
                    self.waited += 1
                entry.waiting += 1
                try:
                    self._lock.wait(end - now)
                finally:
                    entry.waiting -= 1
        for cid in expired:
            self.retire(cid)
        return found

    def want(self, key: str, make: Callable[[], Config]) -> None:
        """Keep up to `size` containers of `key` idle or starting: launch what is missing
        in the background."""
        with self._lock:
            if self._closed:
                return
            entry = self._keys.setdefault(key, _Key(make))
            entry.used = time.monotonic()
            missing = self._target(entry) - len(entry.idle) - entry.starting
            for _ in range(max(0, missing)):
                victim = None
                if self._count() >= self.total:
                    victim = self._least_recent_idle(key)
                    if victim is None:
                        break  # every slot is busy starting or belongs to this key
                entry.starting += 1
                self._submit(LAUNCH, self._start, key, entry, victim)
            if self._janitor is None:
                self._janitor = threading.Thread(
                    target=self._sweep, name="sandboxrun-pool-janitor", daemon=True
                )
                self._janitor.start()

    def ready(self, key: str, timeout: float) -> bool:
        """Wait until `key` has an idle container (pre-warming); False at the timeout."""
        end = time.monotonic() + timeout
        with self._lock:
            while True:
                entry = self._keys.get(key)
                if entry and entry.idle:
                    return True
                if self._closed or (entry is not None and not entry.starting):
                    return False  # nothing on its way: its launch failed
                left = end - time.monotonic()
                if left <= 0 or not self._lock.wait(left):
                    return bool(entry and entry.idle)

    def retire(self, cid: str) -> None:
        """Remove a container in the background (used, expired, or in doubt), after the
        launches that wait, unless more than `total` removals wait already."""
        with self._lock:
            first = self._removals >= self.total
        self._submit(LAUNCH if first else REMOVE, self._remove_one, cid)

    def settle(self, timeout: float) -> bool:
        """Wait until no launch or removal is under way; False at the timeout."""
        end = time.monotonic() + timeout
        with self._lock:
            while self._pending:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def sizes(self) -> tuple[int, int]:
        """(idle, starting) containers over every key, now."""
        with self._lock:
            return (sum(len(e.idle) for e in self._keys.values()),
                    sum(e.starting for e in self._keys.values()))  # fmt: skip

    def idle_ids(self) -> list[str]:
        with self._lock:
            return [cid for e in self._keys.values() for cid, _ in e.idle]

    def close(self) -> None:
        """Remove every idle container and wait for the launches and removals under way
        (a container whose launch ends after this is removed at once)."""
        with self._lock:
            self._closed = True
            doomed = [cid for e in self._keys.values() for cid, _ in e.idle]
            for e in self._keys.values():
                e.idle.clear()
            self._lock.notify_all()
        self._stop.set()
        for cid in doomed:
            self.retire(cid)
        with self._lock:
            workers = list(self._workers)
            for _ in workers:
                self._queue.put((STOP, next(self._order), _nothing, ()))  # after all the work
        for worker in workers:
            worker.join()
        with self._lock:
            self._shut = True
        self._run_queued()  # what a worker that ended on its own left behind

    # -- the background ------------------------------------------------------------

    def _target(self, entry: _Key) -> int:
        """Containers of a key to keep idle or starting: `size`, or under a burst the
        claims expected while one launch takes (the rate over the last two launch
        times, Little's law), so that the next claims find one ready; at most `total`.
        The caller holds the lock."""
        now = time.monotonic()
        window = max(1.0, 2 * self.launch_s)
        while entry.claims and now - entry.claims[0] > window:
            entry.claims.popleft()
        ahead = math.ceil(len(entry.claims) / window * self.launch_s)
        return min(self.total, max(self.size, ahead))

    def _submit(self, priority: int, fn: Callable[..., None], *args: Any) -> None:
        """Queue engine work for the workers (started as needed, up to `WORKERS`); after
        close(), do it here."""
        with self._lock:
            shut = self._shut
            if not shut:
                self._pending += 1
                self._removals += fn == self._remove_one
                self._queue.put((priority, next(self._order), fn, args))
                if self._idle_workers == 0 and len(self._workers) < WORKERS:
                    worker = threading.Thread(target=self._work, name="sandboxrun-pool")
                    self._workers.add(worker)
                    worker.start()
        if shut:
            fn(*args)

    def _work(self) -> None:
        """A worker: queued engine work, best first, until STOP or idle for a while."""
        me = threading.current_thread()
        while True:
            with self._lock:
                self._idle_workers += 1
            try:
                priority, _, fn, args = self._queue.get(timeout=WORKER_IDLE)
            except queue.Empty:
                with self._lock:
                    self._idle_workers -= 1
                    if self._queue.empty():
                        self._workers.discard(me)
                        return
                continue
            with self._lock:
                self._idle_workers -= 1
            if priority == STOP:
                with self._lock:
                    self._workers.discard(me)
                return
            try:
                fn(*args)
            except Exception as exc:  # pragma: no cover - launch and remove never raise
                logger.warning("pool work failed: {}", exc)
            finally:
                with self._lock:
                    self._pending -= 1
                    self._removals -= fn == self._remove_one
                    self._lock.notify_all()

    def _run_queued(self) -> None:
        while True:
            try:
                priority, _, fn, args = self._queue.get_nowait()
            except queue.Empty:
                return
            if priority != STOP:
                with self._lock:
                    self._pending -= 1
                    self._removals -= fn == self._remove_one
                fn(*args)

    def _remove_one(self, cid: str) -> None:
        self._remove(cid)

    def _start(self, key: str, entry: _Key, evict: str | None) -> None:
        """Launch one container of `key`, after removing the one it replaces (so the
        engine never holds more than `total`)."""
        if evict is not None:
            self._remove(evict)
        cid = None
        began = time.monotonic()
        try:
            if not self._closed:  # closed meanwhile: launch nothing more
                cid = self._launch(entry.make())
        except Exception as exc:  # the run that wanted it goes cold and reports the cause
            logger.warning("could not start a pooled container: {}", exc)
        with self._lock:
            if cid is not None:
                self.launch_s = 0.8 * self.launch_s + 0.2 * (time.monotonic() - began)
            entry.starting -= 1
            keep = cid is not None and not self._closed and self._keys.get(key) is entry
            if keep:
                entry.idle.append((str(cid), time.monotonic()))
            self._lock.notify_all()
        if cid is not None and not keep:
            self._remove(cid)

    def _sweep(self) -> None:
        """Remove containers idle longer than `idle`, until closed."""
        while not self._stop.wait(max(1.0, self.idle / 10)):
            now = time.monotonic()
            expired = []
            with self._lock:
                for k, e in list(self._keys.items()):
                    while e.idle and now - e.idle[0][1] > self.idle:
                        expired.append(e.idle.popleft()[0])
                    if not e.idle and not e.starting and now - e.used > self.idle:
                        del self._keys[k]  # a key nobody wants any more: forget it
            for cid in expired:
                self.retire(cid)

    def _count(self) -> int:
        return sum(len(e.idle) + e.starting for e in self._keys.values())

    def _least_recent_idle(self, key: str) -> str | None:
        """Out of the pool: the oldest idle container of the least recently wanted key
        other than `key` (the caller holds the lock)."""
        others = [e for k, e in self._keys.items() if k != key and e.idle]
        if not others:
            return None
        return min(others, key=lambda e: e.used).idle.popleft()[0]


def _nothing() -> None:
    pass
