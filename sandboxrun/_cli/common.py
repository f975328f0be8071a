"""What the commands share: settings, output, and backends that end with the process."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._log import logger

if TYPE_CHECKING:
    import argparse

    from .._backends.base import Backend
    from .._backends.image_tools import ImageTools
    from .._runner.reply import Reply
    from .._settings import Settings
    from .._types import ExecRequest, ExecResult


def load(args: argparse.Namespace, **overrides: Any) -> Settings:
    from .._settings import Settings

    return Settings.load(config=args.config, **overrides)


_Backend = TypeVar("_Backend", "Backend", "LazyBackend")


def opened_backend(
    backend: _Backend, opened: list[_Backend], if_killed: Sequence[Callable[[int], None]] = ()
) -> _Backend:
    """Closed after the answer is out; aborted on SIGTERM (`stop_cleanly`)."""
    opened.append(backend)
    stop_cleanly(backend, if_killed)
    return backend


def write_reply(reply: Reply) -> int:
    sys.stdout.buffer.write(reply.stdout)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(reply.stderr)
    sys.stderr.buffer.flush()
    return reply.exit_code


class LazyBackend:
    """The backend the settings name, imported and built when a hook is to run: most
    events an agent sends match no hook, and those never need docker (nor its ~150 ms
    import) or the Kubernetes client."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    def _get(self) -> Backend:
        with self._lock:
            if self._backend is None:
                from .._backends.choose import make_backend

                self._backend = make_backend(self.settings)
            return self._backend

    def check(self) -> None:
        self._get().check()

    def run(self, request: ExecRequest) -> ExecResult:
        return self._get().run(request)

    def image_tools(self) -> ImageTools | None:
        return self._get().image_tools()

    @property
    def image_id(self) -> str:
        """The image's id, once the backend inspected it (the audit trail names it)."""
        return str(getattr(self._backend, "image_id", "") or "")

    def abort(self) -> None:
        if self._backend is not None:
            self._backend.abort()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __enter__(self) -> LazyBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stop_cleanly(
    backend: Backend | LazyBackend, if_killed: Sequence[Callable[[int], None]] = ()
) -> None:
    """On SIGTERM/SIGINT/SIGHUP (an agent giving up on its hook), remove our containers
    before dying, so no hook outlives the sandboxrun that started it; then `if_killed`
    (`Caller.if_killed`: the audit record of the run it ended)."""

    def handler(signum: int, frame: object) -> None:
        backend.abort()
        for record in list(if_killed):
            try:
                record(signum)
            except Exception as exc:  # dying anyway: the record is best effort
                logger.debug("could not record the ended run: {}", exc)
        os._exit(128 + signum)  # worker threads are blocked on streams we just closed

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)


def emit(document: dict[str, Any]) -> None:
    # Pure ASCII: every control, bidi override and lone surrogate a hook or a
    # repository put in a string arrives escaped, and encoding can never fail.
    sys.stdout.write(json.dumps(document, ensure_ascii=True) + "\n")
    sys.stdout.flush()
