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

from __future__ import annotations

import argparse
import binascii
import contextlib
import ctypes
import hmac
import io
import json
import os
import signal
import socket
import socketserver
import stat
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from loguru import logger

from . import _client
from ._answer import Caller, Reply, answer_exec, answer_run, error_reply
from ._backends.base import Backend
from ._backends.image_tools import ImageTools
from ._errors import ConfigError
from ._settings import Settings
from ._types import ExecRequest, ExecResult
from ._userconfig import config_path, read_config

MAX_BODY = 64 << 20  # bytes of one request (an event, or the stdin of `exec`)
MAX_BACKENDS = 8  # distinct settings served from kept backends; more run on one-off ones
_CLONE_FS = 0x200
_PEERCRED = struct.Struct("3i")


class Decline(Exception):
    """Not answered here: the client runs the command cold (503)."""


class App:
    """What the server does, apart from HTTP: answer commands with kept backends."""

    def __init__(self, make_backend: Callable[[Settings], Backend]) -> None:
        self.make_backend = make_backend
        self._backends: dict[Settings, Backend] = {}
        self._lock = threading.Lock()
        self.inflight = 0
        self.answered = 0  # requests answered here (not declined)
        self.last_request = time.monotonic()

    def backend_for(self, settings: Settings) -> Backend:
        """The kept backend for these settings (made on first use), shared by every
        request with the same settings."""
        with self._lock:
            backend = self._backends.get(settings)
            if backend is None:
                backend = self.make_backend(settings)
                if len(self._backends) < MAX_BACKENDS:
                    self._backends[settings] = backend
        return _Shared(backend)

    @contextlib.contextmanager
    def counted(self) -> Iterator[None]:
        """Count a request in flight (for the idle exit and /healthz)."""
        with self._lock:
            self.inflight += 1
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1
                self.last_request = time.monotonic()

    @property
    def backends(self) -> int:
        return len(self._backends)

    def answer(self, command: str, request: dict[str, Any]) -> Reply:
        """Answer one `run` or `exec`, as the CLI would in the caller's process."""
        args = _parse(command, request)
        if args.no_serve:
            raise Decline("--no-serve")
        stdin = binascii.a2b_base64(request["stdin"])
        caller = Caller(lambda: stdin, request["env"])
        answer = answer_run if command == "run" else answer_exec
        with _in_folder(request["cwd"]), _captured_logs(args.verbose) as logs:
            if _serve_setting(args.config) not in ("auto", "start"):
                raise Decline("serve is off in the config file")
            try:
                reply = answer(args, caller, self.backend_for)
            except Exception as exc:  # ours: the line the CLI would print, exit 2
                reply = error_reply(exc)
        with self._lock:
            self.answered += 1
        return Reply(reply.stdout, logs.getvalue().encode() + reply.stderr, reply.exit_code)

    def close(self) -> None:
        """Close every kept backend (a backend without `close` has nothing to close)."""
        with self._lock:
            backends, self._backends = list(self._backends.values()), {}
        for backend in backends:
            close = getattr(backend, "close", None)
            if callable(close):
                try:
                    close()
                except Exception as exc:  # stopping never fails; `reap` sweeps the rest
                    logger.warning("could not close a backend: {}", exc)


