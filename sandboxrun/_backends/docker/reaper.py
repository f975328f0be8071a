"""Sweeping containers that a killed or crashed sandboxrun left behind.

Every container carries the labels of `labels.py` (`sandboxrun.managed`, its owner's
identity, a deadline). A container is stale when its deadline has passed (its owner
would have killed it by then) or when its owner, which must have lived on this host,
boot and pid namespace, is gone. A container a live run still uses is never touched,
unless `everything` is asked. Its anonymous volumes go with it.
(The testcontainers "Ryuk" pattern, without a sidecar.)
"""

from __future__ import annotations

import time
from typing import Any

from ..._log import logger
from ..labels import MANAGED, is_stale
from .engine import engine_errors, retry_engine
from .network import DUPLICATE_AGE, remove_duplicates

LABEL = MANAGED  # the name the tests and older callers know


def reap(client: Any, everything: bool = False) -> list[str]:
    """Remove stale sandboxrun containers (all of them with `everything`); return ids."""
    api = client.api
    now = time.time()
    with engine_errors():
        found = retry_engine(api.containers)(all=True, filters={"label": f"{MANAGED}=1"})
    removed = []
    for c in found:
        if everything or is_stale(c.get("Labels") or {}, now):
            try:
                retry_engine(api.remove_container)(c["Id"], force=True, v=True)
                removed.append(c["Id"])
            except Exception as exc:  # a sweep never fails the run that does it
                logger.warning("could not remove container {}: {}", c["Id"][:12], exc)
    if removed:
        logger.info("reaped {} stale container(s)", len(removed))
    # Allowlist hooks' own networks whose run died before removing them (the proxy,
    # long-lived and without a deadline, went above only with `everything`). Imported
    # here: every cold run sweeps, in the background, and needs the module only now.
    from .allowlist import sweep_networks

    with engine_errors():
        sweep_networks(api, lambda labels: everything or is_stale(labels, now))
    # Racing first runs may have made several bridge networks: keep the one runs use.
    with engine_errors():
        remove_duplicates(api, older_than=0 if everything else DUPLICATE_AGE)
    return removed
