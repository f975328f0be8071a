"""`sandboxrun check`: the CI gate (see `_check/`), on the backend the settings name."""

from __future__ import annotations

import argparse
import os

from .._check import command as _check
from .._errors import ConfigError
from .common import load, stop_cleanly


def command(args: argparse.Namespace) -> int:
    reviewed = {}
    if args.require_reviewed:  # every repository hook as approved in the pins, or held
        reviewed = {"review": "required",
                    "review_pins": os.path.abspath(args.pins) if args.pins else None}  # fmt: skip
    elif args.pins:
        raise ConfigError("--pins needs --require-reviewed")
    settings = load(
        args, agent=args.agent, timeout=args.timeout, image=args.image, runtime=args.runtime,
        fail_closed=not args.fail_open, backend=args.backend, **reviewed,
    )  # fmt: skip
    if args.require_reviewed and not settings.review_pins:
        raise ConfigError("--require-reviewed needs the approved pins: --pins FILE, or"
                          " review_pins in your config")  # fmt: skip
    from .._backends.choose import make_backend

    lines = _check.read(args, settings)
    warm = _check.worth_warming(lines, settings)  # long enough to gain from the pool
    with make_backend(settings, warm=warm) as backend:  # on leaving: wait for the removals
        stop_cleanly(backend)
        return _check.run_check(args, settings, backend, lines)
