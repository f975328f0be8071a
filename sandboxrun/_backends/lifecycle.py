"""The life of a backend's sandboxes, the same on Docker and on Kubernetes.

    run(request): refused if its caller has gone -> check() (the preflight; its first
    success sweeps stale sandboxes, beside the run) -> warm: a pooled sandbox, else
    cold: a new one -> the answer -> the sandbox removed off the answer's path
    (`_in_background`), or at once by `abort()` (we are being stopped)

Every sandbox carries the labels of `labels.py`: its owner, and a deadline by which
its owner would have ended it (the hook's own deadline, plus `DEADLINE_SLACK`, plus
any time it may wait in a pool). The sweep (`docker/reaper.py`,
`kubernetes/lifecycle.py`) removes those whose deadline has passed or whose owner is
gone (`labels.is_stale`), whoever made them: a sandboxrun killed before it could
remove its sandboxes leaves nothing behind for long.

A sandbox waiting for its removal stays in `_active`, so `abort()` removes it too;
`close()` ends the pools (`pool.py`) and waits for every removal. The backend stays
usable after it: a later run starts a new remover, and runs cold (a closed pool stays
closed). What differs between the backends (how a sandbox is made, run, removed,
pooled) is theirs: `check`, `_run_cold`, `_run_warm`, `_pooled`, `_launch`, `_remove`.
"""

from __future__ import annotations

import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Self

from .._settings import Settings
from .._types import ExecRequest, ExecResult
from .base import refuse_cancelled
from .helper import deadline_reached

if TYPE_CHECKING:  # imported where used: a cold run makes no pool
    from .pool import Pool

STREAM_GRACE = 10.0  # seconds after the deadline before we stop waiting for the stream
# Past a sandbox's own end, the seconds before its label deadline (the sweep's cue).
DEADLINE_SLACK = 2 * STREAM_GRACE
# A pooled sandbox's helper gives up waiting this long after the pool would have
# removed it: the backstop for a pool whose owner died, never a race with a claim.
GATE_MARGIN = 60.0

# What the pool of a kind gives: its key, how to make its sandboxes, the pool.
Pooled = tuple[str, Callable[[], dict[str, Any]], "Pool"]


class Lifecycle(ABC):
    """What a backend does around its runs; `DockerBackend` and `KubernetesBackend`
    say how a sandbox is made, run and removed."""

    # Seconds a run waits for a pooled sandbox that is starting before it goes cold.
    claim_wait = 5.0

    def __init__(self, settings: Settings, warm: bool) -> None:
        self.settings = settings
        self.run_id = uuid.uuid4().hex
        self._count = 0
        self._lock = threading.RLock()  # reentrant: a lazy client is reached while held
        self._active: set[str] = set()  # sandboxes of runs in flight, for abort()
        self._remover: ThreadPoolExecutor | None = None  # cleanup after the answer
        self.warm = warm and settings.pool_size > 0
        self._pool: Pool | None = None  # made at the first warm run, ended by close()

    @abstractmethod
    def check(self) -> None:
        """Refuse to start unless runs can; the first success sweeps (`_in_background`)."""

    @abstractmethod
    def _run_cold(self, request: ExecRequest) -> ExecResult: ...

    @abstractmethod
    def _run_warm(self, request: ExecRequest) -> ExecResult | None:
        """Run in a pooled sandbox; None: none was ready (or it is in doubt), go cold."""

    @abstractmethod
    def _pooled(self, request: ExecRequest) -> Pooled | None:
        """The pool of requests like `request` (`_pool_of`); None: never pooled."""

    @abstractmethod
    def _launch(self, config: dict[str, Any]) -> str:
        """Make and start a pooled sandbox from `config`; its id."""

    @abstractmethod
    def _remove(self, sandbox: str) -> None:
        """Remove a sandbox now, whatever its state; never raises (the sweep remains)."""

    def run(self, request: ExecRequest) -> ExecResult:
        refuse_cancelled(request)
        self.check()  # whatever the entry point: never a run without the preflight
        if self.warm:
            result = self._run_warm(request)
            if result is not None:
                return result
        return self._run_cold(request)

    def prewarm(self, request: ExecRequest, wait: float = 0.0) -> bool:
        """Start the pool for requests like `request` (its stdin is not used); with
        `wait`, wait up to that many seconds for a sandbox to be ready. False: this
        request is never pooled (see `_pooled`), or none was ready in time."""
        self.check()
        pooled = self._pooled(request)
        if pooled is None:
            return False
        key, make, pool = pooled
        pool.want(key, make)
        return pool.ready(key, wait) if wait > 0 else True

    def stats(self) -> dict[str, int]:
        """The warm pool for `serve`'s metrics (`pool.stats`)."""
        from .pool import stats

        with self._lock:
            return stats(self._pool)

    def abort(self) -> None:
        """Remove every sandbox of a run still in flight (we are being stopped)."""
        with self._lock:
            doomed = list(self._active)
        for sandbox in doomed:  # a warm run's too; the idle pool stays (`close()` ends it)
            self._remove(sandbox)

    def close(self) -> None:
        """Remove the pools' sandboxes (waiting for launches under way), and wait until
        every sandbox of this backend's runs is removed."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        with self._lock:
            remover, self._remover = self._remover, None
        if remover is not None:
            remover.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _name(self) -> str:
        with self._lock:
            self._count += 1
            return f"sandboxrun-{self.run_id[:12]}-{self._count}"

    def _in_background(self, fn: Callable[..., None], *args: Any) -> None:
        """Cleanup after (or beside) the answer; `close()` waits for it."""
        with self._lock:
            if self._remover is None:
                self._remover = ThreadPoolExecutor(2, thread_name_prefix="sandboxrun-cleanup")
            self._remover.submit(fn, *args)

    def _pool_of(self, key: str, make: Callable[[], dict[str, Any]]) -> Pooled:
        """(key, make, the pool): the pool made here on first use, and again after
        `close()`."""
        from .pool import Pool

        s = self.settings
        with self._lock:
            if self._pool is None:
                self._pool = Pool(self._launch, self._remove, s.pool_size, s.pool_total,
                                  s.pool_idle)  # fmt: skip
            return key, make, self._pool


def never_pooled(request: ExecRequest) -> bool:
    """Whether `request` has host folders or files of its own mounted read-write (a hook
    state, a session's /tmp, plugin data, a CLAUDE_ENV_FILE made for this one run, a
    changed hook's approved files): a sandbox made ahead of time cannot have them."""
    return bool(
        request.state or request.tmp or request.env_file
        or any(source for _, source in request.private_dirs) or request.overlays
    )  # fmt: skip


def timed_out(
    flagged: bool, deadline_fired: bool, exit_code: int, oom: bool, stderr: bytes | bytearray
) -> bool:
    """Whether our deadline ended the run: our kill said so (`flagged`); a kill whose
    answer never came, or came as an error, still ended it (a SIGKILL after our
    deadline fired is ours, not the hook's own exit 137); or the helper's deadline."""
    return (
        flagged
        or (deadline_fired and exit_code == 137 and not oom)
        or deadline_reached(exit_code, stderr)
    )
