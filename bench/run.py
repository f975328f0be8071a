"""sandboxrun's benchmark, in one run (issue 10): the same reference hooks through every
path, side by side, reported as percentiles and as ratios to the bare subprocess and to
plain `docker run`.

Hooks: the demo's bash + jq Cline guard (examples/demo/app) and a no-op hook (reads its
event, answers `{}`). Variants, interleaved so machine noise hits them alike:

    bare           the hook as a subprocess, as the agent runs it unsandboxed
    docker run     `docker run --rm -i` with equivalent hardening (no network, read-only
                   root and workspace, no capabilities, no-new-privileges, nobody, limits)
    cold CLI       `sandboxrun run` with the server off: Python start-up, a fresh container
    warm CLI       `sandboxrun run` answered by `sandboxrun serve` (its pool)

(both CLI rows start the command as `install` writes it into an agent's config:
`PYTHON -I SCRIPT`, `_install.command.launcher`)
    warm API       `HookFactory.run` on `DockerBackend(warm=True)`, in this process

Then: throughput with 8 invocations at a time, a burst of 32 from idle (the warm rows
start from a settled, idle pool of the default size, which grows with the burst), with
each invocation's percentiles; `check` replaying a short and a long events file, cold
(`pool_size = 0`) and as chosen (warm from `WARM_FROM` events); the host memory of an
idle pooled container (its cgroup, and the engine's per-container shim the cgroup does
not count); and sandboxrun's own peak RSS while a hook floods its stdout.

    .venv/bin/python bench/run.py [--runs 20] [--concurrency 8] [--gap 0.5]
                                  [--image IMAGE] [--json bench/results.json]

Needs a running engine and the hook image (scripts/setup). Takes a few minutes.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sandboxrun import DockerBackend, HookFactory, Settings
from sandboxrun._check.command import WARM_FROM
from sandboxrun._install.command import launcher

ROOT = Path(__file__).resolve().parents[1]
EVENT = json.loads((ROOT / "examples" / "demo" / "event.json").read_text())
STDIN = json.dumps(EVENT).encode()
NOOP = "#!/bin/sh\ncat >/dev/null\necho '{}'\n"
FLOOD = "#!/bin/sh\ncat >/dev/null\nexec yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
Call = Callable[[], object]
SANDBOXRUN = launcher()  # what an agent starts for each hook (install's launcher file execs it)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def workspace(root: Path, name: str, hook: str) -> Path:
    """A workspace with one Cline PreToolUse hook, readable by the hook's user (nobody
    when the bench runs as root)."""
    ws = root / name
    folder = ws / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    (folder / "PreToolUse").write_text(hook)
    (folder / "PreToolUse").chmod(0o755)
    for path in (ws, ws / ".clinerules", folder):
        path.chmod(0o755)
    return ws


@contextmanager
def server(config: Path, socket: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`sandboxrun serve` on its own socket, for the warm CLI rows; stopped at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandboxrun", "serve", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not socket.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("sandboxrun serve did not start (run it by hand to see why)")
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def variants(
    ws: Path, image: str, cold_cfg: Path, warm_cfg: Path, api: HookFactory
) -> dict[str, Call]:
    hook = str(ws / ".clinerules" / "hooks" / "PreToolUse")
    docker_run = [
        "docker", "run", "--rm", "-i", "--network", "none", "--read-only", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", "--user", "65534:65534", "--pids-limit", "256",
        "--memory", "512m", "--tmpfs", "/tmp", "--entrypoint", "",
        "-v", f"{ws}:{ws}:ro", "-w", str(ws), image, "/bin/sh", "-c", hook,
    ]  # fmt: skip

    def cli(config: Path) -> list[str]:
        return [*SANDBOXRUN, "run", "PreToolUse", "--config",
                str(config), "--workspace", str(ws)]  # fmt: skip

    def run(cmd: list[str]) -> Call:
        return lambda: subprocess.run(cmd, input=STDIN, capture_output=True, check=True, cwd=ws)

    return {
        "bare": run(["/bin/sh", "-c", hook]),
        "docker run": run(docker_run),
        "cold CLI": run(cli(cold_cfg)),
        "warm CLI": run(cli(warm_cfg)),
        "warm API": lambda: api.run("PreToolUse", EVENT, [str(ws)]),
    }


def sequential(todo: dict[str, Call], runs: int, gap: float) -> dict[str, list[float]]:
    for fn in todo.values():  # warm-up: page cache, image layers, the pools' first start
        fn()
        fn()
    times: dict[str, list[float]] = {name: [] for name in todo}
    for _ in range(runs):
        for name, fn in todo.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
            # An agent's calls are spaced (a model turn between two tool calls): the
            # pools refill between them, and a replacement's start (~0.2-0.4 s of the
            # engine's CPU) does not land on the next variant's run.
            time.sleep(gap)
    return times


def throughput(fn: Call, concurrency: int, per_worker: int) -> tuple[float, list[float]]:
    """Invocations per second with `concurrency` at a time, and each one's ms."""
    each: list[float] = []

    def worker() -> None:
        for _ in range(per_worker):
            t = time.perf_counter()
            fn()
            each.append((time.perf_counter() - t) * 1000)

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(worker) for _ in range(concurrency)]:
            future.result()
    return concurrency * per_worker / (time.perf_counter() - start), each


