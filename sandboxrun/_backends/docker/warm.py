"""The warm path of the Docker backend: how its runs use the pool (`_backends/pool.py`).

A pooled container has the same config as a cold one, with a gate: it is attached and
started ahead of time, and its helper holds the hook until the event arrives on stdin.
A run takes one (`_run_warm`), delivers the event instead of starting it, and reads it
as a cold run does (`stream.Run`); a container found ended while idle, or unreachable,
took no event, and the run goes cold. Each container serves one run, then is removed
and replaced. Never pooled: an image whose helper has no gate, a request with host
files of its own (`lifecycle.never_pooled`), a network allowlist.
"""

from __future__ import annotations

import dataclasses
import time
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from ..._log import logger
from ..._types import ExecRequest, ExecResult
from ..base import cancellable
from ..helper import Helper
from ..lifecycle import GATE_MARGIN, Lifecycle, Pooled, never_pooled
from .engine import engine_errors, retry_engine
from .stream import Run, Stale, attach_stream, close_stream

if TYPE_CHECKING:
    from .allowlist import HookNet


class WarmPath(Lifecycle):
    """`DockerBackend`'s pooled runs; the backend gives the engine, the image's helper
    and the container's config."""

    _helper: Helper | bool | None  # the image's helper; False: not looked up yet
    _attached: dict[str, Any]  # idle pooled containers' streams, by id

    @property
    @abstractmethod
    def api(self) -> Any: ...

    @abstractmethod
    def _seccomp_helper(self) -> Helper | None: ...

    @abstractmethod
    def _config(
        self,
        request: ExecRequest,
        name: str,
        helper: Helper | None,
        net: HookNet | None = None,
        gate: float | None = None,
        frame: bool = False,
    ) -> dict[str, Any]: ...

    def _pooled(self, request: ExecRequest) -> Pooled | None:
        """The pool key of `request`, how to make its containers, and the pool (made
        here on first use, and again after `close()`); None when it goes cold: not warm,
        an image whose helper has no gate (the hook would start before its event), a
        host folder or file of its own mounted read-write (`never_pooled`), or a network
        allowlist (a network made per run)."""
        helper = self._seccomp_helper()
        if (
            not self.warm or helper is None or not helper.gate or never_pooled(request)
            or self.settings.network == "allowlist"
        ):  # fmt: skip
            return None
        from ..pool import pool_key

        base = dataclasses.replace(request, stdin=b"", cancel=None)  # the pool keeps no event
        gate = self.settings.pool_idle + GATE_MARGIN

        def make() -> dict[str, Any]:
            return self._config(base, self._name(), helper, gate=gate, frame=helper.frame)

        with engine_errors(self.settings.docker_host, self.settings.image):
            key = pool_key(make())
        return self._pool_of(key, make)

    def _run_warm(self, request: ExecRequest) -> ExecResult | None:
        """Run in a pooled container; None: none was ready (or it is in doubt), go cold."""
        pooled = self._pooled(request)
        if pooled is None:
            return None
        key, make, pool = pooled
        pool.want(key, make)  # its first run waits for the first launch
        cid = pool.take(key, wait=self.claim_wait)
        if cid is None:
            return None
        with self._lock:
            self._active.add(cid)
        framed = bool(self._helper and isinstance(self._helper, Helper) and self._helper.frame)
        with self._lock:
            attached = self._attached.pop(cid, None)  # attached at its launch (`_launch`)
        try:
            with cancellable(request, lambda: self._remove(cid)):
                run = Run(self, cid, request, time.monotonic(), warm=True, framed=framed)
                try:
                    run.attach(attached)
                except Stale:  # its stream says it ended while idle: nothing delivered
                    logger.info("pooled container {} had exited: running cold", cid[:12])
                    return None
                except Exception as exc:  # gone (removed by someone else?): nothing delivered
                    logger.info("pooled container {} unreachable: {}", cid[:12], exc)
                    if attached is not None:
                        close_stream(attached)
                    return None
                try:
                    with engine_errors(self.settings.docker_host, self.settings.image):
                        return run.execute()
                except Stale:  # it ended while idle: nothing took the event; run cold
                    logger.info("pooled container {} had exited: running cold", cid[:12])
                    return None
        finally:
            with self._lock:
                self._active.discard(cid)
            pool.retire(cid)  # single use: removed, off the answer's path
            pool.want(key, make)  # and replaced (unless closed meanwhile)

    def _launch(self, config: dict[str, Any]) -> str:
        """Create, attach and start a pooled container; it waits at its gate. Attached
        before its start (as `docker run` does), so a run that takes it only writes its
        event and reads: no attach on the answer's path, and no question to the engine
        whether it still runs (an exit ends the stream we hold: `Run.attach`)."""
        with engine_errors(self.settings.docker_host, self.settings.image):
            cid = str(retry_engine(self.api.create_container)(**config)["Id"])
            try:
                attached = attach_stream(self.api, cid)
                with self._lock:
                    self._attached[cid] = attached
                self.api.start(cid)
            except BaseException:
                self._remove(cid)
                raise
            return cid
