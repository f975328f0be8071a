"""`sandboxrun exec -- COMMAND`: one hook command; its bytes and exit code passed through."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .._answer import Caller, answer_exec
from .common import opened_backend, write_reply

if TYPE_CHECKING:
    from .._backends.docker.backend import DockerBackend
    from .._settings import Settings


def command(args: argparse.Namespace) -> int:
    opened: list[DockerBackend] = []

    def backend_for(settings: Settings) -> DockerBackend:
        from .._backends.docker.backend import DockerBackend

        return opened_backend(DockerBackend(settings), opened)

    code = write_reply(answer_exec(args, Caller.this_process(), backend_for))
    for backend in opened:
        backend.close()  # wait for the container's removal, after the output is out
    return code