class _Shared:
    """A kept backend as one request sees it. Everything but `abort` goes through.

    `_session` aborts the backend of an event that missed its overall deadline, which
    on a shared backend would remove other clients' containers too. Here it does not:
    the stalled event's containers are killed by their own deadline timers (the
    backend's), and labelled for `reap` should anything outlive them.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def check(self) -> None:
        self.backend.check()

    def run(self, request: ExecRequest) -> ExecResult:
        return self.backend.run(request)

    def image_tools(self) -> ImageTools | None:
        return self.backend.image_tools()

    def abort(self) -> None:
        logger.warning("an event missed its deadline; its containers end at their own")


def _parse(command: str, request: dict[str, Any]) -> argparse.Namespace:
    """The command line, parsed by the CLI's own parser; a line the parser refuses (or
    help) is left to the cold path, which prints what the parser says."""
    from ._cli import _parser

    argv = ["-v"] * request["verbose"] + [command, *request["args"]]
    sink = io.StringIO()
    try:
        with _ARGPARSE_LOCK, contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            return _parser().parse_args(argv)
    except SystemExit:
        raise Decline("arguments for the cold path to judge") from None


_ARGPARSE_LOCK = threading.Lock()  # argparse prints to sys.stderr, which we swap meanwhile


def _serve_setting(config: str | None) -> Any:
    try:
        return read_config(config or config_path(), required=config is not None).get(
            "serve", "auto"
        )
    except ConfigError:
        return "auto"  # the answer reports the broken file, as the cold path does


@contextlib.contextmanager
def _captured_logs(verbose: int) -> Iterator[io.StringIO]:
    """What the CLI would have logged on the caller's stderr while answering: this
    request's records, on its own thread (the hooks' report carries the rest)."""
    from ._cli import _log_format, log_level

    tag = uuid.uuid4().hex
    buffer = io.StringIO()
    sink = logger.add(
        buffer,
        level=log_level(verbose),
        format=_log_format,
        filter=lambda record: record["extra"].get("serve_request") == tag,
    )
    try:
        with logger.contextualize(serve_request=tag):
            yield buffer
    finally:
        logger.remove(sink)


# -- the caller's current directory, per thread ----------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_cwd_lock = threading.Lock()  # where threads cannot have their own folder: one at a time
_own_folder = threading.local()


@contextlib.contextmanager
def _in_folder(cwd: Any) -> Iterator[None]:
    """Run the block in the caller's current directory. A thread that unshares its
    filesystem attributes (unshare(CLONE_FS), Linux) has a current directory of its own,
    which the threads it starts inherit; where that is refused (a seccomp profile), the
    process's one is used under a lock, a request at a time."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ValueError("cwd must be an absolute path")
    if getattr(_own_folder, "ok", None) is None:
        _own_folder.ok = _libc.unshare(_CLONE_FS) == 0
    if _own_folder.ok:
        _chdir(cwd)
        yield
        return
    with _cwd_lock:
        before = os.getcwd()
        _chdir(cwd)
        try:
            yield
        finally:
            os.chdir(before)


def _chdir(cwd: str) -> None:
    try:
        os.chdir(cwd)
    except OSError as exc:
        raise Decline(f"cannot enter the caller's folder {cwd}: {exc.strerror}") from None


# -- HTTP ----------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _UnixServer | _TCPServer
    server_version = "sandboxrun-serve"

    def do_GET(self) -> None:
        if self.path != "/healthz":
            return self._json(404, {"error": "not found"})
        if not self._authorized():
            return None
        app = self.server.app
        self._json(200, {
            "ok": True, "pid": os.getpid(), "uid": os.getuid(),
            "backends": app.backends, "inflight": app.inflight, "answered": app.answered,
        })  # fmt: skip
        return None

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
        with app.counted():
            try:
                reply = app.answer(command, request)
            except Decline as exc:
                return self._json(503, {"fallback": str(exc)})
            except (ValueError, TypeError) as exc:
                return self._json(400, {"error": f"bad request: {exc}"})
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
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("serve: " + format, *args)

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