def idle_pools(api: DockerBackend) -> None:
    """Let the pools settle and sit idle: a burst then starts from an idle warm server
    (the API backend's pool is waited for; the server's gets the same seconds)."""
    pool = api._pool
    assert pool is None or pool.settle(120)
    time.sleep(3)


def check_replay(ws: Path, config: Path, events: Path) -> float:
    """Seconds for `sandboxrun check` to replay `events` in `ws` (the whole process)."""
    cmd = [sys.executable, "-m", "sandboxrun", "check", "--config", str(config), "--events",
           str(events), "--workspace", str(ws)]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, cwd=ws)
    return time.perf_counter() - start


def idle_container_memory(backend: DockerBackend) -> dict[str, float | None]:
    """MiB of an idle pooled container: its cgroup (docker stats' figure) and the PSS of
    its shim on the host, medians over the idle pool."""
    pool = backend._pool
    assert pool is not None and pool.settle(60)
    cgroup, shim = [], []
    for cid in pool.idle_ids():
        memory = backend.api.stats(cid, stream=False).get("memory_stats") or {}
        inactive = (memory.get("stats") or {}).get("inactive_file", 0)
        cgroup.append((memory.get("usage", 0) - inactive) / 2**20)
        pid = backend.api.inspect_container(cid)["State"]["Pid"]
        try:
            ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            rollup = Path(f"/proc/{ppid}/smaps_rollup").read_text().splitlines()
            shim += [int(ln.split()[1]) / 1024 for ln in rollup if ln.startswith("Pss:")]
        except (OSError, IndexError, ValueError):
            continue
    return {
        "containers": len(cgroup),
        "cgroup_mib": statistics.median(cgroup) if cgroup else None,
        "shim_pss_mib": statistics.median(shim) if shim else None,
    }


def peak_rss_mib(cmd: list[str], cwd: Path) -> float:
    """The peak RSS of a command run to its end (its own, not its children's)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=cwd)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(STDIN)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_maxrss / 1024


def hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def table(rows: dict[str, dict[str, float]], bare: float, docker: float) -> str:
    head = ("variant", "p50 ms", "p90 ms", "p99 ms", "x bare", "x docker")
    out = ["{:<11} {:>8} {:>8} {:>8} {:>7} {:>9}".format(*head)]
    for name, r in rows.items():
        out.append(
            f"{name:<11} {r['p50_ms']:8.1f} {r['p90_ms']:8.1f} {r['p99_ms']:8.1f}"
            f" {r['p50_ms'] / bare:6.2f}x {r['p50_ms'] / docker:8.2f}x"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="sequential runs per variant")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--per-worker", type=int, default=4, help="runs per concurrent worker")
    parser.add_argument("--gap", type=float, default=0.5,
                        help="seconds between two sequential runs (a pooled container's"
                             " replacement starts in them)")  # fmt: skip
    parser.add_argument("--image", help="the hook image (default: the settings')")
    parser.add_argument("--check-runs", type=int, default=3, help="runs per check row")
    parser.add_argument("--json", type=Path, help="also write the results here")
    in_tmp(bench, parser.parse_args(), "sandboxrun-bench-")


def compiled() -> None:
    """Write sandboxrun's bytecode, as pip does when it installs a package: from an
    editable checkout under PYTHONDONTWRITEBYTECODE (set on some machines), every
    process would compile each edited module again, which is no cost of sandboxrun's."""
    compileall.compile_dir(str(ROOT / "sandboxrun"), quiet=1)


