"""Latency of one hook, side by side in one run: bare subprocess, plain `docker run`,
sandboxrun's Python API and the `sandboxrun run` and `exec` commands. Interleaved, so machine noise
hits every variant alike. Reports percentiles and ratios to the bare subprocess.

    .venv/bin/python bench/latency.py [--runs 30]

Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sandboxrun import DockerBackend, HookFactory, Settings

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "examples" / "demo" / "app"
HOOK = WS / ".clinerules" / "hooks" / "PreToolUse"
EVENT = json.loads((ROOT / "examples" / "demo" / "event.json").read_text())
STDIN = json.dumps(EVENT).encode()


def variants(settings: Settings) -> dict[str, Callable[[], object]]:
    factory = HookFactory(settings, DockerBackend(settings))
    docker_run = [
        "docker", "run", "--rm", "-i", "--network", "none", "--read-only",
        "--cap-drop", "ALL", "--user", "65534:65534", "-v", f"{WS}:{WS}:ro", "-w", str(WS),
        settings.image, "/bin/sh", "-c", str(HOOK),
    ]  # fmt: skip
    cli = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--workspace", str(WS)]
    wrapped = [sys.executable, "-m", "sandboxrun", "exec", "--workspace", str(WS), "--", str(HOOK)]

    def run(cmd: list[str]) -> Callable[[], object]:
        return lambda: subprocess.run(cmd, input=STDIN, capture_output=True, check=True, cwd=WS)

    return {
        "bare subprocess": run(["/bin/sh", "-c", str(HOOK)]),
        "docker run --rm": run(docker_run),
        "sandboxrun API": lambda: factory.run("PreToolUse", EVENT, [str(WS)]),
        "sandboxrun run": run(cli),
        "sandboxrun exec": run(wrapped),
    }


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    todo = variants(Settings.load())
    times: dict[str, list[float]] = {name: [] for name in todo}
    for fn in todo.values():  # warm-up: page cache, image layers, imports
        fn()
    for _ in range(args.runs):
        for name, fn in todo.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    base = statistics.median(times["bare subprocess"])
    print(f"{'variant':<18} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'p50 / bare':>11}")
    for name, samples in times.items():
        p50 = statistics.median(samples)
        print(
            f"{name:<18} {p50:8.1f} {pct(samples, 0.9):8.1f} {pct(samples, 0.99):8.1f}"
            f" {p50 / base:10.1f}x"
        )
    print(f"({args.runs} interleaved runs each, the demo's bash+jq PreToolUse hook)")


if __name__ == "__main__":
    main()
