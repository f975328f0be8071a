"""The backend seam: run one command in isolation, say what happened.

`DockerBackend` (in `_docker.py`) is the product. `FakeBackend` serves the tests
of everything above the sandbox, the way httpx's `MockTransport` does: it proves
the protocol logic and nothing about isolation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from ._types import ExecRequest, ExecResult


@runtime_checkable
class Backend(Protocol):
    def check(self) -> None:
        """Raise a `SandboxrunError` unless runs can start (engine up, image there)."""

    def run(self, request: ExecRequest) -> ExecResult:
        """Run once. Hook behaviour is data in the result; our failures raise."""


class FakeBackend:
    """Answers every request with `handler(request)`; records what it was asked."""

    def __init__(self, handler: Callable[[ExecRequest], ExecResult]) -> None:
        self._handler = handler
        self.requests: list[ExecRequest] = []

    def check(self) -> None:
        return None

    def run(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        return self._handler(request)
