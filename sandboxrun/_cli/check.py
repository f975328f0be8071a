"""`sandboxrun check`: the CI gate (see `_check/`), on the backend the settings name."""

from __future__ import annotations

import argparse

from .._check import command as _check
from .common import load, stop_cleanly


def command(args: argparse.Namespace) -> int:
    settings = load(
        args, agent=args.agent, timeout=args.timeout, image=args.image, runtime=args.runtime,
        fail_closed=not args.fail_open, backend=args.backend,
    )  # fmt: skip
    from .._backends.choose import make_backend

    lines = _check.read(args, settings)
    warm = _check.worth_warming(lines, settings)  # long enough to gain from the pool
    with make_backend(settings, warm=warm) as backend:  # on leaving: wait for the removals
        stop_cleanly(backend)
        return _check.run_check(args, settings, backend, lines)