def in_tmp(
    bench: Callable[[argparse.Namespace, Path], dict[str, Any]],
    args: argparse.Namespace,
    prefix: str,
) -> None:
    """Run `bench` in a temporary folder (readable by the hooks' user), removed after;
    its report also goes to `args.json` when given. The package's bytecode is brought
    up to date first (`compiled`)."""
    compiled()
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    tmp.chmod(0o755)
    try:
        report = bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


def configs(args: argparse.Namespace, tmp: Path) -> tuple[Path, Path, Path]:
    """(the server's socket, the cold config, the warm one), in `tmp`, for `args.image`."""
    socket = tmp / "run" / "serve.sock"
    (tmp / "run").mkdir(mode=0o700)
    common = f'image = "{args.image}"\n' if args.image else ""
    cold_cfg, warm_cfg = tmp / "cold.toml", tmp / "warm.toml"
    cold_cfg.write_text(common + 'serve = "off"\n')
    warm_cfg.write_text(common + f'serve = "use"\nserve_socket = "{socket}"\n')
    return socket, cold_cfg, warm_cfg


def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    socket, cold_cfg, warm_cfg = configs(args, tmp)
    common = f'image = "{args.image}"\n' if args.image else ""
    no_pool_cfg = tmp / "no-pool.toml"
    no_pool_cfg.write_text(common + 'serve = "off"\npool_size = 0\n')
    hooks = {
        "bash+jq": ROOT / "examples" / "demo" / "app",
        "no-op": workspace(tmp, "noop", NOOP),
    }
    flood_ws = workspace(tmp, "flood", FLOOD)
    settings = Settings.load(config=str(warm_cfg))
    report: dict[str, Any] = {"runs": args.runs, "latency": {}, "throughput": {}, "burst": {},
                              "check": {}}  # fmt: skip
    with server(warm_cfg, socket) as serve, DockerBackend(settings, warm=True) as warm:
        api = HookFactory(settings, warm)
        for name, ws in hooks.items():
            todo = variants(ws, settings.image, cold_cfg, warm_cfg, api)
            times = sequential(todo, args.runs, args.gap)
            rows = {
                v: {"p50_ms": statistics.median(s), "p90_ms": pct(s, 0.9), "p99_ms": pct(s, 0.99)}
                for v, s in times.items()
            }
            report["latency"][name] = rows
            bare, docker = rows["bare"]["p50_ms"], rows["docker run"]["p50_ms"]
            print(f"\n{name} hook, {args.runs} interleaved sequential runs each:")
            print(table(rows, bare, docker))
        todo = variants(hooks["bash+jq"], settings.image, cold_cfg, warm_cfg, api)
        total = args.concurrency * args.per_worker
        print(f"\nthroughput, a burst of {total}, {args.concurrency} at a time, from idle"
              " (bash+jq; each invocation's ms):")  # fmt: skip
        for name, fn in todo.items():
            idle_pools(warm)
            report["throughput"][name], each = throughput(fn, args.concurrency, args.per_worker)
            report["burst"][name] = {"p50_ms": statistics.median(each), "p90_ms": pct(each, 0.9),
                                     "p99_ms": pct(each, 0.99)}  # fmt: skip
        docker_tp = report["throughput"]["docker run"]
        for name, tp in report["throughput"].items():
            b = report["burst"][name]
            each = "  ".join(f"{q} {b[q + '_ms']:6.0f}" for q in ("p50", "p90", "p99"))
            print(f"  {name:<11} {tp:7.2f}/s  {tp / docker_tp:5.2f}x docker run   {each} ms")
        report["check"] = check_rows(hooks["bash+jq"], tmp, cold_cfg, no_pool_cfg, args.check_runs)
        report["pooled_container"] = idle_container_memory(warm)
        cli = [*SANDBOXRUN, "run", "PreToolUse", "--workspace",
               str(flood_ws)]  # fmt: skip
        report["flood_rss_mib"] = {
            "cold CLI": peak_rss_mib([*cli, "--config", str(cold_cfg)], flood_ws),
            "warm CLI (client)": peak_rss_mib([*cli, "--config", str(warm_cfg)], flood_ws),
            "serve (server)": hwm_mib(serve.pid),
        }
    memory = report["pooled_container"]
    print(
        f"\nidle pooled container ({memory['containers']} measured, median): cgroup"
        f" {memory['cgroup_mib'] or float('nan'):.2f} MiB, engine shim PSS"
        f" {memory['shim_pss_mib'] or float('nan'):.2f} MiB"
    )
    print("peak RSS while a hook floods stdout: " + ", ".join(
        f"{k} {v:.1f} MiB" for k, v in report["flood_rss_mib"].items()))  # fmt: skip
    print("\n" + "\n".join(targets(report)))
    return report


