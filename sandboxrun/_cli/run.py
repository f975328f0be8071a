"""`sandboxrun run HOOK`: the hooks of one event; the answer (JSON) on stdout."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .._answer import Caller, absolute_paths, current_folder, run_result
from .common import LazyBackend, emit, opened_backend

if TYPE_CHECKING:
    from .._types import CombinedResult


def command(args: argparse.Namespace) -> int:
    opened: list[LazyBackend] = []
    absolute_paths(args, current_folder())
    try:
        if args.answer == "agent":  # `run` as the agent's own hook (shims, forwarders)
            from .._install.answer import run_as_hook

            return run_as_hook(args, lambda a: _run_result(a, opened))
        result = _run_result(args, opened)
        emit(result.to_json())  # the answer is out (flushed) before we clean up
        if result.abandoned:  # stuck threads must not keep the agent waiting on us
            os._exit(0)
        return 0
    finally:
        for backend in opened:  # wait for the containers' removal: nothing outlives us
            backend.close()


def _run_result(args: argparse.Namespace, opened: list[LazyBackend]) -> CombinedResult:
    return run_result(args, Caller.this_process(), lambda s: opened_backend(LazyBackend(s), opened))
