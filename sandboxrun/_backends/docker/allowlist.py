"""`network = "allowlist"`: a hook's only way out is an egress proxy that admits the
user's `allow_domains` and refuses the rest at once (403).

The proxy is Debian's tinyproxy (images/proxy.Dockerfile): kept, small, and it has what
this needs (FilterDefaultDeny with a file of domain patterns, CONNECT limited to 443, a
log naming each refused host). One long-lived proxy container per distinct allowlist and
egress network, keyed by a hash of both, started on first use and shared by every run.

Each hook gets a network of its own: `--internal` (no route out) and with no IPv4
address on the host's side of the bridge (`inhibit_ipv4`), so the docker host is not
reachable from it either; its only other member is the proxy. Not one shared internal
network with ICC off: ICC off also drops hook -> proxy, so hooks could either reach each
other or not reach the proxy. A network per hook costs a create, a connect and a remove.

Refused hosts are read back from the proxy's log: the lines from the hook network's
subnet, since the hook started.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import docker.errors
from docker.types import LogConfig

from ..._errors import EngineError
from ..._log import logger
from .engine import retry_engine

PORT = 8888
PROXY_LABEL = "sandboxrun.proxy"  # value: the allowlist's key
NET_LABEL = "sandboxrun.allownet"
NET_PREFIX = "sandboxrun-allow-"
NET_OPTIONS = {"com.docker.network.bridge.inhibit_ipv4": "true"}
# tinyproxy in the foreground, its config and filter from the environment (the domains
# are validated names, see _settings), on a tmpfs: the proxy's root is read-only.
_SCRIPT = (
    'printf "%s\\n" "$PROXY_CONF" >/tmp/tinyproxy.conf && printf "%s\\n" "$PROXY_FILTER"'
    " >/tmp/filter && exec tinyproxy -d -c /tmp/tinyproxy.conf"
)
_CONF = f"""Port {PORT}
Timeout 60
MaxClients 200
LogLevel Connect
FilterDefaultDeny Yes
FilterType fnmatch
Filter "/tmp/filter"
ConnectPort 443
DisableViaHeader Yes"""
_CONNECT = re.compile(r"Connect \(file descriptor (\d+)\): (\S+)")
_REQUEST = re.compile(r"Request \(file descriptor (\d+)\): (\S+) (\S+)")
_REFUSED = re.compile(r'Proxying refused on filtered domain "([^"]*)"')


def proxy_key(domains: Sequence[str], egress: str) -> str:
    """The proxy's identity: the sorted allowlist and the egress network."""
    text = json.dumps([sorted(set(domains)), egress])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def filter_text(domains: Sequence[str]) -> str:
    """tinyproxy's filter file: one fnmatch pattern per line, matched on the whole host."""
    return "\n".join(sorted(set(domains)))


def ensure_proxy(
    api: Any, *, image: str, domains: Sequence[str], egress: str, labels: Mapping[str, str]
) -> str:
    """The id of the running proxy for this allowlist, started if need be. Safe against
    concurrent runs: container names are unique, so the loser of a race finds the winner's."""
    key = proxy_key(domains, egress)
    found = _proxies(api, key)
    if not found:
        try:
            api.create_container(**_proxy_config(api, image, domains, egress, labels, key))
        except docker.errors.APIError as exc:
            if exc.status_code != 409:  # 409: another run made it a moment ago
                raise
        found = _proxies(api, key)
    if not found:
        raise EngineError(f"the allowlist proxy sandboxrun-proxy-{key} vanished; run again")
    proxy = found[0]
    if proxy.get("State") != "running":
        try:
            api.start(proxy["Id"])
        except docker.errors.APIError as exc:
            if exc.status_code != 304:  # 304: already started by a concurrent run
                raise
    return str(proxy["Id"])


def _proxies(api: Any, key: str) -> list[dict[str, Any]]:
    found = retry_engine(api.containers)(all=True, filters={"label": f"{PROXY_LABEL}={key}"})
    return sorted(found, key=lambda c: str(c["Id"]))


def _proxy_config(
    api: Any, image: str, domains: Sequence[str], egress: str, labels: Mapping[str, str],
    key: str,
) -> dict[str, Any]:  # fmt: skip
    host_config = api.create_host_config(
        network_mode=egress,
        read_only=True,
        tmpfs={"/tmp": "rw,nosuid,nodev,noexec,size=1m"},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        mem_limit=64 << 20,
        memswap_limit=64 << 20,
        pids_limit=64,
        # Bounded, and readable afterwards: refused hosts are read from it.
        log_config=LogConfig(type="local", config={"max-size": "5m", "max-file": "2"}),
    )
    return {
        "image": image,
        "entrypoint": ["/bin/sh", "-c", _SCRIPT],
        "command": [],
        "name": f"sandboxrun-proxy-{key}",
        "environment": {"PROXY_CONF": _CONF, "PROXY_FILTER": filter_text(domains)},
        "labels": {
            **labels,
            PROXY_LABEL: key,
            "sandboxrun.allow-domains": ",".join(sorted(set(domains)))[:1000],
        },
        "use_config_proxy": False,
        "host_config": host_config,
    }


