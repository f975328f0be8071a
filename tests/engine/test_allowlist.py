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
SERVE = "python3 -m http.server 80 & exec python3 -m http.server 443"


@pytest.fixture(scope="module")
def hosts(engine: DockerBackend) -> Iterator[dict[str, Any]]:
    """Two HTTP servers (ports 80 and 443) on a network of the test's own, as allowed.test
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
