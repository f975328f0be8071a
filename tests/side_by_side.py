"""Runs started side by side on one backend, for the tests that stop one of them (a
cancelled run must leave the others alone): each run's result, or what it raised."""

from __future__ import annotations

import threading
from typing import Any

from sandboxrun import ExecRequest


def start(
    backend: Any, requests: dict[str, ExecRequest]
) -> tuple[list[threading.Thread], dict[str, Any]]:
    """Start each run in a thread of its own: (the threads, in order; the outcomes by
    name, filled in as the runs end)."""
    outcomes: dict[str, Any] = {}

    def run(name: str, request: ExecRequest) -> None:
        try:
            outcomes[name] = backend.run(request)
        except Exception as exc:
            outcomes[name] = exc

    threads = [threading.Thread(target=run, args=item) for item in requests.items()]
    for thread in threads:
        thread.start()
    return threads, outcomes
