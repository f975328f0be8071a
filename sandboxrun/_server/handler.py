"""HTTP over the unix socket (peers of the server's own uid only) and TCP (a token on
every request but the probes): the standard library's http.server behind our front door
(`front.py`: bounded connections and threads, deadlines, hang-ups cancel)."""

from __future__ import annotations

import binascii
import contextlib
import hmac
import io
import json
import os
import socket
import socketserver
import struct
from http.server import BaseHTTPRequestHandler
from typing import Any

from .. import _cache
from .._log import logger
from .._types import Cancel
from .app import App, Decline
from .front import Front, Incoming, Outgoing, hung_up, watching

MAX_BODY = 64 << 20  # bytes of one request (an event, or the stdin of `exec`)
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class Handler(BaseHTTPRequestHandler):
    server: UnixServer | TCPServer
    server_version = "sandboxrun-serve"

    def setup(self) -> None:
        """The request's bytes from what the front door read already, then the socket,
        all by the request's deadline (`front.Incoming`)."""
        self.connection = self.request
        early, deadline = self.server.early(self.connection)
        self.rfile = io.BufferedReader(Incoming(self.connection, early, deadline))
        self.wfile = Outgoing(self.connection)  # type: ignore[assignment]

    def finish(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.wfile.flush()
        self.rfile.close()

    def do_GET(self) -> None:
        """The probes answer anyone who reaches the listener (on TCP they say nothing
        but yes or no: a kubelet sends no token); the metrics need the token on TCP."""
        app, tcp = self.server.app, self.server.token is not None
        if self.path == "/healthz":  # liveness: the process answers
            if tcp:
                return self._json(200, {"ok": True})
            return self._json(200, {
                "ok": True, "pid": os.getpid(), "uid": os.getuid(),
                "backends": app.backends, "inflight": app.inflight, "answered": app.answered,
                "started": app.started, "idleExit": app.idle_exit, "cache": _cache.stats(),
            })  # fmt: skip
        if self.path == "/readyz":  # readiness: hooks can run now
            why = app.ready()
            if why is None:
                return self._json(200, {"ready": True})
            # The engine's address and the image name stay on the unix socket (and in
            # the server's log): a TCP probe learns only which of the two it is.
            if tcp and not app.stopping:
                why = "the backend cannot run hooks now"
            return self._json(503, {"ready": False, "reason": why})
        if self.path == "/metrics":
            if not self._authorized():
                return None
            body, content_type = app.metrics.render()
            return self._send(200, body, content_type)
        return self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        command = {"/v1/run": "run", "/v1/exec": "exec"}.get(self.path)
        if command is None:
            return self._json(404, {"error": "not found"})
        if not self._authorized():
            return None
        try:
            request = self._request()
        except ValueError as exc:
            return self._json(400, {"error": str(exc)})
        app = self.server.app
        # Set when the client hangs up before its answer: its hooks are stopped, and
        # the answer goes nowhere (`front.watching`, checked once more at the end).
        gone = Cancel(probe=lambda: hung_up(self.connection))
        # TCP: a tenant's request, which may carry only some options and variables
        # (`app.TCP_OPTIONS`: a refused option is a 400 naming it). The unix socket's
        # peer is the server's own user (checked on accept): every option, as the
        # command would have run it itself.
        tcp = self.server.token is not None
        try:
            with app.counted(), watching(self.connection, gone):
                reply = app.answer(command, request, gone, tcp)
        except Decline as exc:
            return self._json(503, {"fallback": str(exc)})
        except (ValueError, TypeError) as exc:
            return self._json(400, {"error": f"bad request: {exc}"})
        if gone.is_set():
            logger.info("serve: its client went away: its hooks were stopped, no answer")
            self.close_connection = True
            return None
        self._json(200, {
            "stdout": _b64(reply.stdout), "stderr": _b64(reply.stderr),
            "exitCode": reply.exit_code,
        })  # fmt: skip
        return None

    def _request(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or -1)
        if not 0 <= length <= MAX_BODY:
            raise ValueError(f"Content-Length must be given and at most {MAX_BODY}")
        document = json.loads(self.rfile.read(length))
        if not isinstance(document, dict):
            raise ValueError("the request must be a JSON object")
        args, env = document.get("args", []), document.get("env", {})
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ValueError("env must map names to strings")
        verbose = document.get("verbose", 0)
        if not isinstance(verbose, int) or not 0 <= verbose <= 3:
            raise ValueError("verbose must be 0 to 3")
        if not isinstance(document.get("stdin", ""), str):
            raise ValueError("stdin must be base64 text")
        return {"args": args, "env": env, "verbose": verbose,
                "stdin": document.get("stdin", ""), "cwd": document.get("cwd")}  # fmt: skip

    def _authorized(self) -> bool:
        token = self.server.token
        if token is None:  # the unix socket: the peer was checked on accept
            return True
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token):
            return True
        self._json(401, {"error": "a valid token is required (Authorization: Bearer ...)"})
        return False

    def _json(self, status: int, document: dict[str, Any]) -> None:
        self._send(status, json.dumps(document).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("serve: {}", format % args)  # http.server's %-style line

    def address_string(self) -> str:
        return "unix" if isinstance(self.client_address, str) else str(self.client_address[0])


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


class _Quiet:
    """A client that hangs up before its answer (an agent that gave up on its hook) is
    one log line, not socketserver's traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.opt(exception=True).debug("serve: a request failed")
        logger.info("serve: a client went away before its answer")


class UnixServer(_Quiet, Front, socketserver.UnixStreamServer):
    """Only processes of the server's own user are answered (SO_PEERCRED)."""

    token: bytes | None = None
    app: App

    def verify_request(self, request: Any, client_address: Any) -> bool:
        _pid, uid, _gid = _PEERCRED.unpack(
            request.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
        )
        if uid != os.getuid():
            logger.warning("serve: refused a client of uid {}", uid)
            return False
        return True


class TCPServer(_Quiet, Front, socketserver.TCPServer):
    """For platforms: every request but the probes must carry the token."""

    allow_reuse_address = True
    token: bytes | None
    app: App
