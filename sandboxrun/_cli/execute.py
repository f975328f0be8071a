"""`sandboxrun exec -- COMMAND`: one hook command; its bytes and exit code passed through."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .._answer import Caller, absolute_paths, answer_exec
from .common import opened_backend, write_reply

if TYPE_CHECKING:
    from .._backends.base import Backend
    from .._settings import Settings


def command(args: argparse.Namespace) -> int:
    opened: list[Backend] = []

    def backend_for(settings: Settings) -> Backend:
        from .._backends.choose import make_backend

        return opened_backend(make_backend(settings), opened)

    caller = Caller.this_process()
    absolute_paths(args, caller.cwd)
    code = write_reply(answer_exec(args, caller, backend_for))
    for backend in opened:
        backend.close()  # wait for the container's removal, after the output is out
    return code
