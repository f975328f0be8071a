"""network = "allowlist": the hook's only way out is the proxy, which admits the listed
hosts and refuses the rest at once. Only hosts this test starts on its own network."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._backends.docker.allowlist import NET_LABEL, PROXY_LABEL, proxy_key

from .conftest import HookWriter, Runner

GVISOR_NONE = "Debian's runsc runs with --network=none: allowlist hooks have no network at all"
IMAGE = "sandboxrun/hooks:latest"
PROXY_IMAGE = "sandboxrun/proxy:latest"
DOMAINS = ["allowed.test"]
# Plain HTTP on all three ports (443 too): what reaches a port shows what the proxy let by.
SERVE = "python3 -m http.server 80 & python3 -m http.server 8080 & exec python3 -m http.server 443"


@pytest.fixture(scope="module")
def hosts(engine: DockerBackend) -> Iterator[dict[str, Any]]:
    """Two HTTP servers (ports 80, 443 and 8080) on a network of the test's own, as allowed.test
    and denied.test; removed afterwards with the proxy the test's settings started."""
    api = engine.api
    try:
        api.inspect_image(PROXY_IMAGE)
    except Exception:
        if os.environ.get("CI", "").lower() == "true":
            raise
        pytest.skip(f"no {PROXY_IMAGE}: run `sandboxrun images build`")
    tag = uuid.uuid4().hex[:8]
    net = api.create_network(f"sandboxrun-test-egress-{tag}", labels={"sandboxrun.test": tag})
    ids, ips = [], {}
    try:
        for alias in ("allowed.test", "denied.test"):
            cid = api.create_container(
                IMAGE, entrypoint=["/bin/sh", "-c"], command=[SERVE], user="0",
                name=f"sandboxrun-test-{alias.split('.')[0]}-{tag}",
                labels={"sandboxrun.test": tag},
                networking_config=api.create_networking_config(
                    {net["Id"]: api.create_endpoint_config(aliases=[alias])}
                ),
                host_config=api.create_host_config(network_mode=net["Id"]),
            )["Id"]  # fmt: skip
            ids.append(cid)
            api.start(cid)
            info = api.inspect_container(cid)["NetworkSettings"]["Networks"]
            ips[alias] = next(iter(info.values()))["IPAddress"]
        yield {"network": net["Id"], "ips": ips}
    finally:
        key = proxy_key(DOMAINS, net["Id"])
        mine = api.containers(all=True, filters={"label": f"{PROXY_LABEL}={key}"})
        for cid in ids + [c["Id"] for c in mine]:
            api.remove_container(cid, force=True)
        api.remove_network(net["Id"])


def _run(run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any], body: str) -> Any:
    hook(body)
    out = run_hooks(
        network="allowlist", allow_domains=DOMAINS, egress_network=hosts["network"], timeout=30
    )
    return out["hooks"][0]


