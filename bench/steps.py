"""Where the cold path's time goes, step by step: one fresh backend per invocation
(as `sandboxrun run` makes), each engine call timed, plus our own work around them.

    .venv/bin/python bench/steps.py [--runs 15]

Each invocation: settings load -> prepare (discovery, matching) -> preflight (image
inspect, runtime, stale sweep) -> create -> attach -> start -> (hook runs) -> wait,
inspect -> answer -> remove. The "answer" column is the time the caller waits for;
"remove" runs after it (in the background) and "close" is what the CLI still waits
at exit. Also the CLI's own start-up: `--help` and `run` for a workspace without hooks.
Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "examples" / "demo" / "app"
EVENT = json.loads((ROOT / "examples" / "demo" / "event.json").read_text())
# Engine calls in the order a run makes them; `containers`/`networks` are the sweep's.
CALLS = (
    "inspect_image", "info", "containers", "networks", "create_container",
    "attach_socket", "start", "wait", "inspect_container", "remove_container",
)  # fmt: skip


TIMES: dict[str, float] = {}  # the current invocation's


def timed(api: Any) -> None:
    """Wrap the engine calls of `api` (docker's APIClient), once, to add up their time."""
    for name in CALLS:
        fn = getattr(api, name)

        @functools.wraps(fn)
        def wrapper(*a: Any, _fn: Callable[..., Any] = fn, _n: str = name, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return _fn(*a, **kw)
            finally:
                TIMES[_n] = TIMES.get(_n, 0.0) + (time.perf_counter() - t) * 1000

        setattr(api, name, wrapper)


def one(client: Any) -> dict[str, float]:
    from sandboxrun import DockerBackend, HookFactory, Settings

    TIMES.clear()
    times = TIMES
    t0 = time.perf_counter()
    settings = Settings.load()
    times["settings"] = (time.perf_counter() - t0) * 1000
    backend = DockerBackend(settings, client=client)  # a CLI connects afresh: not timed
    factory = HookFactory(settings, backend)
    t = time.perf_counter()
    runner, stdin = factory.prepare("PreToolUse", EVENT, [str(WS)])
    times["prepare"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    backend.check()
    times["preflight"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    result = runner.run(stdin)
    times["run"] = (time.perf_counter() - t) * 1000
    assert result.outcomes and result.outcomes[0].status == "completed", result
    times["answer"] = (time.perf_counter() - t0) * 1000
    t = time.perf_counter()
    close = getattr(backend, "close", None)  # older versions removed within the run
    if close is not None:
        close()
    times["close"] = (time.perf_counter() - t) * 1000
    return dict(times)


def cli_startup(runs: int) -> dict[str, float]:
    empty = Path("/tmp/sandboxrun-bench-empty")
    empty.mkdir(exist_ok=True)
    variants = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "sandboxrun --help": [sys.executable, "-m", "sandboxrun", "--help"],
        "run, no hooks": [sys.executable, "-m", "sandboxrun", "run", "PreToolUse",
                          "--workspace", str(empty), "--hooks-dir", str(empty)],
    }  # fmt: skip
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        for name, cmd in variants.items():
            t = time.perf_counter()
            subprocess.run(cmd, input=b"{}", capture_output=True, check=True, cwd=empty)
            samples[name].append((time.perf_counter() - t) * 1000)
    return {name: statistics.median(s) for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    from sandboxrun._backends.docker.engine import connect

    client = connect(None)
    timed(client.api)
    one(client)  # warm-up: image listing cache, page cache
    runs = [one(client) for _ in range(args.runs)]
    print(f"{'step (p50 ms)':<20} {'':>8}")
    for step in ("settings", "prepare", "preflight", *CALLS, "run", "answer", "close"):
        values = [r.get(step, 0.0) for r in runs]
        print(f"{step:<20} {statistics.median(values):8.1f}")
    print(f"({args.runs} invocations, each with a fresh backend; engine calls are summed;")
    print(" the hook itself runs between start and wait)")
    for name, p50 in cli_startup(args.runs).items():
        print(f"{name:<20} {p50:8.1f}")


if __name__ == "__main__":
    main()
