"""The backend seam: run one command in isolation, say what happened.

`DockerBackend` (in `docker/backend.py`) is the product. `FakeBackend` serves the tests
of everything above the sandbox, the way httpx's `MockTransport` does: it proves
the protocol logic and nothing about isolation.

A backend may hold resources between runs (`DockerBackend(warm=True)` keeps pools of
containers): `close()`, or `with backend:`, ends them. Closing twice is harmless.

Two optional methods serve `sandboxrun serve`'s operability, looked up with getattr:
`ping()` raises unless the engine answers now (its /readyz; `check` may pass once and
stay cheap), and `stats()` returns the warm pools' {"idle", "starting",
"claims_waited"} counts (its /metrics). A backend without them has nothing to say.

A request may carry a `Cancel` (`ExecRequest.cancel`: `serve` sets it when the client
hangs up): the backend then removes that run's sandbox at once and raises `Cancelled`
(`cancellable`), touching no other run; `abort()` removes every run's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol, Self, runtime_checkable

from .._errors import Cancelled
from .._types import ExecRequest, ExecResult
from .image_tools import ImageTools


@runtime_checkable
class Backend(Protocol):
    def check(self) -> None:
        """Raise a `SandboxrunError` unless runs can start (engine up, image there)."""

    def run(self, request: ExecRequest) -> ExecResult:
        """Run once. Hook behaviour is data in the result; our failures raise."""

    def image_tools(self) -> ImageTools | None:
        """What the image holds (`_image_tools`), or None: unknown, checks skipped."""

    def abort(self) -> None:
        """Remove the sandboxes of runs in flight, at once (we are being stopped)."""

    def close(self) -> None:
        """Release what the backend keeps between runs (pooled containers)."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


def refuse_cancelled(request: ExecRequest) -> None:
    """Start no sandbox for a run whose caller has already gone."""
    if request.cancel is not None and request.cancel.is_set():
        raise Cancelled("the caller went away: the hook was not started")


@contextlib.contextmanager
def cancellable(request: ExecRequest, stop: Callable[[], None]) -> Iterator[None]:
    """The block runs one sandbox of `request`, made already: if the request is
    cancelled meanwhile, `stop()` removes it (it must not raise), and the block ends in
    `Cancelled` whatever it returned or raised (a stream cut short, a wait on a removed
    container): nothing of a cancelled run counts as the hook's answer."""
    try:
        with request.on_cancel(stop):
            yield
    except Exception as exc:
        if request.cancel is not None and request.cancel.is_set():
            raise Cancelled("the caller went away: the hook was stopped") from exc
        raise
    if request.cancel is not None and request.cancel.is_set():
        raise Cancelled("the caller went away: the hook was stopped")


class FakeBackend:
    """Answers every request with `handler(request)`; records what it was asked."""

    def __init__(
        self, handler: Callable[[ExecRequest], ExecResult], tools: ImageTools | None = None
    ) -> None:
        self._handler = handler
        self._tools = tools  # None: the image is unknown, so no preflight check fails
        self.requests: list[ExecRequest] = []
        self.closed = False

    def check(self) -> None:
        return None

    def image_tools(self) -> ImageTools | None:
        return self._tools

    def run(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        return self._handler(request)

    def abort(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> FakeBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
