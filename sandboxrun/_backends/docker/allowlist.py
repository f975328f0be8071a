"""`network = "allowlist"`: a hook's only way out is an egress proxy that admits the
user's `allow_domains` and refuses the rest at once (403).

The proxy is Debian's tinyproxy (images/proxy.Dockerfile): kept, small, and it has what
this needs (FilterDefaultDeny with a file of patterns, CONNECT limited to 443, a log
naming each refused request). One long-lived proxy container per distinct allowlist,
egress network and proxy config, keyed by a hash of them, started on first use and
shared by every run.

What it admits is an allowlist of (method, port) pairs per allowed host, matched on the
whole request target (`FilterURLs`), not on the host alone (which let plain HTTP reach
any port): plain HTTP (`http://host[:80]/...`) only to port 80, CONNECT (`host[:443]`)
only to 443. Host names compare case-insensitively (POSIX regexes with REG_ICASE in the
C locale: ASCII letters only) and may end in one dot (the same name, absolute); the
filter is anchored at both ends so no user@, port or path can smuggle another host or
port past it. tinyproxy's fnmatch filter was case-sensitive: `ALLOWED.test` was refused.

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
# CONNECT stays limited to 443 twice over: ConnectPort (checked before the filter) and
# the filter's own pattern. FilterCaseSensitive No is tinyproxy's default, said aloud.
_CONF = f"""Port {PORT}
Timeout 60
MaxClients 200
LogLevel Connect
FilterDefaultDeny Yes
FilterType ere
FilterURLs Yes
FilterCaseSensitive No
Filter "/tmp/filter"
ConnectPort 443
DisableViaHeader Yes"""
# The (method, port) pairs: the scheme a plain HTTP request names, and its only port.
PLAIN_PORT, CONNECT_PORT = "80", "443"
# tinyproxy's log lines (log.c): `LEVEL Mon DD HH:MM:SS.mmm [pid]: message`. Matched from
# the start of a line, and lines split on "\n" only: a request line is the client's
# bytes, and must not pass for a line of the proxy's own (a forged Connect or refusal).
_LINE = r"[A-Z]+ +\w+ +\d+ [\d:.]+ \[\d+\]: "
_CONNECT = re.compile(_LINE + r"Connect \(file descriptor (\d+)\): (\S+)")
_REQUEST = re.compile(_LINE + r"Request \(file descriptor (\d+)\): (\S+) (\S+)")
_REFUSED = re.compile(_LINE + r'Proxying refused on filtered (?:url|domain) "(.*)"\s*$')


def proxy_key(domains: Sequence[str], egress: str) -> str:
    """The proxy's identity: the sorted allowlist, the egress network and what the proxy
    is told (a proxy started with an older config is never reused for a newer one)."""
    text = json.dumps([sorted(set(domains)), egress, _CONF, filter_text(domains)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def filter_text(domains: Sequence[str]) -> str:
    """tinyproxy's filter file: per domain (validated: letters, digits, `_`, `-`, dots, a
    leading `*.`), one extended regex for plain HTTP to port 80 and one for CONNECT to
    443, each matched on the whole request target (module docstring)."""
    lines = []
    for domain in sorted(set(domains)):
        host = re.escape(domain.removeprefix("*."))
        if domain.startswith("*."):  # one or more labels before it, never the domain itself
            host = "([a-z0-9_-]+\\.)+" + host
        host += "\\.?"  # the absolute spelling, `pypi.org.`, is the same host
        # A `user:password@` before it: tinyproxy drops it (up to the first `@`) and goes
        # to the host after it, so it is admitted rather than refused under an allowed name.
        lines.append(f"^http://([^/@]*@)?{host}(:{PLAIN_PORT})?(/|$)")
        lines.append(f"^([^/@]*@)?{host}(:{CONNECT_PORT})?$")
    return "\n".join(lines)


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
    """What the proxy refused to clients in `subnet`, in order, from tinyproxy's log: each
    as `report_name` names it. The proxy is shared, and its refusal lines carry no client:
    a request of ours counts as refused when the proxy refused that very target (its
    filter decides on the target alone, so the same target is refused to everyone), or
    when it is a CONNECT to a port other than 443 (ConnectPort refuses those before the
    filter, logging no target). Requests in origin form (`GET /x` with a Host header)
    are judged by the proxy on a target it builds itself, so they are never named here."""
    inside = ipaddress.ip_network(subnet)
    clients: dict[str, str] = {}
    asked: list[tuple[str, str]] = []
    refused: set[str] = set()
    for line in log.split("\n"):
        if m := _CONNECT.match(line):
            clients[m[1]] = m[2]
        elif m := _REQUEST.match(line):
            if _in(clients.get(m[1], ""), inside):
                asked.append((m[2], m[3]))
        elif m := _REFUSED.match(line):
            refused.add(m[1])
    names = []
    for method, target in asked:
        split = _split(method, target)
        if split is None:
            continue
        host, port, default = split
        if target in refused or (default == CONNECT_PORT and port.isdigit()
                                 and int(port) != int(CONNECT_PORT)):  # fmt: skip
            names.append(report_name(host, port, default))
    return tuple(dict.fromkeys(names))


def _in(address: str, subnet: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    try:
        return ipaddress.ip_address(address) in subnet
    except ValueError:
        return False


def _split(method: str, target: str) -> tuple[str, str, str] | None:
    """(host, port as written or "", the pair's port) of a request target, split the way
    tinyproxy splits it (reqs.c: extract_url), or None for a target it builds itself."""
    if target[:7].lower() == "http://":
        rest, default = target[7:], PLAIN_PORT
    elif method == "CONNECT":  # tinyproxy compares the method case-sensitively too
        rest, default = target, CONNECT_PORT
    else:
        return None
    authority = rest.split("/", 1)[0].split("@", 1)[-1]  # no path, no user:password@
    host, colon, port = authority.rpartition(":")
    if not colon or "]" in port:  # no port, or the colons of an IPv6 literal
        host, port = authority, ""
    return host.removeprefix("[").removesuffix("]"), port, default


def report_name(host: str, port: str, default: str) -> str:
    """How `refusedHosts` names a refused request: the host in lower case (ASCII letters
    only, as the proxy compares them: `str.lower` would turn the Kelvin sign into `k`)
    without one trailing dot, and the port as written unless it is the pair's own. An
    allowed host is thus never named bare: refused for its port, it is `host:port`."""
    name = host.encode("utf-8", "surrogateescape").lower().decode("utf-8", "surrogateescape")
    name = name.removesuffix(".")
    return f"{name}:{port}" if port and port != default else name


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
