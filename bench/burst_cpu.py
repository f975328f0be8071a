"""Where a burst's time goes (issue 19, target 5): the machine's CPU per event while 32
events run 8 at a time, by who spent it, for the bare hook, `docker run`, and the warm
API and CLI (bench/run.py's reference bash + jq guard, the same burst from idle).

    .venv/bin/python bench/burst_cpu.py [--runs 3] [--image IMAGE] [--json FILE]

A burst on 2 cores keeps both busy: throughput is then the CPU one event costs, and
this shows what that is made of. Read from /proc before and after each burst (user +
system time, a process's reaped children included): the engine (dockerd, containerd),
the per-container runtime with the hook itself (containerd-shim and what it reaps:
runc, the container's init and the hook's processes; a shim that exits is reaped by
pid 1, which is counted with it), the kernel's workers (kworker: namespace and cgroup
teardown, the filesystem), and Python (sandboxrun's server and clients, this harness).
Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, configs, idle_pools, in_tmp, server, throughput, variants

from sandboxrun import DockerBackend, HookFactory, Settings

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
GROUPS = ("engine", "runtime + hook", "kernel", "python", "other")
ROWS = ("bare", "docker run", "warm API", "warm CLI")


def group(pid: int, name: str) -> str:
    if name in ("dockerd", "containerd"):
        return "engine"
    if name.startswith("containerd-shim") or pid == 1:
        return "runtime + hook"
    if name.startswith(("kworker", "ksoftirqd", "rcu_", "kswapd")):
        return "kernel"
    return "python" if name.startswith("python") else "other"


def cpu_ticks() -> dict[int, tuple[str, int, int]]:
    """Every process's (name, start time, user + system ticks with its reaped
    children's). A kernel worker's name changes with its work: the start time tells
    the same process from a new one with the same pid."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
        except OSError:
            continue  # gone meanwhile
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()  # from field 3, `state`
        out[int(entry)] = (name, int(fields[19]), sum(int(v) for v in fields[11:15]))
    return out


def machine_busy() -> tuple[int, int]:
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # all but idle and iowait


def spent(
    before: dict[int, tuple[str, int, int]], after: dict[int, tuple[str, int, int]]
) -> dict[str, float]:
    """Ticks spent between the two readings, by group, in ms. A process that started
    and ended in between is counted in whoever reaped it."""
    out = dict.fromkeys(GROUPS, 0.0)
    for pid, (name, started, ticks) in after.items():
        old = before.get(pid)
        out[group(pid, name)] += (ticks - (old[2] if old and old[1] == started else 0)) * TICK_MS
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="bursts per row (medians)")
    parser.add_argument("--image", help="the hook image (default: the settings')")
    parser.add_argument("--json", type=Path, help="also write the results here")
    in_tmp(bench, parser.parse_args(), "sandboxrun-burst-cpu-")


def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    socket, cold_cfg, warm_cfg = configs(args, tmp)
    settings = Settings.load(config=str(warm_cfg))
    ws = ROOT / "examples" / "demo" / "app"
    report: dict[str, Any] = {}
    with server(warm_cfg, socket), DockerBackend(settings, warm=True) as warm:
        todo = variants(ws, settings.image, cold_cfg, warm_cfg, HookFactory(settings, warm))
        results: dict[str, list[tuple[float, float, dict[str, float]]]] = {r: [] for r in ROWS}
        for _ in range(args.runs):  # interleaved, as bench/run.py's rows
            for name in ROWS:
                todo[name]()  # warm-up: the server's pool, the page cache
                idle_pools(warm)
                before, (busy0, all0) = cpu_ticks(), machine_busy()
                rate, _ = throughput(todo[name], 8, 4)
                after, (busy1, all1) = cpu_ticks(), machine_busy()
                load = (busy1 - busy0) / max(all1 - all0, 1) * os.cpu_count()  # type: ignore[operator]
                results[name].append((rate, load, spent(before, after)))
    print("a burst of 32, 8 at a time, from idle (bash+jq); CPU ms per event, medians of"
          f" {args.runs}:")  # fmt: skip
    print(f"{'':12} {'events/s':>8} {'cores':>5} " + " ".join(f"{g:>14}" for g in GROUPS)
          + f" {'total':>7}")  # fmt: skip
    for name, runs in results.items():
        mid = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        per = {g: v / 32 for g, v in mid[2].items()}
        report[name] = {"events_per_s": mid[0], "cores_busy": mid[1], "cpu_ms_per_event": per}
        print(f"{name:12} {mid[0]:8.2f} {mid[1]:5.2f} "
              + " ".join(f"{per[g]:14.0f}" for g in GROUPS)
              + f" {sum(per.values()):7.0f}")  # fmt: skip
    return report


if __name__ == "__main__":
    main()
