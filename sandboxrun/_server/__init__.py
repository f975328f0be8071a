"""`sandboxrun serve`: a long-lived local server that answers `run` and `exec`.

The HTTP API (JSON in and out, bytes in base64), on a unix socket only the user can
open, and optionally on TCP behind a token (platforms):

    POST /v1/run   {"args": [HOOK, OPTION...], "cwd": DIR, "stdin": B64,
    POST /v1/exec   "env": {NAME: VALUE}, "verbose": N}
                   -> 200 {"stdout": B64, "stderr": B64, "exitCode": N}
                   -> 503 {"fallback": WHY}: not answered here; run the command cold
    GET  /healthz  -> 200 {"ok": true, "pid": N, "uid": N, "backends": N, "inflight": N,
                           "answered": N}

`args` are those of `sandboxrun run` or `exec` after the command's name, parsed by the
CLI's own parser; `cwd`, `stdin` and `env` (the variables sandboxrun reads: SANDBOXRUN_*,
CLAUDE_PLUGIN_ROOT) are the caller's. The answer is computed by the functions the CLI
calls in its own process (`_answer`), in a thread whose current directory is the
caller's, so it is the cold path's answer byte for byte.

The server owns its backends for its lifetime: one per distinct settings, normally
exactly one (`make_backend`, where warm pools plug in), closed when it stops. SIGTERM
stops accepting, lets in-flight requests finish within their own deadlines, closes the
backends and removes the socket. A SIGKILLed server leaves containers labelled with its
pid, which `sandboxrun reap` removes.

Standard library only (http.server over socketserver): one thread per request, which
the hooks' own container runs dwarf; no dependency for a local daemon.
"""

from .app import App, Decline
from .lifecycle import close_servers, open_servers, prepare_socket, serve, server_state

__all__ = ["App", "Decline", "close_servers", "open_servers", "prepare_socket", "serve",
           "server_state"]  # fmt: skip
