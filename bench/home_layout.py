"""What the hook's home costs a run (issue #9 item 4): the API's run of `/bin/true`, with
the home at the user's path (an empty tmpfs and ten folder tmpfs) against the old single
tmpfs at /home/hook. Interleaved, so machine noise hits both alike.

    .venv/bin/python bench/home_layout.py [--runs 30] [--runtime runsc]

Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence

from sandboxrun import DockerBackend, Settings
from sandboxrun._backends.docker import spec as _docker
from sandboxrun._sandbox.mounts import HOOK_HOME, HomeLayout, home_layout
from sandboxrun._types import ExecRequest


def single_tmpfs(mounts: Sequence[str], state: bool = False) -> HomeLayout:
    """The layout before: one tmpfs at /home/hook."""
    return HomeLayout(HOOK_HOME, (HOOK_HOME,), (HOOK_HOME,))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--runtime", default=None)
    args = parser.parse_args()
    backend = DockerBackend(Settings.load(runtime=args.runtime))
    backend.check()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as ws:
        request = ExecRequest(argv=("/bin/true",), stdin=b"", workdir=ws, mounts=(ws,))
        layouts: dict[str, Callable[..., HomeLayout]] = {
            "single tmpfs at /home/hook": single_tmpfs,
            "home at the user's path": home_layout,
        }
        times: dict[str, list[float]] = {name: [] for name in layouts}
        for _ in range(args.runs):
            for name, layout in layouts.items():
                _docker.home_layout = layout  # type: ignore[attr-defined]
                started = time.perf_counter()
                assert backend.run(request).exit_code == 0
                times[name].append((time.perf_counter() - started) * 1000)
    for name, ms in times.items():
        ms.sort()
        p90 = ms[int(len(ms) * 0.9)]
        print(f"{name}: p50 {statistics.median(ms):.0f} ms, p90 {p90:.0f} ms ({len(ms)} runs)")


if __name__ == "__main__":
    main()
