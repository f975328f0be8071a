"""What `sandboxrun serve` saves the command line, in one run: `run` and `exec` cold
(`--no-serve`) against the same commands through a server, interleaved; the same with
no hook at all (the client's and server's own cost, no container); the light client's
import time; one bare HTTP round trip to the server; and warm by default (issue 19): a
first call that finds no server (it answers cold and starts one), then the second call,
which that fresh server answers, each round on a new socket.

    .venv/bin/python bench/serve.py [--runs 15]

Needs a running engine and the hook image (scripts/setup). Starts its own server on a
socket in a temporary folder, so a server you run yourself is neither used nor touched.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "examples" / "demo" / "app"
HOOK = WS / ".clinerules" / "hooks" / "PreToolUse"
EVENT = (ROOT / "examples" / "demo" / "event.json").read_bytes()
CLI = str(Path(sys.executable).parent / "sandboxrun")  # the console script agents call


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], Path, str]:
    sock = str(folder / "run" / "serve.sock")
    config = folder / "config.toml"
    config.write_text(f'serve_socket = "{sock}"\n')
    server = subprocess.Popen([CLI, "serve", "--config", str(config)], stderr=subprocess.DEVNULL)
    from sandboxrun._client import connect

    deadline = time.monotonic() + 60
    while (probe := connect(sock)) is None:
        if time.monotonic() > deadline:
            raise SystemExit("serve did not start")
        time.sleep(0.1)
    probe.close()
    return server, config, sock


def import_ms(module: str, runs: int) -> float:
    """p50 of the cumulative import time of `module` in a fresh interpreter (ms)."""
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        total = 0
        for line in done.stderr.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$", line)
            if m and m[2] in (module, module.split(".")[0]):  # top-level entries only
                total += int(m[1])
        samples.append(total / 1000)
    return statistics.median(samples)


def round_trip_ms(sock: str, runs: int = 200) -> float:
    """p50 of connect + peer check + GET /healthz through the client's own code (ms)."""
    from sandboxrun._client import connect, exchange

    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        conn = connect(sock)
        assert conn is not None
        exchange(conn, "GET", "/healthz")
        conn.close()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def auto_start(folder: Path, runs: int) -> dict[str, list[float]]:
    """Per round, on a socket of its own: `run` with the server off, then the first call
    (starts a server, answers cold), then, once that server answers, the second call."""
    from sandboxrun._client import connect, exchange

    env = {k: v for k, v in os.environ.items() if k != "CI"}  # CI=true would not start one
    times: dict[str, list[float]] = {"run, serve off": [], "first call": [], "second call": []}

    def timed(name: str, config: Path) -> None:
        argv = [CLI, "run", "PreToolUse", "--config", str(config), "--workspace", str(WS)]
        start = time.perf_counter()
        subprocess.run(argv, input=EVENT, capture_output=True, check=True, env=env)
        times[name].append((time.perf_counter() - start) * 1000)

    off = folder / "off.toml"
    off.write_text('serve = "off"\n')
    for i in range(runs):
        sock = str(folder / f"a{i}" / "serve.sock")
        config = folder / f"auto{i}.toml"
        config.write_text(f'serve_socket = "{sock}"\nserve_idle = 60\n')
        timed("run, serve off", off)
        timed("first call", config)
        deadline = time.monotonic() + 60
        while (probe := connect(sock)) is None:
            if time.monotonic() > deadline:
                raise SystemExit("the first call started no server")
            time.sleep(0.05)
        pid = exchange(probe, "GET", "/healthz")[1]["pid"]
        probe.close()
        timed("second call", config)
        os.kill(pid, signal.SIGTERM)
        while os.path.exists(sock):  # stopped: its pool removed
            time.sleep(0.05)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="srb-", dir="/tmp"))
    empty = folder / "empty"  # a workspace without hooks: no container at all
    empty.mkdir()
    server, config, sock = start_server(folder)
    try:

        def cmd(*words: str, cold: bool, cwd: Path = WS) -> Callable[[], object]:
            command, *rest = words
            argv = [CLI, command, *(["--no-serve"] if cold else []), "--config", str(config)]
            return lambda: subprocess.run(
                [*argv, *rest], input=EVENT, capture_output=True, check=True, cwd=cwd
            )

        run = ("run", "PreToolUse", "--workspace", str(WS))
        none = ("run", "PreToolUse", "--workspace", str(empty))
        exe = ("exec", "--agent", "cline", "--", str(HOOK))
        todo = {
            "bare hook": lambda: subprocess.run(
                [str(HOOK)], input=EVENT, capture_output=True, cwd=WS
            ),
            "run, cold": cmd(*run, cold=True),
            "run, serve": cmd(*run, cold=False),
            "exec, cold": cmd(*exe, cold=True),
            "exec, serve": cmd(*exe, cold=False),
            "run no hook, cold": cmd(*none, cold=True),
            "run no hook, serve": cmd(*none, cold=False),
        }
        times: dict[str, list[float]] = {name: [] for name in todo}
        for fn in todo.values():  # warm-up: page cache, the server's engine connection
            fn()
        for _ in range(args.runs):
            for name, fn in todo.items():
                start = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - start) * 1000)
        trip = round_trip_ms(sock)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    print(f"{'variant':<20} {'p50 ms':>8} {'p90 ms':>8} {'p50 / cold':>11}")
    for name, samples in times.items():
        cold_name = name.replace("serve", "cold")
        ratio = statistics.median(samples) / statistics.median(times[cold_name])
        shown = f"{ratio:10.2f}x" if cold_name != name else ""
        print(f"{name:<20} {statistics.median(samples):8.1f} {pct(samples, 0.9):8.1f} {shown:>11}")
    print(f"({args.runs} interleaved runs each, whole processes, the demo's bash+jq hook)")
    auto = auto_start(folder, max(3, args.runs // 3))
    shutil.rmtree(folder, ignore_errors=True)
    off = statistics.median(auto["run, serve off"])
    print(f"\n{'warm by default':<20} {'p50 ms':>8} {'p90 ms':>8} {'p50 / off':>11}")
    for name, samples in auto.items():
        print(f"{name:<20} {statistics.median(samples):8.1f} {pct(samples, 0.9):8.1f}"
              f" {statistics.median(samples) / off:10.2f}x")  # fmt: skip
    print(
        f"({len(auto['first call'])} rounds, each on a new socket: a fresh server answers"
        " the second call)"
    )
    client = import_ms("sandboxrun._client", 7)
    print(f"client imports (sandboxrun._client, p50 of 7): {client:.1f} ms")
    print(f"  for comparison, http.client alone: {import_ms('http.client', 7):.1f} ms;"
          f" the cold CLI (sandboxrun._cli): {import_ms('sandboxrun._cli', 7):.1f} ms")  # fmt: skip
    print(f"round trip to the server (connect, SO_PEERCRED, GET /healthz): {trip:.2f} ms p50")
    load = os.getloadavg()[0]
    print(f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {load:.1f})")


if __name__ == "__main__":
    main()
