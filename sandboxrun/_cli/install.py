"""`sandboxrun install` / `uninstall` (see `_install/`)."""

from __future__ import annotations

import argparse


def command(args: argparse.Namespace) -> int:
    from .._install.command import command

    return command(args)