@pytest.mark.runc_only(GVISOR_NONE)
def test_allowed_host_answers_through_the_proxy(
    run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """An allowed host answers 200 over HTTP and through a CONNECT tunnel to port 443."""
    report = _run(run_hooks, hook, hosts, """
        curl -sS -m 20 -o /dev/null -w 'plain=%{http_code} %{time_total}\\n' http://allowed.test/ >&2
        curl -sS -m 20 -p -o /dev/null -w 'tunnel=%{http_code}\\n' http://allowed.test:443/ >&2
        python3 -c 'import urllib.request as u; print("py=%d" % u.urlopen("http://allowed.test/").status)' >&2
        echo '{"cancel": false}'
    """)  # fmt: skip
    assert report["status"] == "completed", report
    for line in ("plain=200", "tunnel=200", "py=200"):
        assert line in report["stderr"], report
    assert "refusedHosts" not in report


@pytest.mark.runc_only(GVISOR_NONE)
def test_denied_host_is_refused_at_once_and_named(
    run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """A host not on the list gets a 403 well before the deadline, and the report names it."""
    report = _run(run_hooks, hook, hosts, """
        curl -sS -m 25 -o /dev/null -w 'plain=%{http_code} %{time_total}\\n' http://denied.test/ >&2
        curl -sS -m 25 https://denied.test/ 2>&1 | head -1 >&2
        echo '{"cancel": false}'
    """)  # fmt: skip
    assert "plain=403" in report["stderr"], report
    assert "CONNECT tunnel failed, response 403" in report["stderr"], report
    seconds = float(report["stderr"].split("plain=403 ")[1].split()[0])
    assert seconds < 10, report  # refused, not left to time out (observed: milliseconds)
    assert report["refusedHosts"] == ["denied.test"], report
    assert "denied.test" in report["error"], report


@pytest.mark.runc_only(GVISOR_NONE)
def test_only_port_80_for_plain_http_and_443_for_connect(
    run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """An allowed host is reachable by plain HTTP on port 80 only and by CONNECT on 443
    only: plain HTTP to 8080 or 443 and CONNECT to 80 or 8080 get the proxy's 403, and
    the report names each refused host:port (never the allowed host bare)."""
    report = _run(run_hooks, hook, hosts, """
        for url in http://allowed.test:8080/ http://allowed.test:443/ http://allowed.test:80/; do
          curl -sS -m 20 -o /dev/null -w "plain $url %{http_code}\n" $url >&2
        done
        for port in 80 8080 443; do
          curl -sS -m 20 -p -o /dev/null -w "connect $port %{http_code} %{http_connect}\n" \
            http://allowed.test:$port/ >&2 2>&1
        done
        echo '{"cancel": false}'
    """)  # fmt: skip
    err = report["stderr"]
    assert "plain http://allowed.test:8080/ 403" in err, report
    assert "plain http://allowed.test:443/ 403" in err, report
    assert "plain http://allowed.test:80/ 200" in err, report
    assert "connect 443 200 200" in err, report
    for port in ("80", "8080"):
        assert f"connect {port} 000 403" in err, report
    assert report["refusedHosts"] == [
        "allowed.test:8080", "allowed.test:443", "allowed.test:80"
    ], report  # fmt: skip


# Requests written by hand, so that no client lower-cases the host first.
CASE_PROBE = r"""
import os, socket
host, port = os.environ["HTTP_PROXY"].removeprefix("http://").split(":")
def ask(line):
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(line.encode() + b"\r\nHost: x\r\n\r\n")
        return s.recv(100).split(b"\r\n")[0].decode()
for line in ("GET http://ALLOWED.test/ HTTP/1.0", "GET http://Allowed.TEST.:80/ HTTP/1.0",
             "CONNECT ALLOWED.TEST.:443 HTTP/1.0", "GET http://DENIED.Test./ HTTP/1.0",
             "CONNECT Denied.TEST:443 HTTP/1.0"):
    print(line.split()[0], line.split()[1], "->", ask(line))
"""


@pytest.mark.runc_only(GVISOR_NONE)
def test_host_names_compare_in_any_case_and_with_a_trailing_dot(
    run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """`ALLOWED.test`, `Allowed.TEST.` (absolute) are the allowed host: admitted, never
    named refused; `DENIED.Test.` is refused and named normalised, as `denied.test`."""
    report = _run(run_hooks, hook, hosts, f"""
        python3 - <<'PY' >&2
{CASE_PROBE}
PY
        echo '{{"cancel": false}}'
    """)  # fmt: skip
    err = report["stderr"]
    assert "GET http://ALLOWED.test/ -> HTTP/1.0 200" in err, report
    assert "GET http://Allowed.TEST.:80/ -> HTTP/1.0 200" in err, report
    assert "CONNECT ALLOWED.TEST.:443 -> HTTP/1.0 200" in err, report
    assert "GET http://DENIED.Test./ -> HTTP/1.0 403" in err, report
    assert "CONNECT Denied.TEST:443 -> HTTP/1.0 403" in err, report
    assert report["refusedHosts"] == ["denied.test"], report


def test_no_direct_route_to_either_server(
    run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """Past the proxy there is no way out: neither server's address is reachable directly."""
    ips = hosts["ips"]
    report = _run(run_hooks, hook, hosts, f"""
        for ip in {ips['allowed.test']} {ips['denied.test']}; do
          if curl -sS -m 3 --noproxy '*' -o /dev/null http://$ip/; then echo reached=$ip >&2
          else echo blocked=$ip >&2; fi
        done
        echo '{{"cancel": false}}'
    """)  # fmt: skip
    assert "reached=" not in report["stderr"], report
    for ip in ips.values():
        assert f"blocked={ip}" in report["stderr"], report


def test_hook_networks_are_removed(
    engine: DockerBackend, run_hooks: Runner, hook: HookWriter, hosts: dict[str, Any]
) -> None:
    """Each hook's internal network goes when its run ends; the proxy stays, labelled."""
    _run(run_hooks, hook, hosts, "echo '{\"cancel\": false}'")
    left = engine.api.networks(filters={"label": f"{NET_LABEL}=1"})
    mine = [n for n in left if n.get("Labels", {}).get("sandboxrun.pid") == str(os.getpid())]
    assert not mine, mine
    key = proxy_key(DOMAINS, hosts["network"])
    proxies = engine.api.containers(filters={"label": f"{PROXY_LABEL}={key}"})
    assert len(proxies) == 1 and proxies[0]["Labels"]["sandboxrun.managed"] == "1"


# From inside the hook: Docker's embedded resolver (127.0.0.11) must hand an outside name
# to the container's own loopback (where the hook listens: a query that reached the host's
# resolver instead would never arrive there), and an ordinary lookup must fail at once.
DNS_PROBE = r"""
import socket, struct, sys, threading, time, uuid
got = []
listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
listener.bind(("127.0.0.1", 53))
listener.settimeout(5)
def listen():
    try:
        got.append(listener.recvfrom(512)[0])
    except OSError:
        pass
thread = threading.Thread(target=listen)
thread.start()
name = "probe-%s.sandboxrun.test" % uuid.uuid4().hex[:8]
query = struct.pack(">HHHHHH", 0x5342, 0x0100, 1, 0, 0, 0)
query += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
query += struct.pack(">HH", 1, 1)
ask = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
ask.sendto(query, ("127.0.0.11", 53))
thread.join()
print("forwarded-to-loopback=%s" % any(name.split(".")[0].encode() in g for g in got), file=sys.stderr)
listener.close()
started = time.monotonic()
try:
    socket.getaddrinfo("other-" + name, 80)
    print("lookup=resolved", file=sys.stderr)
except socket.gaierror:
    print("lookup=failed %.2f" % (time.monotonic() - started), file=sys.stderr)
"""


@pytest.mark.runc_only(GVISOR_NONE)
def test_allowlist_hooks_resolve_nothing_through_dockers_dns(
    engine: DockerBackend,
    run_hooks: Runner,
    hook: HookWriter,
    hosts: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CVE-2024-29018: on Docker 20.10 the embedded DNS of an internal network forwards
    outside names to the host's resolver, a way out past the proxy. The hook's container
    is configured to forward to its own loopback (checked before it is created: no probe
    runs otherwise), the query arrives there, and an ordinary lookup fails within seconds;
    the proxy (reached by address) still works."""
    create = engine.api.create_container

    def checked(**config: Any) -> Any:
        if config.get("labels", {}).get("sandboxrun.hook"):  # the hook, not the proxy
            assert config["host_config"].get("Dns") == ["127.0.0.1"], config["host_config"]
        return create(**config)

    monkeypatch.setattr(engine.api, "create_container", checked)
    report = _run(run_hooks, hook, hosts, f"""
        python3 - <<'PY'
{DNS_PROBE}
PY
        curl -sS -m 20 -o /dev/null -w 'plain=%{{http_code}}\\n' http://allowed.test/ >&2
        echo '{{"cancel": false}}'
    """)  # fmt: skip
    assert "forwarded-to-loopback=True" in report["stderr"], report
    assert "lookup=failed" in report["stderr"], report
    seconds = float(report["stderr"].split("lookup=failed ")[1].split()[0])
    assert seconds < 5, report  # at once (observed: milliseconds), not a resolver timeout
    assert "plain=200" in report["stderr"], report
