"""`sandboxrun serve` (see `_server/`): the start-up checks on what requests may mount,
then the server."""

from __future__ import annotations

import argparse
import os


def command(args: argparse.Namespace) -> int:
    from .._errors import ConfigError
    from .._sandbox.mounts import own_files, serving
    from .._server import serve
    from .._settings import Settings, config_path

    config = os.path.abspath(args.config) if args.config else None
    settings = Settings.load(config=config)
    token = args.token_file or settings.serve_token_file
    # Without a token, serve itself refuses TCP first (that is the first thing to fix).
    if args.listen and token and not settings.allowed_roots:
        raise ConfigError(
            f"serve --listen needs allowed_roots in {config or config_path()}: the folders"
            ' whose workspaces TCP requests may name, e.g. allowed_roots = ["/srv/workspaces"]'
        )
    # The server's own files are never a root, whatever config a request names, and its
    # allowed_roots confine every request (`_sandbox.mounts.serving`).
    socket = os.path.dirname(os.path.abspath(args.socket)) if args.socket else ""
    token = os.path.abspath(token) if token else ""
    serving((*own_files(settings), config or "", socket, token), settings.allowed_roots)
    return serve(args)
