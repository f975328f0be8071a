"""`sandboxrun serve`: a long-lived local server that answers `run` and `exec`.

The HTTP API (JSON in and out, bytes in base64), on a unix socket only the user can
open, and optionally on TCP behind a token (platforms):

    POST /v1/run   {"args": [HOOK, OPTION...], "cwd": DIR, "stdin": B64,
    POST /v1/exec   "env": {NAME: VALUE}, "verbose": N}
                   -> 200 {"stdout": B64, "stderr": B64, "exitCode": N}
                   -> 503 {"fallback": WHY}: not answered here; run the command cold
    GET  /healthz  -> 200 {"ok": true, "pid": N, "uid": N, "backends": N, "inflight": N,
                           "answered": N}           liveness; on TCP only {"ok": true}
    GET  /readyz   -> 200 {"ready": true}           readiness: the backend can run hooks
                   -> 503 {"ready": false, "reason": WHY}  (or the server is stopping)
    GET  /metrics  -> 200 the Prometheus text format (`metrics.py`)

On TCP every request carries the token but the two probes, which a kubelet sends
without one and which say nothing but yes or no there. Logs go to stderr, as text or
as JSON lines (`serve --log-format json`, `_log.json_lines`).

`args` are those of `sandboxrun run` or `exec` after the command's name, parsed by the
CLI's own parser; `cwd`, `stdin` and `env` (the variables sandboxrun reads: SANDBOXRUN_*,
CLAUDE_PLUGIN_ROOT) are the caller's. Over TCP (a tenant's request) only the options
that pick within the server's config file (`app.TCP_OPTIONS`; others: 400) and the
tightening variable of `env` (`app.TCP_ENV`) are taken, and its hooks are given nothing of
the server's account beside the server's own hooks' folders (`_sandbox.mounts.for_tenant`).
The answer is computed by the functions the CLI calls in its own process (`_runner.reply`),
with the caller's folder passed explicitly
(`Caller.cwd`: relative paths are read against it, never against a current directory),
so it is the cold path's answer byte for byte, and requests from different folders are
answered at the same time. The server itself works from `/`.

The server owns its backends for its lifetime: one per distinct settings, normally
exactly one (`make_backend`, where warm pools plug in), closed when it stops. SIGTERM
removes the socket, turns /readyz and new requests to 503, lets in-flight requests
finish within their own deadlines, then stops listening and closes the backends (which
removes the warm pools' containers). A SIGKILLed server leaves containers labelled with its
pid, which `sandboxrun reap` removes.

The standard library's http.server over socketserver, behind a front door of ours
(`front.py`): one loop reads every connection's request head (no thread per idle
connection, a deadline for the whole request), POSTs get a bounded number of threads
(503 past them), probes never wait for one; a client that hangs up mid-request cancels
that request's sandboxes only. prometheus_client only renders /metrics.
"""

from .app import App, Decline
from .lifecycle import close_servers, open_servers, prepare_socket, serve, server_state

__all__ = ["App", "Decline", "close_servers", "open_servers", "prepare_socket", "serve",
           "server_state"]  # fmt: skip
