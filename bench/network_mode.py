"""`NetworkMode=none` against the API's `NetworkDisabled: true`: the cost of `start`,
alternated in one run, and what each leaves inside the container.

    .venv/bin/python bench/network_mode.py [--runs 20] [--runtime runsc]

Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import docker

IMAGE = "sandboxrun/hooks:latest"
# What a hook could see of its network: every interface, its state, and any route.
PROBE = (
    'for i in /sys/class/net/*; do echo "if $(basename $i) $(cat $i/operstate)"; done;'
    " echo routes; tail -n +2 /proc/net/route; tail -n +2 /proc/net/ipv6_route;"
    " echo dev; tail -n +3 /proc/net/dev | cut -d: -f1;"
    " echo lo flags $(cat /sys/class/net/lo/flags);"
    " echo addr6; cat /proc/net/if_inet6; echo hosts; cat /etc/hosts; echo resolv;"
    " cat /etc/resolv.conf; echo hostname $(hostname); echo netns $(readlink /proc/self/ns/net)"
)


def create(api: Any, mode: tuple[str | None, bool], runtime: str | None, cmd: str) -> str:
    network_mode, disabled = mode
    host = api.create_host_config(network_mode=network_mode, runtime=runtime, cap_drop=["ALL"])
    return str(api.create_container(
        IMAGE, ["/bin/sh", "-c", cmd], entrypoint=[""], host_config=host,
        network_disabled=disabled, labels={"sandboxrun.bench": "1"},
    )["Id"])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--runtime", default=None)
    args = parser.parse_args()
    api = docker.APIClient(base_url="unix:///var/run/docker.sock")
    modes: dict[str, tuple[str | None, bool]] = {
        "NetworkMode=none": ("none", False),
        "NetworkDisabled": (None, True),
        "both": ("none", True),
    }
    for name, mode in modes.items():
        cid = create(api, mode, args.runtime, PROBE)
        try:
            api.start(cid)
            api.wait(cid)
            inspect = api.inspect_container(cid)
            print(
                f"== {name}: HostConfig.NetworkMode={inspect['HostConfig']['NetworkMode']!r}"
                f" Networks={sorted(inspect['NetworkSettings']['Networks'])}"
            )
            print(api.logs(cid).decode().rstrip())
        finally:
            api.remove_container(cid, force=True)
    starts: dict[str, list[float]] = {name: [] for name in modes}
    ends: dict[str, list[float]] = {name: [] for name in modes}  # start until exited
    for _ in range(args.runs):
        for name, mode in modes.items():
            cid = create(api, mode, args.runtime, "true")
            try:
                t = time.perf_counter()
                api.start(cid)
                starts[name].append((time.perf_counter() - t) * 1000)
                api.wait(cid)
                ends[name].append((time.perf_counter() - t) * 1000)
            finally:
                api.remove_container(cid, force=True)
    for name, samples in starts.items():
        print(
            f"{name:<18} start p50 {statistics.median(samples):6.1f} ms"
            f"  min {min(samples):6.1f}  max {max(samples):6.1f};"
            f"  start..exited p50 {statistics.median(ends[name]):6.1f} ms"
        )
    print(f"({args.runs} alternated runs of `true`)")


if __name__ == "__main__":
    main()
