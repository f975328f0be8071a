"""Sweeping containers that a killed or crashed sandboxrun left behind.

Every container carries labels (`sandboxrun.managed`, the owning pid and host, a
deadline). A container is stale when its deadline has passed (its owner would
have killed it by then) or when its owner, on this host, is no longer alive. A
container a live run still uses is never touched, unless `everything` is asked.
(The testcontainers "Ryuk" pattern, without a sidecar.)
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import Any

from loguru import logger

from ._engine import engine_errors, retry_engine

LABEL = "sandboxrun.managed"  # on every container sandboxrun starts


def is_stale(labels: Mapping[str, str], now: float, host: str) -> bool:
    """Whether the owner of a container with these labels is gone or overdue."""
    try:
        deadline = float(labels.get("sandboxrun.deadline", ""))
        pid = int(labels.get("sandboxrun.pid", ""))
    except ValueError:
        return False  # not ours to judge: only `--all` removes it
    if now > deadline:
        return True
    return labels.get("sandboxrun.host") == host and not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap(client: Any, everything: bool = False) -> list[str]:
    """Remove stale sandboxrun containers (all of them with `everything`); return ids."""
    api = client.api
    now, host = time.time(), socket.gethostname()
    with engine_errors():
        found = retry_engine(api.containers)(all=True, filters={"label": f"{LABEL}=1"})
    removed = []
    for c in found:
        if everything or is_stale(c.get("Labels") or {}, now, host):
            try:
                retry_engine(api.remove_container)(c["Id"], force=True)
                removed.append(c["Id"])
            except Exception as exc:  # a sweep never fails the run that does it
                logger.warning("could not remove container {}: {}", c["Id"][:12], exc)
    if removed:
        logger.info("reaped {} stale container(s)", len(removed))
    return removed
