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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, Self, runtime_checkable

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
