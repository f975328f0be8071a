"""Where the cold path's time goes, step by step: one fresh backend per invocation
(as `sandboxrun run` makes), each engine call timed, plus our own work around them.

    .venv/bin/python bench/steps.py [--runs 15]

Each invocation: settings load -> prepare (discovery, matching) -> preflight (image
inspect, runtime, stale sweep) -> create -> attach -> start -> (hook runs) -> wait,
inspect -> answer -> remove. The "answer" column is the time the caller waits for;
"remove" runs after it (in the background) and "close" is what the CLI still waits
at exit. Also the CLI's own start-up: `--help` and `run` for a workspace without hooks.
With `--warm`: where a warm API run's time goes instead, as a timeline (ms since the
call): the claim of a pooled container, the attach, the delivery, the hook's first output,
the end (the helper's final frame, or the stream's end and `wait` + `inspect` on an image
without it), the answer; against the bare hook, interleaved.
Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import compileall
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


def warm_timeline(runs: int, image: str | None) -> None:
    """The warm path's steps, p50 of `runs` (see the module's docstring)."""
    from docker.utils import socket as frames

    from sandboxrun import DockerBackend, HookFactory, Settings
    from sandboxrun._backends.docker import stream as module

    marks: list[tuple[str, float]] = []
    t0 = [0.0]

    def mark(name: str) -> None:
        marks.append((name, (time.perf_counter() - t0[0]) * 1000))

    settings = Settings.load(**({"image": image} if image else {}))
    backend = DockerBackend(settings, warm=True)
    for name in ("attach_socket", "inspect_container", "wait"):
        fn = getattr(backend.api, name)

        def wrapper(*a: Any, _fn: Callable[..., Any] = fn, _n: str = name, **kw: Any) -> Any:
            mark(f"{_n} sent")
            try:
                return _fn(*a, **kw)
            finally:
                mark(f"{_n} answered")

        setattr(backend.api, name, wrapper)

    def stream(sock: Any, tty: bool) -> Any:
        first = True
        for item in frames.frames_iter(sock, tty):
            if first:
                mark("first output (or the frame)")
                first = False
            yield item
        mark("stream ended")

    module.frames_iter = stream  # type: ignore[assignment]
    factory = HookFactory(settings, backend)
    bare = [str(WS / ".clinerules" / "hooks" / "PreToolUse")]
    samples: dict[str, list[float]] = defaultdict(list)
    for i in range(runs + 2):
        time.sleep(0.5)  # an agent's calls are spaced: the pool refills between them
        marks.clear()
        t0[0] = time.perf_counter()
        factory.run("PreToolUse", EVENT, [str(WS)])
        mark("answer")
        time.sleep(0.5)  # the replacement's launch, which the answer started, is not on it
        t = time.perf_counter()
        subprocess.run(bare, input=json.dumps(EVENT).encode(), capture_output=True, cwd=WS)
        if i < 2:
            continue  # warm-up: the pool's first start
        samples["bare hook (whole run)"].append((time.perf_counter() - t) * 1000)
        seen: dict[str, int] = defaultdict(int)
        for name, at in marks:
            seen[name] += 1
            samples[name + (f" #{seen[name]}" if seen[name] > 1 else "")].append(at)
    backend.close()
    print(f"{'warm API step (ms since the call, p50)':<44} {'':>8}")
    for name, values in sorted(samples.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"{name:<44} {statistics.median(values):8.1f}")
    print(f"({runs} runs, image {settings.image})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm", action="store_true", help="a warm API run's timeline")
    parser.add_argument("--image", help="the hook image (default: the settings')")
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "sandboxrun"), quiet=1)  # as bench/run.py `compiled`
    if args.warm:
        warm_timeline(args.runs, args.image)
        return
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