@dataclass(frozen=True, slots=True)
class HookNet:
    """One hook's internal network, with the proxy on it."""

    network_id: str
    proxy_id: str
    proxy_ip: str
    subnet: str

    def environment(self) -> dict[str, str]:
        """The standard proxy variables, in both spellings tools read."""
        url = f"http://{self.proxy_ip}:{PORT}"
        env = {"HTTP_PROXY": url, "HTTPS_PROXY": url, "NO_PROXY": "localhost,127.0.0.1"}
        return {**env, **{k.lower(): v for k, v in env.items()}}


def attach(api: Any, proxy_id: str, labels: Mapping[str, str]) -> HookNet:
    """A new internal network for one hook, with the proxy connected to it."""
    name = NET_PREFIX + uuid.uuid4().hex[:12]
    net = api.create_network(
        name, driver="bridge", internal=True, options=NET_OPTIONS, labels={**labels, NET_LABEL: "1"}
    )
    net_id = str(net["Id"])
    try:
        api.connect_container_to_network(proxy_id, net_id)
        info = retry_engine(api.inspect_container)(proxy_id)["NetworkSettings"]["Networks"][name]
        ip, prefix = str(info["IPAddress"]), int(info["IPPrefixLen"])
    except Exception:
        detach(api, net_id, proxy_id)
        raise
    subnet = str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))
    return HookNet(net_id, proxy_id, ip, subnet)


def detach(api: Any, network_id: str, proxy_id: str | None) -> None:
    """Disconnect the proxy and remove the network; never raises (the sweep retries)."""
    try:
        if proxy_id:
            retry_engine(api.disconnect_container_from_network)(proxy_id, network_id, force=True)
        retry_engine(api.remove_network)(network_id)
    except Exception as exc:
        logger.warning("could not remove network {}: {}", network_id[:12], exc)


def refused_hosts(api: Any, net: HookNet, since: int) -> tuple[str, ...]:
    """The hosts the proxy refused to the hook on `net` since `since` (epoch seconds)."""
    try:
        raw = retry_engine(api.logs)(net.proxy_id, stdout=True, stderr=True, since=since)
    except Exception as exc:  # a report without names, never a failed run
        logger.warning("could not read the allowlist proxy's log: {}", exc)
        return ()
    return parse_refused(raw.decode("utf-8", "replace"), net.subnet)


def parse_refused(log: str, subnet: str) -> tuple[str, ...]:
    """Refused hosts that clients in `subnet` asked for, in order, from tinyproxy's log."""
    inside = ipaddress.ip_network(subnet)
    clients: dict[str, str] = {}
    asked: list[str] = []
    refused: set[str] = set()
    for line in log.splitlines():
        if m := _CONNECT.search(line):
            clients[m[1]] = m[2]
        elif m := _REQUEST.search(line):
            if _in(clients.get(m[1], ""), inside):
                asked.append(_host(m[2], m[3]))
        elif m := _REFUSED.search(line):
            refused.add(m[1].lower())
    return tuple(dict.fromkeys(h for h in asked if h in refused))


def _in(address: str, subnet: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    try:
        return ipaddress.ip_address(address) in subnet
    except ValueError:
        return False


def _host(method: str, target: str) -> str:
    if method.upper() == "CONNECT":
        return target.rsplit(":", 1)[0].strip("[]").lower()
    return (urlsplit(target).hostname or "").lower()


def sweep_networks(api: Any, doomed: Callable[[Mapping[str, str]], bool]) -> list[str]:
    """Remove the hook networks whose labels `doomed` condemns (their run is gone)."""
    removed = []
    for net in retry_engine(api.networks)(filters={"label": f"{NET_LABEL}=1"}):
        if not doomed(net.get("Labels") or {}):
            continue
        info = retry_engine(api.inspect_network)(net["Id"])
        for cid in info.get("Containers") or {}:
            try:
                api.disconnect_container_from_network(cid, net["Id"], force=True)
            except docker.errors.APIError as exc:
                logger.debug("disconnect {}: {}", cid[:12], exc)
        detach(api, str(net["Id"]), None)
        removed.append(str(net["Id"]))
    return removed
