"""`sandboxrun reap`: remove what killed runs left behind."""

from __future__ import annotations

import argparse

from .common import load


def command(args: argparse.Namespace) -> int:
    from .._backends.docker.engine import connect
    from .._backends.docker.reaper import reap

    removed = reap(connect(load(args).docker_host), everything=args.all)
    print(f"removed {len(removed)} container(s)")
    return 0
