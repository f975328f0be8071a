"""`sandboxrun run HOOK`: the hooks of one event; the answer (JSON) on stdout, or with
`--answer agent` the agent's own answer (`_runner.reply.answer_agent`)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .._runner.reply import Caller, answer_run, callers_paths, run_result
from .common import LazyBackend, emit, opened_backend, write_reply

if TYPE_CHECKING:
    from .._settings import Settings


def command(args: argparse.Namespace) -> int:
    opened: list[LazyBackend] = []
    caller = Caller.this_process()

    def backend_for(settings: Settings) -> LazyBackend:
        return opened_backend(LazyBackend(settings), opened)

    try:
        callers_paths(args, caller.cwd)
        if args.answer == "agent":  # `run` as the agent's own hook (shims, forwarders)
            reply = answer_run(args, caller, backend_for)
            code = write_reply(reply)
            abandoned = reply.abandoned
        else:
            result = run_result(args, caller, backend_for)
            emit(result.to_json())  # the answer is out (flushed) before we clean up
            code, abandoned = 0, result.abandoned
        if abandoned:  # stuck threads must not keep the agent waiting on us
            os._exit(code)
        return code
    finally:
        for backend in opened:  # wait for the containers' removal: nothing outlives us
            backend.close()
