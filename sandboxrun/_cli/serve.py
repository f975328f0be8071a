"""`sandboxrun serve` (see `_server/`)."""

from __future__ import annotations

import argparse


def command(args: argparse.Namespace) -> int:
    from .._server import serve

    return serve(args)
