"""`sandboxrun exec -- COMMAND`: one hook command; its bytes and exit code passed through."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import _log
from .._runner.reply import Caller, absolute_paths, answer_exec
from .common import opened_backend, write_reply

if TYPE_CHECKING:
    from .._backends.base import Backend
    from .._settings import Settings


def command(args: argparse.Namespace) -> int:
    opened: list[Backend] = []
    pending: list[Callable[[int], None]] = []  # the record of a run the agent kills
    caller = dataclasses.replace(Caller.this_process(), if_killed=pending)

    def backend_for(settings: Settings) -> Backend:
        from .._backends.choose import make_backend

        return opened_backend(make_backend(settings), opened, pending)

    from .._runner.exec import may_add_lines

    absolute_paths(args, caller.cwd)
    with _log.hold() as held:  # our log lines go after the hook's stderr, if at all
        reply = answer_exec(args, caller, backend_for)
        if may_add_lines(args.agent, reply.stdout, reply.stderr, reply.exit_code):
            reply = dataclasses.replace(reply, stderr=reply.stderr + "".join(held).encode())
        held.clear()
        code = write_reply(reply)
        for backend in opened:
            backend.close()  # wait for the container's removal, after the output is out
    if held and may_add_lines(args.agent, reply.stdout, reply.stderr, reply.exit_code):
        sys.stderr.write("".join(held))
    return code