def check_rows(
    ws: Path, tmp: Path, auto_cfg: Path, cold_cfg: Path, runs: int
) -> dict[str, dict[str, float]]:
    """`check` on a short and a long events file: cold (`pool_size = 0`) against the
    choice it makes itself (warm from WARM_FROM events), interleaved, p50 seconds."""
    rows: dict[str, dict[str, float]] = {}
    print(f"\ncheck (bash+jq; whole processes, p50 of {runs}; warm from {WARM_FROM} events):")
    for n in (3, 2 * WARM_FROM):
        events = tmp / f"events-{n}.jsonl"
        allowed = {**EVENT, "preToolUse": {"toolName": "execute_command",
                                           "parameters": {"command": "ls"}}}  # fmt: skip
        events.write_text((json.dumps(allowed) + "\n") * n)
        cold, auto = [], []
        for _ in range(runs):
            cold.append(check_replay(ws, cold_cfg, events))
            auto.append(check_replay(ws, auto_cfg, events))
        row = {"cold_s": statistics.median(cold), "auto_s": statistics.median(auto)}
        rows[f"{n} events"] = row
        chose = "warm" if n >= WARM_FROM else "cold"
        print(f"  {n:>3} events: cold {row['cold_s']:6.2f} s, as chosen ({chose})"
              f" {row['auto_s']:6.2f} s: {row['auto_s'] / row['cold_s']:4.2f}x")  # fmt: skip
    return rows


def targets(report: dict[str, Any]) -> list[str]:
    """The issue's targets, each with its measured figure."""
    ref = report["latency"]["bash+jq"]
    tp = report["throughput"]
    memory = report["pooled_container"]
    pooled = (memory["cgroup_mib"] or 0) + (memory["shim_pss_mib"] or 0)
    checks = [
        ("warm API p50 <= 1.15x bare", ref["warm API"]["p50_ms"] / ref["bare"]["p50_ms"], 1.15),
        ("warm CLI p50 <= 1.5x bare", ref["warm CLI"]["p50_ms"] / ref["bare"]["p50_ms"], 1.5),
        ("cold CLI p50 <= 1.25x docker run",
         ref["cold CLI"]["p50_ms"] / ref["docker run"]["p50_ms"], 1.25),
        ("8 at a time >= 1.6x docker run (warm CLI)",
         -tp["warm CLI"] / tp["docker run"], -1.6),
        ("8 at a time >= 1.6x docker run (warm API)",
         -tp["warm API"] / tp["docker run"], -1.6),
        # A replay shorter than WARM_FROM runs cold as chosen too: one path timed twice,
        # its ratio is noise, and the target (keep cold where warm loses) holds by choice.
        *((f"check, {n}: as chosen <= cold", row["auto_s"] / row["cold_s"], 1.0)
          if int(n.split()[0]) >= WARM_FROM else
          (f"check, {n}: cold as chosen (one path timed twice:"
           f" {row['auto_s'] / row['cold_s']:.2f}x is noise)", 0.0, 1.0)
          for n, row in report["check"].items()),
        ("pooled container <= 5 MB (cgroup + shim)", pooled, 5.0),
        ("RSS under 100 MB while flooded", max(report["flood_rss_mib"].values()), 100.0),
    ]  # fmt: skip
    return [
        f"{'met   ' if value <= limit else 'MISSED'} {what}: {abs(value):.3f}"
        for what, value, limit in checks
    ]


if __name__ == "__main__":
    main()
