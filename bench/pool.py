"""The warm path against the cold one, through the Python API, side by side in one run.

Time to answer one PreToolUse event (the demo's bash + jq hook) through `HookFactory.run`:
the bare subprocess, a cold `DockerBackend` (a container per run, started on demand) and
a warm one (`DockerBackend(warm=True)`: pooled containers started ahead of time).
Interleaved, so machine noise hits every variant alike. Then the host memory of an idle
pooled container: its cgroup's usage (what `docker stats` shows) and the proportional
set size of the engine's per-container shim process, which the cgroup does not count.

    .venv/bin/python bench/pool.py [--runs 30] [--image sandboxrun/hooks:latest] [--json F]

Needs a running engine and a hook image whose helper has the gate (label
sandboxrun.helper-gate=1; `sandboxrun images build`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandboxrun import DockerBackend, ExecRequest, HookFactory, Settings

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "examples" / "demo" / "app"
HOOK = WS / ".clinerules" / "hooks" / "PreToolUse"
EVENT = json.loads((ROOT / "examples" / "demo" / "event.json").read_text())
STDIN = json.dumps(EVENT).encode()


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timings(settings: Settings, runs: int, cold: DockerBackend, warm: DockerBackend) -> dict[
    str, list[float]
]:
    factories = {name: HookFactory(settings, b) for name, b in (("cold", cold), ("warm", warm))}

    def api(name: str) -> Callable[[], object]:
        def once() -> object:
            result = factories[name].run("PreToolUse", EVENT, [str(WS)])
            assert result.outcomes[0].warm == (name == "warm"), result.to_json()
            return result

        return once

    todo: dict[str, Callable[[], object]] = {
        "bare subprocess": lambda: subprocess.run(
            ["/bin/sh", "-c", str(HOOK)], input=STDIN, capture_output=True, check=True, cwd=WS
        ),
        "API cold": api("cold"),
        "API warm": api("warm"),
    }
    for fn in todo.values():  # warm-up: page cache, image layers, the first pool launch
        fn()
    times: dict[str, list[float]] = {name: [] for name in todo}
    for _ in range(runs):
        for name, fn in todo.items():
            if name == "API warm" and warm._pool:  # its pool had time to refill, as between
                warm._pool.settle(60)  # an agent's tool calls: the background is not timed
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def pss_kib(pid: int) -> int | None:
    """Proportional set size of a host process, KiB (None: not visible from here)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def idle_memory(warm: DockerBackend) -> dict[str, Any]:
    """Memory of the idle pooled containers: cgroup usage (docker stats' figure: usage
    less inactive file pages) and the PSS of each container's shim on the host."""
    assert warm._pool is not None and warm._pool.settle(60)
    cids = warm._pool.idle_ids()
    cgroup, shim = [], []
    for cid in cids:
        stats = warm.api.stats(cid, stream=False)
        mem = stats.get("memory_stats") or {}
        inactive = (mem.get("stats") or {}).get("inactive_file", 0)
        cgroup.append((mem.get("usage", 0) - inactive) / 1024)
        pid = warm.api.inspect_container(cid)["State"]["Pid"]
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        found = pss_kib(ppid)
        if found is not None:
            shim.append(found)
    return {
        "containers": len(cids),
        "cgroup_kib_median": statistics.median(cgroup) if cgroup else None,
        "shim_pss_kib_median": statistics.median(shim) if shim else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--image", help="hook image (default: the settings')")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    settings = Settings.load(image=args.image)
    cold = DockerBackend(settings)
    with DockerBackend(settings, client=cold.client, warm=True) as warm:
        runner = HookFactory(settings, warm).create("PreToolUse", [str(WS)], EVENT).runners[0]
        spec = runner.spec  # the request HookRunner.run makes for it (Cline: no env file)
        request = ExecRequest(argv=spec.argv, stdin=b"", workdir=spec.workdir,
                              mounts=spec.mounts, env=spec.env, timeout=runner.timeout)  # fmt: skip
        if not warm.prewarm(request, wait=120):
            raise SystemExit(f"{settings.image}: no pooled container (does its helper gate?)")
        times = timings(settings, args.runs, cold, warm)
        memory = idle_memory(warm)
    base = statistics.median(times["bare subprocess"])
    rows = {
        name: {"p50_ms": statistics.median(s), "p90_ms": pct(s, 0.9), "p99_ms": pct(s, 0.99)}
        for name, s in times.items()
    }
    print(f"{'variant':<16} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'p50 / bare':>11}")
    for name, row in rows.items():
        print(
            f"{name:<16} {row['p50_ms']:8.1f} {row['p90_ms']:8.1f} {row['p99_ms']:8.1f}"
            f" {row['p50_ms'] / base:10.2f}x"
        )
    print(f"({args.runs} interleaved runs each, the demo's bash+jq PreToolUse hook)")
    cg, shim = memory["cgroup_kib_median"], memory["shim_pss_kib_median"]
    print(
        f"idle pooled container ({memory['containers']} measured, median):"
        f" cgroup {cg / 1024 if cg is not None else float('nan'):.2f} MiB,"
        f" engine shim PSS {shim / 1024 if shim is not None else float('nan'):.2f} MiB"
    )
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "latency": rows, "memory": memory}))


if __name__ == "__main__":
    main()