class _UnixServer(_Quiet, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
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


class _TCPServer(_Quiet, socketserver.ThreadingMixIn, socketserver.TCPServer):
    """For platforms: every request must carry the token."""

    allow_reuse_address = True
    token: bytes | None
    app: App


# -- the socket and the process --------------------------------------------------------


def prepare_socket(path: str) -> None:
    """Make the socket's folder (the user's, 0700) and clear a stale socket; refuse a
    path a live server answers on, or that is not a socket."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise ConfigError(f"socket folder {folder} is not a folder of yours")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)  # ours: only we may reach the socket
    try:
        sst = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(sst.st_mode):
        raise ConfigError(f"{path} exists and is not a socket: remove it or choose another")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(_client.CONNECT_TIMEOUT)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # nobody answers: a server that died left it
        return
    finally:
        probe.close()
    raise ConfigError(f"a server already answers at {path} (stop it first)")


def read_token(path: str) -> bytes:
    """The TCP token: a regular file of the user's that only the user can read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"token file {path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise ConfigError(f"token file {path} must be a file of yours with mode 0600")
        token = f.read(4096).strip()
    if len(token) < 16:
        raise ConfigError(f"token file {path}: the token must be at least 16 characters")
    return token


def serve(
    args: argparse.Namespace, make_backend: Callable[[Settings], Backend] | None = None
) -> int:
    """Run the server until SIGTERM/SIGINT (or `--idle-exit` seconds without requests)."""
    settings = Settings.load(config=args.config)
    path = args.socket or settings.serve_socket or _client.default_socket()
    listen = _address(args.listen) if args.listen else None
    token_file = args.token_file or settings.serve_token_file
    if listen and not token_file:
        raise ConfigError("--listen needs a token: --token-file FILE or serve_token_file")
    token = read_token(token_file) if listen and token_file else None
    if make_backend is None:
        from ._backends.docker.backend import DockerBackend

        make_backend = DockerBackend
    app = App(make_backend)
    servers = open_servers(app, path, listen, token)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: stop.set())
    for server in servers:
        threading.Thread(target=server.serve_forever, name="serve", daemon=True).start()
    where = " and ".join(_where(server) for server in servers)
    _say(f"serving on {where} (pid {os.getpid()})")
    idle = args.idle_exit
    while not stop.wait(0.5):
        if idle and app.inflight == 0 and time.monotonic() - app.last_request > idle:
            _say(f"no request for {idle:g}s: stopping")
            break
    close_servers(app, servers, path)
    _say("stopped")
    return 0


def open_servers(
    app: App, path: str, listen: tuple[str, int] | None = None, token: bytes | None = None
) -> list[_UnixServer | _TCPServer]:
    """The unix socket's server (and the TCP one, with its token), not yet serving."""
    prepare_socket(path)
    old = os.umask(0o177)  # the socket is born 0600: no moment where others may connect
    try:
        unix = _UnixServer(path, _Handler)
    except OSError as exc:  # a path too long for a socket, a read-only folder...
        raise ConfigError(f"cannot listen on {path}: {exc}") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    unix.app = app
    servers: list[_UnixServer | _TCPServer] = [unix]
    if listen:
        if not token:
            unix.server_close()
            os.unlink(path)
            raise ConfigError("TCP needs a token: never serve on TCP without one")
        try:
            tcp = _TCPServer(listen, _Handler)
        except OSError as exc:
            unix.server_close()
            os.unlink(path)
            raise ConfigError(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}") from None
        tcp.app, tcp.token = app, token
        servers.append(tcp)
    return servers


def close_servers(app: App, servers: list[_UnixServer | _TCPServer], path: str) -> None:
    """Stop taking requests, let those in flight finish, close the backends."""
    for server in servers:
        server.shutdown()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # new clients run cold from now on
    for server in servers:
        server.server_close()  # joins the requests' threads: each ends by its deadline
    app.close()


def _where(server: _UnixServer | _TCPServer) -> str:
    address: Any = server.server_address  # a path, or (host, port)
    return address if isinstance(address, str) else f"{address[0]}:{address[1]}"


def _say(line: str) -> None:
    """The server's own lifecycle lines, whatever the log level."""
    print(f"sandboxrun serve: {line}", file=sys.stderr, flush=True)


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ConfigError(f"--listen {text!r}: use HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def server_state(settings: Settings) -> tuple[bool | None, str, str]:
    """`doctor`'s line on the server: (ok, "serve", what was found); None: a warning."""
    path = settings.serve_socket or _client.default_socket()
    if settings.serve == "off":
        return True, "serve", 'off (serve = "off"): `run` and `exec` run cold'
    why = _client.untrusted(path)
    if why == "no socket":
        start = ' (the next `run` or `exec` starts it: serve = "start")'
        return True, "serve", f"not running at {path}{start if settings.serve == 'start' else ''}"
    if why:
        return None, "serve", f"not used: {path}: {why}"
    sock = _client.connect(path)
    if sock is None:
        return None, "serve", f"not answering at {path} (a stale socket, or not yours)"
    try:
        _status, health = _client.exchange(sock, "GET", "/healthz")
        pid, backends = health["pid"], health["backends"]
    except (OSError, ValueError, TypeError, KeyError) as exc:
        return None, "serve", f"not answering at {path}: {exc}"
    finally:
        sock.close()
    return True, "serve", f"running at {path} (pid {pid}, {backends} backend(s)): used by run, exec"
