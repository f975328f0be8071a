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
    try:
        if args.answer == "agent":  # `run` as the agent's own hook (shims, forwarders)
            from .._install.answer import run_as_hook

            return run_as_hook(args, lambda a: _hook_result(a, opened))
        absolute_paths(args, current_folder())
        result = _run_result(args, Caller.this_process(), opened)
        emit(result.to_json())  # the answer is out (flushed) before we clean up
        if result.abandoned:  # stuck threads must not keep the agent waiting on us
            os._exit(0)
        return 0
    finally:
        for backend in opened:  # wait for the containers' removal: nothing outlives us
            backend.close()


def _hook_result(args: argparse.Namespace, opened: list[LazyBackend]) -> CombinedResult:
    """`run` as the agent's hook: its folder is the one the agent's event names, where
    the agent's events name it (`Caller.agent_hook`)."""
    caller = Caller.agent_hook(args.agent or "cline")
    absolute_paths(args, caller.cwd)
    return _run_result(args, caller, opened)


def _run_result(
    args: argparse.Namespace, caller: Caller, opened: list[LazyBackend]
) -> CombinedResult:
    return run_result(args, caller, lambda s: opened_backend(LazyBackend(s), opened))
