"""The network that `network = "bridge"` gives trusted hooks.

Not Docker's default bridge, where a hook reaches every other container of the host
(databases, the agent's own services): a user-defined bridge of our own, created on
first use, with inter-container traffic off (`enable_icc=false`), so two hooks on it
cannot reach each other, and Docker's isolation rules keep it from the containers of
every other network. The host's gateway address and the outside world stay reachable.

Two runs may create it at the same moment. The engine (API 1.41) does not keep network
names unique then, and a name held by two networks breaks every start on it ("network
is ambiguous"), even one that names the network by id. So each network gets a name of
its own (`sandboxrun-bridge-<random>`) and is found by its label: a race leaves two
sound networks, never a broken one, and runs settle on the lowest id. The others are
removed by the sweep at a later start, once unused and older than any race
(`DUPLICATE_AGE`), so never behind a run that just chose one.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import docker.errors

from ..._errors import EngineError
from ..._log import logger
from .engine import retry_engine

PREFIX = "sandboxrun-bridge-"
LABEL = "sandboxrun.network"
OPTIONS = {"com.docker.network.bridge.enable_icc": "false"}
DUPLICATE_AGE = 120.0  # seconds: a run attaches to the network it chose well within this


def ensure_network(api: Any) -> str:
    """The id of our bridge network, created if missing; safe against concurrent runs."""
    found = _ours(api)
    if not found:
        name = PREFIX + uuid.uuid4().hex[:12]
        api.create_network(name, driver="bridge", options=OPTIONS, labels={LABEL: "1"})
        found = _ours(api)
    if not found:
        raise EngineError(f"the bridge network sandboxrun made ({PREFIX}...) vanished; run again")
    return str(found[0]["Id"])


def _ours(api: Any) -> list[dict[str, Any]]:
    """Our networks (labelled, bridge, icc off) in a fixed order: the one to use leads."""
    nets = retry_engine(api.networks)(filters={"label": f"{LABEL}=1"})
    exact = [
        n for n in nets
        if str(n.get("Name", "")).startswith(PREFIX) and n.get("Driver") == "bridge"
        and (n.get("Options") or {}).get(next(iter(OPTIONS))) == "false"
    ]  # fmt: skip
    return sorted(exact, key=lambda n: str(n["Id"]))


def remove_duplicates(api: Any, older_than: float = DUPLICATE_AGE) -> list[str]:
    """Remove our networks other than the one runs settle on, unless in use or younger
    than `older_than` seconds; return their ids."""
    removed = []
    for net in _ours(api)[1:]:
        if _age(net) < older_than:
            continue
        try:
            api.remove_network(net["Id"])
            removed.append(str(net["Id"]))
        except docker.errors.APIError as exc:  # a hook still uses it
            logger.debug("kept network {}: {}", str(net["Id"])[:12], exc)
    return removed


def _age(net: Mapping[str, Any]) -> float:
    """Seconds since the engine made `net` (0 when it does not say)."""
    # Go writes nanoseconds, Python reads microseconds: "2024-05-01T10:00:00.123456789Z".
    text = re.sub(r"(\.\d{6})\d+", r"\1", str(net.get("Created", ""))).replace("Z", "+00:00")
    try:
        return time.time() - datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0
