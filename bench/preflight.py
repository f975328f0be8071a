"""Cost of the preflight (`_sandbox.preflight`, `_image_tools`): the first probe of an image,
the disk cache read a `sandboxrun run` process pays once per event, and the check of
one hook against the listing in memory.

    .venv/bin/python bench/preflight.py [--runs 200]

Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sandboxrun import DockerBackend, Settings
from sandboxrun._backends.image_tools import load
from sandboxrun._sandbox.preflight import missing

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "examples" / "demo" / "app"
HOOK = WS / ".clinerules" / "hooks" / "PreToolUse"


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    settings = Settings.load()
    with tempfile.TemporaryDirectory() as cache:
        backend = DockerBackend(settings, cache_dir=cache)
        backend.check()
        start = time.perf_counter()
        tools = backend.image_tools()
        print(f"first probe (one container): {(time.perf_counter() - start) * 1000:.0f} ms")
        assert tools is not None
        image_id = backend._image_id
        rows = {
            "disk cache read (per process)": lambda: load(cache, image_id, settings.image),
            "check of a Cline file hook": lambda: missing(
                ("/bin/sh", "-c", str(HOOK)), str(WS), (str(WS),), {}, tools
            ),
            "check of `python3 /abs/x.py`": lambda: missing(
                ("/bin/sh", "-c", "python3 /nonexistent/x.py"), str(WS), (str(WS),), {}, tools
            ),
        }
        for name, fn in rows.items():
            t = sorted(timed(fn, runs))
            p95 = t[int(len(t) * 0.95) - 1]
            print(f"{name}: median {statistics.median(t):.0f} us, p95 {p95:.0f} us")


if __name__ == "__main__":
    main()
