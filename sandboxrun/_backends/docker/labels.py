"""The Docker backend's labels: the shared contract (`.._backends.labels`), by its old name."""

from __future__ import annotations

from ..labels import (
    BOOT,
    DEADLINE,
    HOOK,
    HOST,
    MANAGED,
    PID,
    PIDNS,
    RUN,
    STARTED,
    container_labels,
    here,
    is_stale,
    owner_gone,
    owner_labels,
    started,
)

__all__ = [
    "BOOT", "DEADLINE", "HOOK", "HOST", "MANAGED", "PID", "PIDNS", "RUN", "STARTED",
    "container_labels", "here", "is_stale", "owner_gone", "owner_labels", "started",
]  # fmt: skip
